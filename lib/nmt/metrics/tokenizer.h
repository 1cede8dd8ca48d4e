#pragma once
// sacreBLEU's BLEU tokenizers "13a" (mteval-v13a.pl, the default) and "none".
// Input and output are UTF-8; the output is the tokens joined by single spaces, exactly as
// sacreBLEU returns it (so "" for an empty or all-whitespace line).
#include <string>
#include <string_view>

namespace nmt::metrics {

enum class TokenizerKind { k13a, kNone };

// "13a" or "none"; throws UsageError for anything else.
TokenizerKind parse_tokenizer(std::string_view name);
// The name used in signatures ("13a", "none").
std::string tokenizer_name(TokenizerKind kind);

// mteval-v13a: drop "<skipped>", join "-\n" line breaks, unescape &quot; &amp; &lt; &gt;,
// split off ASCII punctuation and symbols, split '.' and ',' unless they sit between digits
// ("3,5" and "1.000" stay whole), split '-' after a digit, then normalise whitespace
// (Python whitespace, so NBSP separates tokens). Throws text::Utf8Error on invalid UTF-8.
std::string tokenize_13a(std::string_view line);

// "none": the line unchanged.
inline std::string tokenize_none(std::string_view line) { return std::string(line); }

inline std::string tokenize(TokenizerKind kind, std::string_view line) {
  return kind == TokenizerKind::k13a ? tokenize_13a(line) : tokenize_none(line);
}

}  // namespace nmt::metrics
