#pragma once
// How a decoding call cuts its sentences into batches and how long each output may grow:
// torch-free, so both decoding engines plan alike.
#include <cstddef>
#include <cstdint>
#include <vector>

#include "nmt/text/token_ids.h"

namespace nmt::decode {

// Orders indices by decreasing source length and cuts them into batches of at most
// `batch_size` sentences and, when max_tokens > 0, at most max_tokens padded source tokens.
std::vector<std::vector<size_t>> length_sorted_batches(const std::vector<text::TokenIds>& sources, int64_t batch_size,
                                                       int64_t max_tokens);

// The most subwords an output may have (EOS not counted, a forced prefix included): a
// source of `source_len` subwords gets prefix + max(1, a·len + b), at most `longest_output`.
int64_t output_length_limit(int64_t source_len, int64_t prefix_len, double max_len_a, int64_t max_len_b,
                            int64_t longest_output);

}  // namespace nmt::decode
