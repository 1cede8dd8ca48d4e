#include "nmt/metrics/tokenizer.h"

#include <fmt/format.h>

#include "nmt/text/unicode.h"
#include "nmt/util/error.h"

namespace nmt::metrics {
namespace {

// Python's str.replace: non-overlapping, left to right.
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

}  // namespace

TokenizerKind parse_tokenizer(std::string_view name) {
  if (name == "13a") return TokenizerKind::k13a;
  if (name == "none") return TokenizerKind::kNone;
  throw UsageError(fmt::format("unknown tokenizer '{}' (expected 13a or none)", name));
}

std::string tokenizer_name(TokenizerKind kind) { return kind == TokenizerKind::k13a ? "13a" : "none"; }

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
  line = pad_symbols(" " + line + " ");
  // ([^0-9])([\.,]) -> "\1 \2 "
  line = sub_pairs(
      line, [](char a, char b) { return !is_digit(a) && is_period_or_comma(b); },
      [](std::string& out, char a, char b) { out += {a, ' ', b, ' '}; });
  // ([\.,])([^0-9]) -> " \1 \2"
  line = sub_pairs(
      line, [](char a, char b) { return is_period_or_comma(a) && !is_digit(b); },
      [](std::string& out, char a, char b) { out += {' ', a, ' ', b}; });
  // ([0-9])(-) -> "\1 \2 "
  line = sub_pairs(
      line, [](char a, char b) { return is_digit(a) && b == '-'; },
      [](std::string& out, char a, char b) { out += {a, ' ', b, ' '}; });

  std::string joined;
  joined.reserve(line.size());
  for (const std::string& token : text::python_split(line)) {
    if (!joined.empty()) joined.push_back(' ');
    joined += token;
  }
  return joined;
}

}  // namespace nmt::metrics
