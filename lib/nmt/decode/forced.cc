#include "nmt/decode/forced.h"

#include <algorithm>

#include "nmt/decode/top_log_probs.h"

namespace nmt::decode {
using models::kBosId;
using models::kEosId;

std::vector<SearchResult> ForcedDecoding::search(SearchBatch& batch, const DecodeOptions& options) const {
  const int64_t B = batch.rows();
  std::vector<Hypothesis> hyps(static_cast<size_t>(B));
  int64_t steps = 0;  // the longest target plus its EOS
  for (const text::TokenIds* p : batch.prefix) steps = std::max<int64_t>(steps, static_cast<int64_t>(p->size()) + 1);
  auto tokens = torch::full({B}, kBosId, torch::TensorOptions().dtype(torch::kLong).device(batch.device));
  // Rows stay in the batch to the end (a finished row is fed EOS and its scores ignored):
  // scoring is one pass, and the rows keep the same batch as the search would give them.
  for (int64_t t = 0; t < steps; ++t) {
    auto scores = batch.model.step(tokens, batch.state);
    std::vector<int64_t> forced(static_cast<size_t>(B));
    for (int64_t b = 0; b < B; ++b) {
      const text::TokenIds& target = *batch.prefix[static_cast<size_t>(b)];
      forced[static_cast<size_t>(b)] = t < static_cast<int64_t>(target.size()) ? target[static_cast<size_t>(t)] : kEosId;
    }
    auto next = torch::tensor(forced, torch::kLong);
    const auto log_probs = token_log_probs(scores, next);
    torch::Tensor attention;
    if (options.record_attention) attention = batch.state.attention.to(torch::kCPU, torch::kFloat).contiguous();
    for (int64_t b = 0; b < B; ++b) {
      const int64_t len = static_cast<int64_t>(batch.prefix[static_cast<size_t>(b)]->size());
      if (t > len) continue;  // already ended
      Hypothesis& h = hyps[static_cast<size_t>(b)];
      const double lp = log_probs.data_ptr<double>()[b];
      h.token_log_probs.push_back(lp);
      h.log_prob += lp;
      h.score = h.log_prob;
      if (t < len) h.tokens.push_back(static_cast<int>(forced[static_cast<size_t>(b)]));
      if (options.record_attention)
        h.attention.push_back(attention_row(attention, b, batch.source_len[static_cast<size_t>(b)]));
    }
    tokens = next.to(batch.device);
  }
  std::vector<SearchResult> out;
  for (auto& h : hyps) out.push_back({std::move(h)});
  return out;
}

}  // namespace nmt::decode
