#include "nmt/decode/token_bans.h"

#include <algorithm>
#include <limits>

#include "nmt/text/special_ids.h"

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

void ban_next_tokens(torch::Tensor& scores, const std::vector<RowBans>& rows, int64_t no_repeat_ngram) {
  std::vector<int64_t> row_of, token_of;
  auto ban = [&](size_t r, int64_t token) {
    row_of.push_back(static_cast<int64_t>(r));
    token_of.push_back(token);
  };
  for (size_t r = 0; r < rows.size(); ++r) {
    const RowBans& row = rows[r];
    if (row.ban_eos) ban(r, text::kEosId);
    if (!row.history) continue;
    for (int64_t token : repeated_ngram_bans(*row.history, no_repeat_ngram)) ban(r, token);
    if (row.constraints)
      for (int64_t token : text::avoided_next_tokens(*row.history, row.constraints->avoid)) ban(r, token);
  }
  if (row_of.empty()) return;
  const auto on = [&](const std::vector<int64_t>& v) { return torch::tensor(v, torch::kLong).to(scores.device()); };
  scores.index_put_({on(row_of), on(token_of)}, -std::numeric_limits<float>::infinity());
}

}  // namespace nmt::decode
