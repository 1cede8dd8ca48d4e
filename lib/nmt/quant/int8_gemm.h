#pragma once
// int8 matrix products for quantised decoding (`nmt quantize`), torch-free.
//
// Weights are quantised once, symmetrically, per output channel (one scale per row of a
// Linear's [out, in] weight); activations are quantised per row at each call, so one sentence's
// outliers do not cost the others precision (CTranslate2 does the same). The products run on
// integer dot products where the CPU has them (AVX-512 VNNI, AVX-VNNI), with a portable
// fallback, chosen once at run time: the machines this runs on vary.
#include <cstdint>
#include <string>
#include <vector>

namespace nmt::quant {

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

// The weight rearranged for the kernel chosen on this CPU (packing is private to the kernel, so
// files store QuantizedWeight and pack at load).
class PackedWeight {
 public:
  explicit PackedWeight(const QuantizedWeight& weight);
  int64_t out_features() const { return out_features_; }
  int64_t in_features() const { return in_features_; }

 private:
  friend void linear(const float*, int64_t, const PackedWeight&, const float*, float*, int);
  int64_t out_features_ = 0, in_features_ = 0;
  std::vector<int8_t> packed_;
  std::vector<float> scales_;
  std::vector<int32_t> column_sums_;  // Σ_i values[o][i], for the unsigned-activation offset
};

// y[m][o] = Σ_i x[m][i] · weight[o][i] + bias[o] (bias may be null), x row-major [rows][in],
// y row-major [rows][out], with `threads` threads (≥ 1).
void linear(const float* x, int64_t rows, const PackedWeight& weight, const float* bias, float* y,
            int threads);

// The kernel this CPU runs: "avx512-vnni", "avx-vnni", "avx2" or "portable".
std::string kernel_name();

}  // namespace nmt::quant
