#pragma once
// int8 matrix products for quantised decoding (`nmt quantize`), torch-free.
//
// Weights are quantised once, symmetrically, per output channel (one scale per row of a
// Linear's [out, in] weight); activations are quantised per row at each call, so one sentence's
// outliers do not cost the others precision (CTranslate2 does the same). The products run on
// integer dot products where the CPU has them (AVX-512 VNNI, AVX-VNNI, AVX2), with a portable
// fallback, chosen once at run time: the machines this runs on vary (int8_kernels.h).
#include <cstdint>
#include <string>
#include <vector>

namespace nmt::quant {

namespace detail {
struct PackedAccess;  // the kernels' view of a PackedWeight (int8_kernels.h)
// 4 consecutive inputs of 16 output channels: one vpdpbusd operand, one cache line.
struct alignas(64) PackedGroup {
  int8_t values[64];
};
}  // namespace detail

// A Linear weight [out_features, in_features] quantised per output channel:
// weight[o][i] ≈ values[o * in_features + i] * scales[o], values in [-127, 127].
struct QuantizedWeight {
  int64_t out_features = 0;
  int64_t in_features = 0;
  std::vector<int8_t> values;  // row-major [out_features][in_features]
  std::vector<float> scales;   // [out_features]
};

// Quantises a row-major fp32 weight [out][in] (the layout of torch::nn::Linear's weight).
QuantizedWeight quantize_weight(const float* weight, int64_t out_features, int64_t in_features);

// The weight rearranged for the kernels (one layout serves them all; it is private, so files
// store QuantizedWeight and pack at load). Throws RuntimeError on a malformed QuantizedWeight.
class PackedWeight {
 public:
  explicit PackedWeight(const QuantizedWeight& weight);
  int64_t out_features() const { return out_features_; }
  int64_t in_features() const { return in_features_; }

 private:
  friend struct detail::PackedAccess;
  int64_t out_features_ = 0, in_features_ = 0;
  // Blocks of 16 output channels (the last padded with zero channels), each in_features / 4
  // groups long (rounded up, padded with zero inputs): the layout every kernel reads.
  std::vector<detail::PackedGroup> packed_;
  std::vector<float> scales_;          // [out_features rounded up to 16], padding 0
  std::vector<int32_t> compensation_;  // -128 Σ_i values[o][i]: undoes the unsigned-activation offset
};

// y[m][o] = Σ_i x[m][i] · weight[o][i] + bias[o] (bias may be null), x row-major [rows][in],
// y row-major [rows][out], with `threads` threads (≥ 1).
void linear(const float* x, int64_t rows, const PackedWeight& weight, const float* bias, float* y,
            int threads);

// The kernel this CPU runs: "avx512-vnni", "avx-vnni", "avx2" or "portable".
std::string kernel_name();

}  // namespace nmt::quant
