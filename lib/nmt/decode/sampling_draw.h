#pragma once
// One sampled token, torch-free: what both decoders draw with (decode/sampling.h on LibTorch,
// engine/search.cc on the CPU engine), so a seed gives the same translations on either.
#include <cstdint>
#include <utility>
#include <vector>

#include "nmt/decode/search_options.h"
#include "nmt/util/rng.h"

namespace nmt::decode {

// UsageError naming the flag for a temperature, top-k or top-p out of range.
void check_sampling_options(const SamplingOptions& options);

// The tokens row `scores` [V] (values whose softmax is the distribution) may be sampled from
// under `options`, with their probabilities (summing to 1), most probable first.
std::vector<std::pair<int64_t, double>> sampling_candidates(const float* scores, int64_t vocab,
                                                            const SamplingOptions& options);

// One token of `candidates` for a uniform draw of `generator` (53 random bits; the last
// candidate absorbs rounding).
int64_t draw_token(const std::vector<std::pair<int64_t, double>>& candidates, SplitMix64& generator);

}  // namespace nmt::decode
