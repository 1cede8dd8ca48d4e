#pragma once
// Strict UTF-8 and the few Python str semantics that sacreBLEU (and our corpus readers)
// depend on: which code points are whitespace, str.rstrip(), str.split() and str.lower().
//
// Every function comes in two flavours: on decoded text (std::u32string_view, one element
// per code point) and on UTF-8 bytes (std::string_view). The UTF-8 flavours throw Utf8Error
// when the input is not valid UTF-8; validate first (find_utf8_error) to report a file
// position instead.
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "nmt/util/error.h"

namespace nmt::text {

// ---------------------------------------------------------------------------------------
// UTF-8

// Where and why a byte string stops being valid UTF-8.
struct Utf8Problem {
  size_t offset = 0;   // byte offset of the first byte of the offending sequence
  std::string reason;  // e.g. "overlong encoding", "truncated sequence"
};

// Thrown by the UTF-8 flavours below on invalid input (exit code 1 in the CLI).
class Utf8Error : public RuntimeError {
 public:
  explicit Utf8Error(const Utf8Problem& problem);
  size_t offset() const { return problem_.offset; }
  const std::string& reason() const { return problem_.reason; }

 private:
  Utf8Problem problem_;
};

// Strict validation, the same acceptance as Python's "utf-8" codec: rejects stray
// continuation bytes, overlong forms, surrogates (U+D800..U+DFFF), code points above
// U+10FFFF and sequences cut short. NUL bytes are ordinary characters.
// Returns std::nullopt when `bytes` is valid.
std::optional<Utf8Problem> find_utf8_error(std::string_view bytes);
inline bool is_valid_utf8(std::string_view bytes) { return !find_utf8_error(bytes); }

// Decodes `bytes` into code points; throws Utf8Error on the first invalid sequence.
std::u32string decode_utf8(std::string_view bytes);

// Non-throwing decode: returns false (and the problem, when asked) on invalid input;
// `out` then holds the code points before the error.
bool try_decode_utf8(std::string_view bytes, std::u32string& out, Utf8Problem* problem = nullptr);

// Encodes code points as UTF-8. Code points that cannot be encoded (surrogates, > U+10FFFF)
// become U+FFFD, so the output is always valid UTF-8.
std::string encode_utf8(std::u32string_view text);
void append_utf8(std::string& out, char32_t cp);

// ---------------------------------------------------------------------------------------
// Python str semantics

// Python's str.isspace() for one code point (what str.split() and str.strip() use):
// \t \n \v \f \r space, U+001C..U+001F, U+0085, U+00A0, U+1680, U+2000..U+200A, U+2028,
// U+2029, U+202F, U+205F, U+3000. Not U+200B or U+FEFF.
bool is_python_space(char32_t cp);
// The ASCII whitespace of C's isspace(): space, \t, \n, \v, \f, \r.
inline bool is_ascii_space(char c) { return c == ' ' || (c >= '\t' && c <= '\r'); }

// str.rstrip() with no argument: drops trailing Python whitespace. The UTF-8 flavour checks
// only as much as it reads: a line that ends in ASCII is not decoded (nor validated) before it.
std::u32string_view python_rstrip(std::u32string_view text);
std::string_view python_rstrip(std::string_view utf8);

// str.strip() with no argument.
std::u32string_view python_strip(std::u32string_view text);
std::string_view python_strip(std::string_view utf8);

// str.split() with no argument: fields separated by runs of Python whitespace, no empty
// fields (so "" and "  " give no fields).
std::vector<std::u32string> python_split(std::u32string_view text);
std::vector<std::string> python_split(std::string_view utf8);
// The same fields as views into `utf8`, appended to `fields` (cleared first): no allocation
// once `fields` has grown. ASCII bytes are tested directly, the rest decoded (and validated).
void python_split(std::string_view utf8, std::vector<std::string_view>& fields);

// "".join(text.split()): every Python whitespace code point removed.
std::u32string remove_python_spaces(std::u32string_view text);

// str.lower(): full Unicode lowercasing as the CPython that generated unicode_tables.inc
// does it (U+0130 becomes two code points), including the final-sigma rule: U+03A3 becomes
// U+03C2 when it ends a word (preceded by a cased letter, not followed by one, skipping
// case-ignorable characters such as apostrophes and combining marks), U+03C3 otherwise.
std::u32string python_lower(std::u32string_view text);
std::string python_lower(std::string_view utf8);

// The lowercase mapping of a single code point, without context (so U+03A3 -> U+03C3);
// appends one to three code points to `out`.
void append_lower(std::u32string& out, char32_t cp);

}  // namespace nmt::text
