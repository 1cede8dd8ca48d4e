#include "nmt/text/word_alignment.h"

#include <algorithm>
#include <cctype>

#include <fmt/format.h>

#include "nmt/util/error.h"
#include "nmt/text/unicode.h"

namespace nmt::text {
namespace {

constexpr std::string_view kWordStart = "\u2581";  // SentencePiece's "▁"

bool is_byte_piece(const std::string& piece) {  // "<0xE2>": byte fallback, part of a character
  return piece.size() == 6 && piece.compare(0, 3, "<0x") == 0 && std::isxdigit(static_cast<unsigned char>(piece[3])) &&
         std::isxdigit(static_cast<unsigned char>(piece[4])) && piece[5] == '>';
}

// "<s>", "</s>", "<pad>", "<mask>"...: control pieces that stand for no text. Text pieces that
// merely contain '<' ("<", "<=", "▁<") do not match: they have no name between the brackets.
bool is_special_piece(const std::string& piece) {
  if (piece.size() < 3 || piece.front() != '<' || piece.back() != '>') return false;
  if (piece == "<unk>" || is_byte_piece(piece)) return false;
  size_t first = piece[1] == '/' ? 2 : 1;
  if (first + 1 >= piece.size()) return false;
  return std::all_of(piece.begin() + first, piece.end() - 1,
                     [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; });
}

void sort_unique(std::vector<WordLink>& links) {
  std::sort(links.begin(), links.end());
  links.erase(std::unique(links.begin(), links.end()), links.end());
}

// The real source piece (word >= 0) `row` weighs most; ties go to the lower index; -1 if none.
int argmax_source_piece(const std::vector<float>& row, const std::vector<int>& source_word_of_piece) {
  int best = -1;
  size_t columns = std::min(row.size(), source_word_of_piece.size());
  for (size_t s = 0; s < columns; ++s) {
    if (source_word_of_piece[s] < 0) continue;
    if (best < 0 || row[s] > row[best]) best = static_cast<int>(s);
  }
  return best;
}

bool parse_index(std::string_view digits, int& value) {
  if (digits.empty() || digits.size() > 9) return false;  // 9 digits always fit an int
  value = 0;
  for (char c : digits) {
    if (c < '0' || c > '9') return false;
    value = value * 10 + (c - '0');
  }
  return true;
}


size_t count_common(const std::vector<WordLink>& sorted_a, const std::vector<WordLink>& sorted_b) {
  size_t common = 0;
  auto a = sorted_a.begin(), b = sorted_b.begin();
  while (a != sorted_a.end() && b != sorted_b.end()) {
    if (*a < *b) {
      ++a;
    } else if (*b < *a) {
      ++b;
    } else {
      ++common, ++a, ++b;
    }
  }
  return common;
}

double ratio(size_t numerator, size_t denominator) {
  return denominator == 0 ? 0.0 : static_cast<double>(numerator) / static_cast<double>(denominator);
}

}  // namespace

std::vector<int> word_of_piece(const std::vector<std::string>& pieces) {
  std::vector<int> words;
  words.reserve(pieces.size());
  int word = -1;
  for (const std::string& piece : pieces) {
    if (is_special_piece(piece)) {
      words.push_back(-1);
      continue;
    }
    if (word < 0 || piece.compare(0, kWordStart.size(), kWordStart) == 0) ++word;
    words.push_back(word);
  }
  return words;
}

std::vector<WordLink> word_alignment(const std::vector<std::vector<float>>& attention,
                                     const std::vector<int>& source_word_of_piece,
                                     const std::vector<int>& target_word_of_piece) {
  std::vector<WordLink> links;
  size_t rows = std::min(attention.size(), target_word_of_piece.size());
  for (size_t t = 0; t < rows; ++t) {
    if (target_word_of_piece[t] < 0) continue;
    int s = argmax_source_piece(attention[t], source_word_of_piece);
    if (s >= 0) links.push_back({source_word_of_piece[s], target_word_of_piece[t]});
  }
  sort_unique(links);
  return links;
}

std::string pharaoh(const std::vector<WordLink>& links) {
  std::string out;
  for (const WordLink& link : links) {
    if (!out.empty()) out += ' ';
    out += fmt::format("{}-{}", link.source, link.target);
  }
  return out;
}

GoldAlignment parse_pharaoh(std::string_view line, std::string_view where) {
  GoldAlignment gold;
  size_t pos = 0;
  while (pos < line.size()) {
    if (is_ascii_space(line[pos])) {
      ++pos;
      continue;
    }
    size_t end = pos;
    while (end < line.size() && !is_ascii_space(line[end])) ++end;
    std::string_view token = line.substr(pos, end - pos);
    pos = end;
    size_t separator = token.find_first_of("-?");
    WordLink link;
    if (separator == std::string_view::npos || !parse_index(token.substr(0, separator), link.source) ||
        !parse_index(token.substr(separator + 1), link.target)) {
      throw RuntimeError(fmt::format("{}: bad alignment link \"{}\" (expected SOURCE-TARGET or SOURCE?TARGET, "
                                     "two word indices from 0)",
                                     where, token));
    }
    if (token[separator] == '-') gold.sure.push_back(link);
    gold.possible.push_back(link);
  }
  sort_unique(gold.sure);
  sort_unique(gold.possible);
  return gold;
}

void AerCounts::add_sentence(const std::vector<WordLink>& hypothesis_links, const GoldAlignment& gold) {
  std::vector<WordLink> a = hypothesis_links, s = gold.sure, p = gold.possible;
  p.insert(p.end(), s.begin(), s.end());  // the formula needs S ⊆ P, whoever built `gold`
  sort_unique(a);
  sort_unique(s);
  sort_unique(p);
  hypothesis += a.size();
  sure += s.size();
  hypothesis_sure += count_common(a, s);
  hypothesis_possible += count_common(a, p);
}

double AerCounts::aer() const {
  if (hypothesis + sure == 0) return 0.0;
  return 1.0 - ratio(hypothesis_sure + hypothesis_possible, hypothesis + sure);
}
double AerCounts::precision() const { return ratio(hypothesis_possible, hypothesis); }
double AerCounts::recall() const { return ratio(hypothesis_sure, sure); }

}  // namespace nmt::text
