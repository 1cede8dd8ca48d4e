#include "nmt/decode/sampling.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>

#include <fmt/format.h>

#include "nmt/util/rng.h"
#include "nmt/util/error.h"

namespace nmt::decode {

void SamplingSearch::validate() const {
  if (!(std::isfinite(options_.temperature) && options_.temperature > 0 && options_.temperature <= 1000))
    throw UsageError(fmt::format("--temperature is {}, must be a number above 0 (and at most 1000)", options_.temperature));
  if (options_.top_k < 0) throw UsageError("--sampling top-k:K needs K >= 1");
  if (!(options_.top_p > 0 && options_.top_p <= 1)) throw UsageError("--sampling top-p:P needs 0 < P <= 1");
}

std::vector<std::pair<int64_t, double>> SamplingSearch::candidates(const float* scores, int64_t vocab,
                                                                   const SamplingOptions& o) {
  std::vector<int64_t> order;
  order.reserve(static_cast<size_t>(vocab));
  for (int64_t i = 0; i < vocab; ++i)
    if (!std::isnan(scores[i]) && scores[i] != -std::numeric_limits<float>::infinity()) order.push_back(i);
  if (order.empty()) return {{0, 1.0}};  // nothing finite: degenerate, but never a crash
  // Most probable first; equal scores: the lower id first, so the set is the same everywhere.
  const auto better = [&](int64_t a, int64_t b) { return scores[a] != scores[b] ? scores[a] > scores[b] : a < b; };
  const size_t keep = o.top_k > 0 ? std::min<size_t>(order.size(), static_cast<size_t>(o.top_k)) : order.size();
  std::partial_sort(order.begin(), order.begin() + static_cast<std::ptrdiff_t>(keep), order.end(), better);
  order.resize(keep);
  // Probabilities at the temperature, over every token (the nucleus is a share of the whole
  // distribution), then restricted.
  const double max = scores[order.front()], t = o.temperature;
  double total = 0;
  for (int64_t i = 0; i < vocab; ++i)
    if (!std::isnan(scores[i])) total += std::exp((scores[i] - max) / t);
  std::vector<std::pair<int64_t, double>> out;
  double mass = 0;
  for (int64_t id : order) {
    const double p = std::exp((scores[id] - max) / t) / total;
    out.push_back({id, p});
    mass += p;
    if (o.top_p < 1 && mass >= o.top_p) break;
  }
  for (auto& c : out) c.second /= mass;
  return out;
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
      // u uniform in [0, 1) from 53 random bits; the last candidate absorbs rounding.
      const double u = static_cast<double>(generators[static_cast<size_t>(alive[r])].next() >> 11) * 0x1.0p-53;
      double cumulative = 0;
      int64_t token = set.back().first;
      for (const auto& [id, p] : set) {
        cumulative += p;
        if (u < cumulative) {
          token = id;
          break;
        }
      }
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
