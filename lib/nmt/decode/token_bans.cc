#include "nmt/decode/token_bans.h"

#include <algorithm>
#include <limits>

#include "nmt/text/special_ids.h"

namespace nmt::decode {

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
