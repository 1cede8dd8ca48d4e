#include "nmt/decode/sampling_draw.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include <fmt/format.h>

#include "nmt/util/error.h"

namespace nmt::decode {

void check_sampling_options(const SamplingOptions& options_) {
  if (!(std::isfinite(options_.temperature) && options_.temperature > 0 && options_.temperature <= 1000))
    throw UsageError(fmt::format("--temperature is {}, must be a number above 0 (and at most 1000)", options_.temperature));
  if (options_.top_k < 0) throw UsageError("--sampling top-k:K needs K >= 1");
  if (!(options_.top_p > 0 && options_.top_p <= 1)) throw UsageError("--sampling top-p:P needs 0 < P <= 1");
}

std::vector<std::pair<int64_t, double>> sampling_candidates(const float* scores, int64_t vocab,
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

int64_t draw_token(const std::vector<std::pair<int64_t, double>>& candidates, SplitMix64& generator) {
  const double u = static_cast<double>(generator.next() >> 11) * 0x1.0p-53;
  double cumulative = 0;
  for (const auto& [id, p] : candidates) {
    cumulative += p;
    if (u < cumulative) return id;
  }
  return candidates.back().first;
}

}  // namespace nmt::decode
