#include "nmt/decode/greedy.h"

#include <numeric>

#include "nmt/decode/token_bans.h"
#include "nmt/decode/top_log_probs.h"
#include "nmt/util/error.h"

namespace nmt::decode {
using models::kBosId;
using models::kEosId;

std::vector<SearchResult> one_best_search(SearchBatch& batch, const DecodeOptions& options, const ChooseTokens& choose) {
  const int64_t B = batch.rows();
  // Greedy search and sampling cannot go back on a choice, so they cannot steer towards a phrase.
  if (batch.any_positive_constraints) throw UsageError("phrases a translation must contain need beam search, not sampling");
  std::vector<Hypothesis> hyps(static_cast<size_t>(B));
  const int64_t longest = *std::max_element(batch.limit.begin(), batch.limit.end());
  std::vector<int64_t> alive(static_cast<size_t>(B));  // row of the step → batch row
  std::iota(alive.begin(), alive.end(), 0);
  auto tokens = torch::full({B}, kBosId, torch::TensorOptions().dtype(torch::kLong).device(batch.device));
  for (int64_t t = 0; t < longest + 1 && !alive.empty(); ++t) {
    auto scores = batch.model.step(tokens, batch.state);
    if (options.search.no_repeat_ngram > 0 || batch.any_constraints) {
      std::vector<RowBans> rows;
      for (const int64_t b : alive) {
        const bool in_prefix = t < static_cast<int64_t>(batch.prefix[static_cast<size_t>(b)]->size());
        rows.push_back({in_prefix ? nullptr : &hyps[static_cast<size_t>(b)].tokens, batch.constraints[static_cast<size_t>(b)]});
      }
      ban_next_tokens(scores, rows, options.search.no_repeat_ngram);
    }
    auto next_host = choose(scores, alive, t);
    // Rows still inside their forced prefix take its next token instead.
    bool forced = false;
    int64_t* next_data = next_host.data_ptr<int64_t>();
    for (size_t r = 0; r < alive.size(); ++r) {
      const text::TokenIds& prefix = *batch.prefix[static_cast<size_t>(alive[r])];
      if (t < static_cast<int64_t>(prefix.size())) {
        next_data[r] = prefix[static_cast<size_t>(t)];
        forced = true;
      }
    }
    auto next = forced || !batch.device.is_cpu() ? next_host.to(batch.device) : next_host;
    torch::Tensor log_probs, attention;
    if (options.return_token_log_probs) log_probs = token_log_probs(scores, next);
    if (options.record_attention) attention = batch.state.attention.to(torch::kCPU, torch::kFloat).contiguous();
    std::vector<int64_t> keep;
    keep.reserve(alive.size());
    for (size_t r = 0; r < alive.size(); ++r) {
      const int64_t b = alive[r];
      Hypothesis& h = hyps[static_cast<size_t>(b)];
      const int64_t token = next_data[r];
      const bool at_limit = static_cast<int64_t>(h.tokens.size()) >= batch.limit[static_cast<size_t>(b)];
      const bool done = token == kEosId || at_limit;
      // Cut off by the length limit: the last step belongs to a token that is not emitted.
      const bool emitted = !(at_limit && token != kEosId);
      if (emitted && options.record_attention)
        h.attention.push_back(attention_row(attention, static_cast<int64_t>(r), batch.source_len[static_cast<size_t>(b)]));
      if (emitted && options.return_token_log_probs) {
        const double lp = log_probs.data_ptr<double>()[r];
        h.token_log_probs.push_back(lp);
        h.log_prob += lp;
        h.score = h.log_prob;
      }
      if (!done) {
        h.tokens.push_back(static_cast<int>(token));
        keep.push_back(static_cast<int64_t>(r));
      }
    }
    if (keep.size() != alive.size()) {
      if (keep.empty()) break;
      auto index = torch::tensor(keep, torch::kLong).to(batch.device);
      batch.state.select(index);
      next = next.index_select(0, index);
      std::vector<int64_t> still;
      still.reserve(keep.size());
      for (int64_t r : keep) still.push_back(alive[static_cast<size_t>(r)]);
      alive.swap(still);
    }
    tokens = next;
  }
  std::vector<SearchResult> out;
  out.reserve(hyps.size());
  for (auto& h : hyps) out.push_back({std::move(h)});
  return out;
}

std::vector<SearchResult> GreedySearch::search(SearchBatch& batch, const DecodeOptions& options) const {
  return one_best_search(batch, options, [](const torch::Tensor& scores, const std::vector<int64_t>&, int64_t) {
    return scores.argmax(-1).to(torch::kCPU);
  });
}

}  // namespace nmt::decode
