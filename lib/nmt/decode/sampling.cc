#include "nmt/decode/sampling.h"

#include "nmt/decode/sampling_draw.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>

#include <fmt/format.h>

#include "nmt/util/rng.h"
#include "nmt/util/error.h"

namespace nmt::decode {

void SamplingSearch::validate() const { check_sampling_options(options_); }

std::vector<std::pair<int64_t, double>> SamplingSearch::candidates(const float* scores, int64_t vocab,
                                                                   const SamplingOptions& o) {
  return sampling_candidates(scores, vocab, o);
}

std::vector<SearchResult> SamplingSearch::search(SearchBatch& batch, const DecodeOptions& options) const {
  std::vector<SplitMix64> generators;
  for (size_t i : batch.source_index) generators.emplace_back(mix_seed(options_.seed, i));
  auto draw = [&](const torch::Tensor& scores, const std::vector<int64_t>& alive, int64_t) {
    const auto rows = scores.to(torch::kCPU, torch::kFloat).contiguous();
    const int64_t vocab = rows.size(1);
    auto next = torch::empty({rows.size(0)}, torch::kLong);
    int64_t* chosen = next.data_ptr<int64_t>();
    for (size_t r = 0; r < alive.size(); ++r) {
      const auto set = candidates(rows.data_ptr<float>() + static_cast<int64_t>(r) * vocab, vocab, options_);
      const int64_t token = draw_token(set, generators[static_cast<size_t>(alive[r])]);
      chosen[r] = token;
    }
    return next;
  };
  DecodeOptions scored = options;
  scored.return_token_log_probs = true;  // a sample's log-probability is part of its result
  auto results = one_best_search(batch, scored, draw);
  if (!options.return_token_log_probs)
    for (auto& r : results) r.front().token_log_probs.clear();
  return results;
}

}  // namespace nmt::decode
