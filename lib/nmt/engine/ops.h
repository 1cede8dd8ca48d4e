#pragma once
// The CPU engine's elementwise and row operations, on dense row-major float arrays.
#include <cstdint>

namespace nmt::engine {

// In place, each of `rows` rows of `width`: (x - mean) / sqrt(var + eps) * gain + bias, as
// torch::nn::LayerNorm (biased variance, eps 1e-5).
void layer_norm(float* x, int64_t rows, int64_t width, const float* gain, const float* bias);
// In place: softmax of n values.
void softmax(float* x, int64_t n);
// q·k over n values.
float dot(const float* q, const float* k, int64_t n);
// y += a·x over n values.
void axpy(float a, const float* x, float* y, int64_t n);

}  // namespace nmt::engine
