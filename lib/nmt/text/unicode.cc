#include "nmt/text/unicode.h"

#include <algorithm>
#include <cstdint>

#include <fmt/format.h>

namespace nmt::text {
namespace {

struct LowerRun {
  char32_t first, last;
  int step;
  int delta;
};
struct LowerSpecial {
  char32_t cp;
  char32_t out[3];
};
struct CodeRange {
  char32_t first, last;
};

#include "nmt/text/unicode_tables.inc"

template <size_t N>
bool in_ranges(const CodeRange (&table)[N], char32_t cp) {
  auto it = std::upper_bound(std::begin(table), std::end(table), cp,
                             [](char32_t c, const CodeRange& r) { return c < r.first; });
  return it != std::begin(table) && cp <= std::prev(it)->last;
}

bool is_case_ignorable(char32_t cp) { return in_ranges(kCaseIgnorable, cp); }
bool is_cased(char32_t cp) { return in_ranges(kCased, cp); }

// One step of strict decoding at `pos`. On success stores the code point, advances `pos`
// and returns nullptr; otherwise returns the reason and leaves `pos` at the bad sequence.
const char* decode_one(std::string_view s, size_t& pos, char32_t& cp) {
  const auto byte = [&](size_t i) { return static_cast<unsigned char>(s[i]); };
  unsigned char b0 = byte(pos);
  if (b0 < 0x80) {
    cp = b0;
    ++pos;
    return nullptr;
  }
  size_t len;
  char32_t value;
  // Bounds for the second byte, which is where overlongs, surrogates and > U+10FFFF show.
  unsigned char lo = 0x80, hi = 0xBF;
  if (b0 < 0xC2) {
    return b0 < 0xC0 ? "unexpected continuation byte" : "overlong encoding";
  } else if (b0 < 0xE0) {
    len = 2;
    value = b0 & 0x1F;
  } else if (b0 < 0xF0) {
    len = 3;
    value = b0 & 0x0F;
    if (b0 == 0xE0) lo = 0xA0;  // below: overlong
    if (b0 == 0xED) hi = 0x9F;  // above: surrogates
  } else if (b0 < 0xF5) {
    len = 4;
    value = b0 & 0x07;
    if (b0 == 0xF0) lo = 0x90;  // below: overlong
    if (b0 == 0xF4) hi = 0x8F;  // above: beyond U+10FFFF
  } else {
    return "invalid start byte";
  }
  for (size_t i = 1; i < len; ++i) {
    if (pos + i >= s.size()) return "truncated sequence";
    unsigned char b = byte(pos + i);
    unsigned char min = i == 1 ? lo : 0x80, max = i == 1 ? hi : 0xBF;
    if (b < min || b > max) {
      if (i == 1 && b >= 0x80 && b <= 0xBF) {
        if (b0 == 0xED) return "surrogate code point";
        if (b0 == 0xF4) return "code point above U+10FFFF";
        return "overlong encoding";
      }
      return "invalid continuation byte";
    }
    value = (value << 6) | (b & 0x3F);
  }
  cp = value;
  pos += len;
  return nullptr;
}

// Decodes the code point at `pos` (advancing it) or throws Utf8Error.
char32_t next_or_throw(std::string_view s, size_t& pos) {
  char32_t cp;
  if (const char* why = decode_one(s, pos, cp)) throw Utf8Error(Utf8Problem{pos, why});
  return cp;
}

// CPython's handle_capital_sigma: final form when a cased letter precedes (skipping
// case-ignorables) and no cased letter follows (skipping case-ignorables).
char32_t lower_sigma(std::u32string_view text, size_t i) {
  size_t j = i;
  bool found = false;
  while (j > 0) {
    --j;
    if (!is_case_ignorable(text[j])) {
      found = true;
      break;
    }
  }
  bool final_sigma = found && is_cased(text[j]);
  if (final_sigma) {
    for (size_t k = i + 1; k < text.size(); ++k) {
      if (!is_case_ignorable(text[k])) {
        final_sigma = !is_cased(text[k]);
        break;
      }
    }
  }
  return final_sigma ? U'\u03C2' : U'\u03C3';
}

}  // namespace

Utf8Error::Utf8Error(const Utf8Problem& problem)
    : RuntimeError(fmt::format("invalid UTF-8 at byte {}: {}", problem.offset, problem.reason)),
      problem_(problem) {}

std::optional<Utf8Problem> find_utf8_error(std::string_view bytes) {
  size_t pos = 0;
  char32_t cp;
  while (pos < bytes.size()) {
    // ASCII fast path.
    if (static_cast<unsigned char>(bytes[pos]) < 0x80) {
      ++pos;
      continue;
    }
    if (const char* why = decode_one(bytes, pos, cp)) return Utf8Problem{pos, why};
  }
  return std::nullopt;
}

bool try_decode_utf8(std::string_view bytes, std::u32string& out, Utf8Problem* problem) {
  out.clear();
  out.reserve(bytes.size());
  size_t pos = 0;
  char32_t cp;
  while (pos < bytes.size()) {
    if (const char* why = decode_one(bytes, pos, cp)) {
      if (problem) *problem = Utf8Problem{pos, why};
      return false;
    }
    out.push_back(cp);
  }
  return true;
}

std::u32string decode_utf8(std::string_view bytes) {
  std::u32string out;
  Utf8Problem problem;
  if (!try_decode_utf8(bytes, out, &problem)) throw Utf8Error(problem);
  return out;
}

void append_utf8(std::string& out, char32_t cp) {
  if (cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) cp = 0xFFFD;
  if (cp < 0x80) {
    out.push_back(static_cast<char>(cp));
  } else if (cp < 0x800) {
    out.push_back(static_cast<char>(0xC0 | (cp >> 6)));
    out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  } else if (cp < 0x10000) {
    out.push_back(static_cast<char>(0xE0 | (cp >> 12)));
    out.push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  } else {
    out.push_back(static_cast<char>(0xF0 | (cp >> 18)));
    out.push_back(static_cast<char>(0x80 | ((cp >> 12) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  }
}

std::string encode_utf8(std::u32string_view text) {
  std::string out;
  out.reserve(text.size());
  for (char32_t cp : text) append_utf8(out, cp);
  return out;
}

bool is_python_space(char32_t cp) {
  if (cp < 0x80) return (cp >= 0x09 && cp <= 0x0D) || (cp >= 0x1C && cp <= 0x20);
  switch (cp) {
    case 0x85: case 0xA0: case 0x1680: case 0x2028: case 0x2029:
    case 0x202F: case 0x205F: case 0x3000:
      return true;
    default:
      return cp >= 0x2000 && cp <= 0x200A;
  }
}

std::u32string_view python_rstrip(std::u32string_view text) {
  size_t end = text.size();
  while (end > 0 && is_python_space(text[end - 1])) --end;
  return text.substr(0, end);
}

std::string_view python_rstrip(std::string_view utf8) {
  // The common line ends in ASCII: step back over ASCII whitespace to an ASCII non-space.
  // (Validation is not rstrip's job: every caller's next step decodes the whole line.)
  size_t back = utf8.size();
  const auto ascii_space = [](unsigned char b) { return (b >= 0x09 && b <= 0x0D) || (b >= 0x1C && b <= 0x20); };
  while (back > 0 && static_cast<unsigned char>(utf8[back - 1]) < 0x80 && ascii_space(utf8[back - 1])) --back;
  if (back == 0 || static_cast<unsigned char>(utf8[back - 1]) < 0x80) return utf8.substr(0, back);
  // Otherwise a forward scan (UTF-8 cannot be decoded backwards strictly): remember where the
  // last non-space code point ends.
  size_t pos = 0, end = 0;
  while (pos < utf8.size()) {
    const unsigned char byte = static_cast<unsigned char>(utf8[pos]);
    if (byte < 0x80) {  // most bytes: no decoding
      ++pos;
      if (!((byte >= 0x09 && byte <= 0x0D) || (byte >= 0x1C && byte <= 0x20))) end = pos;
      continue;
    }
    char32_t cp = next_or_throw(utf8, pos);
    if (!is_python_space(cp)) end = pos;
  }
  return utf8.substr(0, end);
}

std::u32string_view python_strip(std::u32string_view text) {
  text = python_rstrip(text);
  size_t begin = 0;
  while (begin < text.size() && is_python_space(text[begin])) ++begin;
  return text.substr(begin);
}

std::string_view python_strip(std::string_view utf8) {
  utf8 = python_rstrip(utf8);
  size_t pos = 0, begin = 0;
  while (pos < utf8.size()) {
    if (!is_python_space(next_or_throw(utf8, pos))) break;
    begin = pos;
  }
  return utf8.substr(begin);
}

std::vector<std::u32string> python_split(std::u32string_view text) {
  std::vector<std::u32string> fields;
  size_t i = 0;
  while (i < text.size()) {
    while (i < text.size() && is_python_space(text[i])) ++i;
    size_t start = i;
    while (i < text.size() && !is_python_space(text[i])) ++i;
    if (i > start) fields.emplace_back(text.substr(start, i - start));
  }
  return fields;
}

void python_split(std::string_view utf8, std::vector<std::string_view>& fields) {
  fields.clear();
  const size_t n = utf8.size();
  const auto byte = [&utf8](size_t i) { return static_cast<unsigned char>(utf8[i]); };
  const auto ascii_space = [](unsigned char b) { return (b >= 0x09 && b <= 0x0D) || (b >= 0x1C && b <= 0x20); };
  const auto ascii_word = [&ascii_space](unsigned char b) { return b < 0x80 && !ascii_space(b); };
  size_t pos = 0, start = 0;
  bool in_field = false;
  while (pos < n) {
    if (in_field) {  // the common case, a word's ASCII bytes, without decoding
      while (pos < n && ascii_word(byte(pos))) ++pos;
      if (pos == n) break;
    }
    const size_t here = pos;
    bool space;
    if (byte(pos) < 0x80) space = ascii_space(byte(pos++));
    else space = is_python_space(next_or_throw(utf8, pos));
    if (space && in_field) {
      fields.push_back(utf8.substr(start, here - start));
      in_field = false;
    } else if (!space && !in_field) {
      start = here;
      in_field = true;
    }
  }
  if (in_field) fields.push_back(utf8.substr(start));
}

std::vector<std::string> python_split(std::string_view utf8) {
  std::vector<std::string_view> fields;
  python_split(utf8, fields);
  return std::vector<std::string>(fields.begin(), fields.end());
}

std::u32string remove_python_spaces(std::u32string_view text) {
  std::u32string out;
  out.reserve(text.size());
  for (char32_t cp : text)
    if (!is_python_space(cp)) out.push_back(cp);
  return out;
}

void append_lower(std::u32string& out, char32_t cp) {
  if (cp < 0x80) {
    out.push_back(cp >= 'A' && cp <= 'Z' ? cp + 32 : cp);
    return;
  }
  for (const LowerSpecial& s : kLowerSpecials) {
    if (s.cp == cp) {
      for (char32_t c : s.out)
        if (c) out.push_back(c);
      return;
    }
  }
  auto it = std::upper_bound(std::begin(kLowerRuns), std::end(kLowerRuns), cp,
                             [](char32_t c, const LowerRun& r) { return c < r.first; });
  if (it != std::begin(kLowerRuns)) {
    const LowerRun& run = *std::prev(it);
    if (cp <= run.last && (cp - run.first) % run.step == 0) {
      out.push_back(static_cast<char32_t>(static_cast<int64_t>(cp) + run.delta));
      return;
    }
  }
  out.push_back(cp);
}

std::u32string python_lower(std::u32string_view text) {
  std::u32string out;
  out.reserve(text.size());
  for (size_t i = 0; i < text.size(); ++i) {
    if (text[i] == U'\u03A3')
      out.push_back(lower_sigma(text, i));
    else
      append_lower(out, text[i]);
  }
  return out;
}

std::string python_lower(std::string_view utf8) {
  // ASCII-only lines (the common case) need no decoding.
  if (std::all_of(utf8.begin(), utf8.end(), [](char c) { return static_cast<unsigned char>(c) < 0x80; })) {
    std::string out(utf8);
    for (char& c : out)
      if (c >= 'A' && c <= 'Z') c = static_cast<char>(c + 32);
    return out;
  }
  return encode_utf8(python_lower(decode_utf8(utf8)));
}

}  // namespace nmt::text
