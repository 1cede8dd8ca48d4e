// Strict UTF-8 and the Python str semantics in nmt::text.
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "nmt/text/unicode.h"

namespace nmt::text {
namespace {

TEST(Utf8, RoundTrip) {
  std::string s = "a\u00E9\u20AC\U0001F600";
  std::u32string u = decode_utf8(s);
  EXPECT_EQ(u, (std::u32string{U'a', 0xE9, 0x20AC, 0x1F600}));
  EXPECT_EQ(encode_utf8(u), s);
  EXPECT_EQ(decode_utf8(std::string("a\0b", 3)), (std::u32string{U'a', 0, U'b'}));  // NUL is a character
  EXPECT_EQ(encode_utf8(std::u32string{0xD800, 0x110000}), "\uFFFD\uFFFD");
}

TEST(Utf8, RejectsInvalidSequencesWithOffsets) {
  struct Bad {
    std::string bytes;
    size_t offset;
  };
  const std::vector<Bad> bad = {
      {"ab\x80", 2},                // stray continuation byte
      {"\xC0\xAF", 0},              // overlong '/'
      {"x\xC1\xBF", 1},             // overlong
      {"\xE0\x80\xAF", 0},          // overlong 3-byte
      {"\xF0\x80\x80\xAF", 0},      // overlong 4-byte
      {"ok\xED\xA0\x80", 2},        // surrogate U+D800
      {"\xED\xBF\xBF", 0},          // surrogate U+DFFF
      {"\xF4\x90\x80\x80", 0},      // U+110000
      {"\xF5\x80\x80\x80", 0},      // lead byte beyond U+10FFFF
      {"\xFF", 0},                  //
      {"abc\xE2\x82", 3},           // truncated at end
      {"\xE2\x82x", 0},             // truncated before ASCII
      {"\xC3", 0},                  // truncated 2-byte
      {"\xF0\x9F\x98", 0},          // truncated 4-byte
  };
  for (const Bad& b : bad) {
    auto problem = find_utf8_error(b.bytes);
    ASSERT_TRUE(problem.has_value()) << "accepted: " << testing::PrintToString(b.bytes);
    EXPECT_EQ(problem->offset, b.offset) << testing::PrintToString(b.bytes);
    EXPECT_FALSE(is_valid_utf8(b.bytes));
    std::u32string out;
    Utf8Problem p;
    EXPECT_FALSE(try_decode_utf8(b.bytes, out, &p));
    EXPECT_EQ(p.offset, b.offset);
    try {
      decode_utf8(b.bytes);
      ADD_FAILURE() << "no throw";
    } catch (const Utf8Error& e) {
      EXPECT_EQ(e.offset(), b.offset);
      EXPECT_EQ(e.exit_code(), 1);
    }
  }
  // Boundaries that are valid.
  for (const char* ok : {"\xC2\x80", "\xDF\xBF", "\xE0\xA0\x80", "\xED\x9F\xBF", "\xEE\x80\x80", "\xEF\xBF\xBF",
                         "\xF0\x90\x80\x80", "\xF4\x8F\xBF\xBF", "\xEF\xBB\xBF"})
    EXPECT_TRUE(is_valid_utf8(ok)) << testing::PrintToString(std::string(ok));
}

TEST(PythonSpace, ExactSet) {
  const std::u32string spaces = U"\t\n\v\f\r \x1C\x1D\x1E\x1F\u0085\u00A0\u1680\u2000\u2001\u2002\u2003\u2004"
                                U"\u2005\u2006\u2007\u2008\u2009\u200A\u2028\u2029\u202F\u205F\u3000";
  for (char32_t c : spaces) EXPECT_TRUE(is_python_space(c)) << std::hex << static_cast<uint32_t>(c);
  size_t count = 0;
  for (char32_t c = 0; c < 0x110000; ++c) count += is_python_space(c);
  EXPECT_EQ(count, spaces.size());
  for (char32_t c : {U'\u200B', U'\uFEFF', U'\u180E', U'a', U'\0', U'\u00AD'}) EXPECT_FALSE(is_python_space(c));
}

TEST(PythonStr, Rstrip) {
  EXPECT_EQ(python_rstrip(std::string_view("abc \t\r")), "abc");
  EXPECT_EQ(python_rstrip(std::string_view("abc\u00A0\u202F")), "abc");
  EXPECT_EQ(python_rstrip(std::string_view("  abc  def \u3000")), "  abc  def");
  EXPECT_EQ(python_rstrip(std::string_view("x\u200B")), "x\u200B");
  EXPECT_EQ(python_rstrip(std::string_view(" \t ")), "");
  EXPECT_EQ(python_rstrip(std::u32string_view(U"ab\u2029")), U"ab");
  EXPECT_EQ(python_strip(std::string_view("\u00A0 a b \n")), "a b");
  EXPECT_THROW(python_rstrip(std::string_view("a\xFF ")), Utf8Error);
}

TEST(PythonStr, Split) {
  EXPECT_EQ(python_split(std::string_view("  a\tb\u00A0c\u202Fd  e ")),
            (std::vector<std::string>{"a", "b", "c", "d", "e"}));
  EXPECT_TRUE(python_split(std::string_view("")).empty());
  EXPECT_TRUE(python_split(std::string_view(" \u3000 ")).empty());
  EXPECT_EQ(python_split(std::string_view("a\u200Bb")), (std::vector<std::string>{"a\u200Bb"}));
  EXPECT_EQ(python_split(std::u32string_view(U"x  y")), (std::vector<std::u32string>{U"x", U"y"}));
  EXPECT_EQ(remove_python_spaces(U" a b\u00A0c "), U"abc");
}

TEST(PythonStr, Lower) {
  EXPECT_EQ(python_lower(std::string_view("ÉTÉ À ÇA ÊTRE ÈRE Ÿ")), "été à ça être ère ÿ");
  EXPECT_EQ(python_lower(std::string_view("ABC def 123")), "abc def 123");
  EXPECT_EQ(python_lower(std::string_view("\u0130")), "i\u0307");  // one to two code points
  EXPECT_EQ(python_lower(std::string_view("\u1E9E")), "\u00DF");   // capital sharp s
  EXPECT_EQ(python_lower(std::string_view("\u2126")), "\u03C9");   // ohm sign
  EXPECT_EQ(python_lower(std::string_view("\U00010400")), "\U00010428");
  EXPECT_EQ(python_lower(std::string_view("\u01C5")), "\u01C6");  // titlecase digraph
}

TEST(PythonStr, FinalSigma) {
  // Expected values from CPython's str.lower().
  EXPECT_EQ(python_lower(std::string_view("ΟΔΟΣ")), "οδος");
  EXPECT_EQ(python_lower(std::string_view("ΟΔΟΣ ΣΑΣ")), "οδος σας");
  EXPECT_EQ(python_lower(std::string_view("Σ")), "σ");
  EXPECT_EQ(python_lower(std::string_view("ΑΣ.")), "ας.");
  EXPECT_EQ(python_lower(std::string_view("ΑΣ'Α")), "ασ'α");  // apostrophe is case-ignorable
  EXPECT_EQ(python_lower(std::string_view("ΑΣ1")), "ας1");
  EXPECT_EQ(python_lower(std::string_view("1Σ")), "1σ");
  EXPECT_EQ(python_lower(std::string_view("Α\u0301Σ")), "α\u0301ς");  // combining mark skipped
  EXPECT_EQ(python_lower(std::string_view("ΑΣΣ")), "ασς");
}

}  // namespace
}  // namespace nmt::text
