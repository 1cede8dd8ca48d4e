#include "nmt/decode/no_repeat.h"

#include <algorithm>
#include <limits>

namespace nmt::decode {

std::vector<int64_t> repeated_ngram_bans(const Ids& history, int64_t n) {
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

void ban_repeated_ngrams(torch::Tensor& scores, const std::vector<const Ids*>& histories, int64_t n) {
  if (n < 1) return;
  std::vector<int64_t> rows, tokens;
  for (size_t r = 0; r < histories.size(); ++r)
    for (int64_t token : histories[r] ? repeated_ngram_bans(*histories[r], n) : std::vector<int64_t>{}) {
      rows.push_back(static_cast<int64_t>(r));
      tokens.push_back(token);
    }
  if (rows.empty()) return;
  const auto on = [&](const std::vector<int64_t>& v) { return torch::tensor(v, torch::kLong).to(scores.device()); };
  scores.index_put_({on(rows), on(tokens)}, -std::numeric_limits<float>::infinity());
}

}  // namespace nmt::decode
