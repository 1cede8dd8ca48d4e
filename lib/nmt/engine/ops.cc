#include "nmt/engine/ops.h"

#include <algorithm>
#include <cmath>

#include "nmt/util/vectorize.h"

namespace nmt::engine {

void layer_norm(float* x, int64_t rows, int64_t width, const float* gain, const float* bias) {
  constexpr float kEps = 1e-5f;
  for (int64_t r = 0; r < rows; ++r) {
    float* v = x + r * width;
    float mean = 0;
    for (int64_t i = 0; i < width; ++i) mean += v[i];
    mean /= static_cast<float>(width);
    float var = 0;
    for (int64_t i = 0; i < width; ++i) var += (v[i] - mean) * (v[i] - mean);
    var /= static_cast<float>(width);
    const float inv = 1.0f / std::sqrt(var + kEps);
    for (int64_t i = 0; i < width; ++i) v[i] = (v[i] - mean) * inv * gain[i] + bias[i];
  }
}

void softmax(float* x, int64_t n) {
  const float m = *std::max_element(x, x + n);
  float sum = 0;
  for (int64_t i = 0; i < n; ++i) sum += x[i] = std::exp(x[i] - m);
  const float inv = 1.0f / sum;
  for (int64_t i = 0; i < n; ++i) x[i] *= inv;
}

// The attention's inner loops: in vector lanes (the reduction reassociated, as BLAS's dot does;
// a scalar sum left them the largest cost of an int8 model's steps), AVX2 where the CPU has it.
NMT_AVX2_CLONE float dot(const float* q, const float* k, int64_t n) {
  float s = 0;
#pragma omp simd reduction(+ : s)
  for (int64_t i = 0; i < n; ++i) s += q[i] * k[i];
  return s;
}

NMT_AVX2_CLONE void axpy(float a, const float* x, float* y, int64_t n) {
#pragma omp simd
  for (int64_t i = 0; i < n; ++i) y[i] += a * x[i];
}

}  // namespace nmt::engine
