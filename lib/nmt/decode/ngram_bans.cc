#include "nmt/decode/ngram_bans.h"

#include <algorithm>

namespace nmt::decode {

std::vector<int64_t> repeated_ngram_bans(const text::TokenIds& history, int64_t n) {
  std::vector<int64_t> bans;
  const int64_t len = static_cast<int64_t>(history.size());
  if (n < 1 || len < n - 1) return bans;
  // The n-gram ending at position i + n - 1 starts with the same n-1 tokens as the history's end.
  const auto tail = history.end() - (n - 1);
  for (int64_t i = 0; i + n - 1 < len; ++i) {
    const auto start = history.begin() + i;
    if (std::equal(start, start + (n - 1), tail)) bans.push_back(history[static_cast<size_t>(i + n - 1)]);
  }
  std::sort(bans.begin(), bans.end());
  bans.erase(std::unique(bans.begin(), bans.end()), bans.end());
  return bans;
}

}  // namespace nmt::decode
