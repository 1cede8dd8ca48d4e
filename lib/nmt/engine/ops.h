#pragma once
// The CPU engine's elementwise and row operations, on dense row-major float arrays.
#include <cstddef>
#include <cstdint>
#include <vector>

namespace nmt::engine {

struct LayerNorm {
  std::vector<float> gain, bias;
};

// Makes v hold at least n elements (buffers that only grow: no allocation once warm).
template <typename T>
void grow(std::vector<T>& v, int64_t n) {
  if (static_cast<int64_t>(v.size()) < n) v.resize(static_cast<size_t>(n));
}

// One row's attention scores: on the stack up to 1,024 of them (no allocation per step), on the
// heap past that.
class ScoreScratch {
 public:
  explicit ScoreScratch(int64_t n) {
    if (n > kOnStack) heap_.resize(static_cast<size_t>(n));
  }
  float* data() { return heap_.empty() ? stack_ : heap_.data(); }

 private:
  static constexpr int64_t kOnStack = 1024;
  float stack_[kOnStack];
  std::vector<float> heap_;
};

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
