#include "nmt/text/repetition.h"

#include <algorithm>
#include <string>
#include <vector>

namespace nmt::text {

namespace {
std::vector<std::string_view> words_of(std::string_view text) {
  std::vector<std::string_view> words;
  size_t i = 0;
  while (i < text.size()) {
    while (i < text.size() && (text[i] == ' ' || text[i] == '\t')) ++i;
    const size_t start = i;
    while (i < text.size() && text[i] != ' ' && text[i] != '\t') ++i;
    if (i > start) words.push_back(text.substr(start, i - start));
  }
  return words;
}

// Whether words[at..at+n) is repeated `times` times back to back from `at`.
bool repeats_at(const std::vector<std::string_view>& words, size_t at, size_t n, size_t times) {
  if (at + n * times > words.size()) return false;
  for (size_t k = 1; k < times; ++k)
    if (!std::equal(words.begin() + static_cast<std::ptrdiff_t>(at), words.begin() + static_cast<std::ptrdiff_t>(at + n),
                    words.begin() + static_cast<std::ptrdiff_t>(at + k * n)))
      return false;
  return true;
}
}  // namespace

bool has_repetition_loop(std::string_view text) {
  const auto words = words_of(text);
  for (size_t at = 0; at < words.size(); ++at)
    for (size_t n = 1; n <= 4; ++n)
      if (repeats_at(words, at, n, n == 1 ? 3 : 2)) return true;
  return false;
}

}  // namespace nmt::text
