#include "nmt/quant/int8_gemm.h"

#include <algorithm>
#include <cmath>

namespace nmt::quant {
namespace {

int8_t round_to_int8(float v) {
  return static_cast<int8_t>(std::clamp(std::nearbyint(v), -127.0f, 127.0f));
}

}  // namespace

QuantizedWeight quantize_weight(const float* weight, int64_t out_features, int64_t in_features) {
  QuantizedWeight q;
  q.out_features = out_features;
  q.in_features = in_features;
  q.values.resize(static_cast<size_t>(out_features * in_features));
  q.scales.resize(static_cast<size_t>(out_features));
  for (int64_t o = 0; o < out_features; ++o) {
    const float* row = weight + o * in_features;
    float max_abs = 0;
    for (int64_t i = 0; i < in_features; ++i) max_abs = std::max(max_abs, std::fabs(row[i]));
    const float scale = max_abs > 0 ? max_abs / 127.0f : 1.0f;
    q.scales[o] = scale;
    for (int64_t i = 0; i < in_features; ++i)
      q.values[o * in_features + i] = round_to_int8(row[i] / scale);
  }
  return q;
}

// Portable reference: activations quantised per row to [-127, 127], int32 accumulation.
PackedWeight::PackedWeight(const QuantizedWeight& weight)
    : out_features_(weight.out_features),
      in_features_(weight.in_features),
      packed_(weight.values),
      scales_(weight.scales) {
  column_sums_.assign(static_cast<size_t>(out_features_), 0);
  for (int64_t o = 0; o < out_features_; ++o)
    for (int64_t i = 0; i < in_features_; ++i) column_sums_[o] += packed_[o * in_features_ + i];
}

void linear(const float* x, int64_t rows, const PackedWeight& w, const float* bias, float* y,
            int /*threads*/) {
  const int64_t in = w.in_features_, out = w.out_features_;
  std::vector<int8_t> xq(static_cast<size_t>(in));
  for (int64_t m = 0; m < rows; ++m) {
    const float* xr = x + m * in;
    float max_abs = 0;
    for (int64_t i = 0; i < in; ++i) max_abs = std::max(max_abs, std::fabs(xr[i]));
    const float x_scale = max_abs > 0 ? max_abs / 127.0f : 1.0f;
    for (int64_t i = 0; i < in; ++i) xq[i] = round_to_int8(xr[i] / x_scale);
    for (int64_t o = 0; o < out; ++o) {
      const int8_t* wr = w.packed_.data() + o * in;
      int32_t acc = 0;
      for (int64_t i = 0; i < in; ++i) acc += int32_t{xq[i]} * int32_t{wr[i]};
      y[m * out + o] = static_cast<float>(acc) * x_scale * w.scales_[o] + (bias ? bias[o] : 0.0f);
    }
  }
}

std::string kernel_name() { return "portable"; }

}  // namespace nmt::quant
