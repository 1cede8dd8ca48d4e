#pragma once
// Random sampling of each next token (back-translation, diverse outputs): from the whole
// distribution sharpened or flattened by a temperature, restricted to the k most probable
// tokens (top-k) or to the smallest set holding probability p (nucleus, top-p).
#include <cstdint>
#include <string>

#include "nmt/decode/greedy.h"
#include "nmt/decode/search_options.h"

namespace nmt::decode {

// Reproducible for a seed whatever the batching: sentence i of the input draws from its own
// generator, seeded by (seed, i). Hypothesis::log_prob is the model's own log-probability of
// the sampled tokens (temperature 1, no restriction), as greedy search would report it.
class SamplingSearch final : public SearchStrategy {
 public:
  explicit SamplingSearch(SamplingOptions options) : options_(options) {}
  void validate() const override;
  std::vector<SearchResult> search(SearchBatch& batch, const DecodeOptions& options) const override;

  // The tokens row `scores` [V] may be sampled from under `options`, with their
  // probabilities (summing to 1), most probable first: what the tests check the support of.
  static std::vector<std::pair<int64_t, double>> candidates(const float* scores, int64_t vocab,
                                                            const SamplingOptions& options);

 private:
  SamplingOptions options_;
};

}  // namespace nmt::decode
