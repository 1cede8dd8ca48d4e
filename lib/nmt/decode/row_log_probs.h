#pragma once
// Log-probabilities read off one row of next-token logits, without materialising the
// log-softmax over the vocabulary: the arithmetic both decoding engines share (the LibTorch
// path through top_log_probs.h, the CPU engine directly), so they rank and score tokens alike.
// Torch-free.
#include <cstdint>

namespace nmt::decode {

// log Σ exp(row[i]) over row[0..n) (NaN skipped; 0 when the largest value is ±inf or NaN).
// `scratch` holds n floats.
double row_log_sum_exp(const float* row, int64_t n, float* scratch);

// The k largest logits of row[0..n) (1 <= k <= n), best first, equal logits lower id first,
// NaN below everything: their ids into tokens[0..k) and their log-probabilities into
// log_probs[0..k). `scratch` holds n floats, `top` k.
void row_top_log_probs(const float* row, int64_t n, int64_t k, double* log_probs, int64_t* tokens, float* scratch,
                       float* top);

}  // namespace nmt::decode
