#pragma once
// sacreBLEU's BLEU tokenizers that need no external library: "13a" (mteval-v13a.pl, the
// default), "intl" (mteval-v14 international), "zh", "char" and "none". The others ("ja-mecab",
// "ko-mecab" need MeCab and its dictionaries; "spm", "flores101", "flores200", "spBLEU-1K"
// need SentencePiece models that sacreBLEU downloads) are refused by parse_tokenizer().
// Input and output are UTF-8; the output is the tokens joined by single spaces, exactly as
// sacreBLEU returns it (so "" for an empty or all-whitespace line).
#include <string>
#include <string_view>
#include <vector>

namespace nmt::metrics {

enum class TokenizerKind { k13a, kNone, kIntl, kChar, kZh };

// "13a", "intl", "zh", "char" or "none"; throws UsageError with one line for anything else,
// naming what a known but unsupported sacreBLEU tokenizer would need.
TokenizerKind parse_tokenizer(std::string_view name);
// The name used in signatures ("13a", "intl", "zh", "char", "none").
std::string tokenizer_name(TokenizerKind kind);

// Python's str.replace: every non-overlapping `from`, left to right, becomes `to`.
std::string replace_all(std::string_view s, std::string_view from, std::string_view to);

// mteval-v13a: drop "<skipped>", join "-\n" line breaks, unescape &quot; &amp; &lt; &gt;,
// split off ASCII punctuation and symbols, split '.' and ',' unless they sit between digits
// ("3,5" and "1.000" stay whole), split '-' after a digit, then normalise whitespace
// (Python whitespace, so NBSP separates tokens). Throws text::Utf8Error on invalid UTF-8.
std::string tokenize_13a(std::string_view line);

// "none": the line unchanged.
inline std::string tokenize_none(std::string_view line) { return std::string(line); }

// mteval-v14 "intl": a space around punctuation (Unicode P) unless it sits between digits
// (Unicode N) on the side considered, around every symbol (Unicode S), then normalise
// whitespace. Categories from the `regex` module sacreBLEU uses (intl_tables.inc).
std::string tokenize_intl(std::string_view line);

// "char": every code point a token (whitespace disappears when BLEU splits the result).
std::string tokenize_char(std::string_view line);

// "zh": strip, a space around each Chinese character (sacreBLEU's ranges, quirks included),
// then 13a's punctuation rules without its escapes and padding.
std::string tokenize_zh(std::string_view line);

std::string tokenize(TokenizerKind kind, std::string_view line);

// Memory tokenize_words reuses from line to line; its words point into `text`.
struct TokenizerBuffers {
  std::string text, scratch, lowered;
  std::vector<std::string_view> words;
};

// tokenize(kind, line) split on Python whitespace: the words BLEU counts, as views into
// buffers.text, valid until the buffers are used again. For 13a and none nothing is allocated
// once the buffers have grown (a sentence's BLEU was ~8 us, half of it allocating the
// intermediate strings and words of the tokenizer).
const std::vector<std::string_view>& tokenize_words(TokenizerKind kind, std::string_view line,
                                                    TokenizerBuffers& buffers);

namespace detail {
// mteval's punctuation rules in two steps, shared with TER's normaliser (which puts its
// possessive rule between them). Byte-level, as the rules only look at ASCII.
std::string pad_mteval_symbols(std::string_view s);               // ([\{-\~\[-\` -\&\(-\+\:-\@\/]) -> " \1 "
std::string split_mteval_periods_and_dashes(std::string_view s);  // "." and "," unless by digits, "-" after a digit
}  // namespace detail

}  // namespace nmt::metrics
