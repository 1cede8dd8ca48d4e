#pragma once
// The int8 kernels behind nmt::quant::linear (int8_gemm.h): private to lib/nmt/quant and its tests.
//
// Scheme (as CTranslate2 and oneDNN): each activation row is quantised symmetrically to
// [-127, 127] with its own scale. vpdpbusd multiplies unsigned by signed bytes, so the VNNI
// kernels add 128 to the activations and start each accumulator at -128 Σ_i w[o][i]
// (PackedWeight::compensation_); AVX2 has no such instruction and keeps the signed activations
// (see int8_gemm_avx2.cc). Every kernel therefore computes the same exact int32 Σ_i x[i]·w[o][i]
// (partial sums wrap, the final sum fits: PackedWeight refuses in_features > 2^31 / 127²), and
// every kernel finishes with the same float arithmetic in the same order (dequantise below; the
// files are compiled with -ffp-contract=off so no FMA fuses it): all kernels give bit-identical y.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>

#include "nmt/quant/int8_gemm.h"

namespace nmt::quant::detail {

// The micro-kernels' loops over their register tiles must be unrolled, or the accumulators live
// on the stack: GCC 12 at -O2 leaves them rolled, and the AVX-512 kernel ran at ~100
// GFLOP/s-equivalent instead of ~500 (rows 64, in 512, out 2048, one Zen 5 core).
#define NMT_UNROLL _Pragma("GCC unroll 16")

enum class Kernel { portable, avx2, avx_vnni, avx512_vnni };

inline constexpr int64_t kBlockColumns = 16;  // output channels per block of PackedWeight
inline constexpr int64_t kGroupInputs = 4;    // consecutive inputs per channel in a PackedGroup

const char* kernel_label(Kernel kernel);  // "avx512-vnni", ...
bool kernel_supported(Kernel kernel);     // by this CPU and this build
Kernel fastest_kernel();                  // the fastest supported, chosen once
Kernel best_kernel();                     // the one linear() runs: fastest_kernel(), or NMT_INT8_KERNEL's
                                          // (UsageError if that names no kernel or one this CPU lacks)

// linear() on a given kernel (which must be supported): lets tests run every kernel here.
void linear_with(Kernel kernel, const float* x, int64_t rows, const PackedWeight& weight, const float* bias, float* y,
                 int threads);

// What a kernel computes on: quantised activations and the packed weight.
struct Operands {
  const uint8_t* x = nullptr;       // [rows][x_stride]: int8, or int8 + 128 for the VNNI kernels
  const float* x_scales = nullptr;  // [rows]
  int64_t rows = 0, x_stride = 0;   // x_stride = groups * 4
  const PackedGroup* w = nullptr;   // [blocks][groups]
  int64_t groups = 0;
  const int32_t* compensation = nullptr;  // [blocks * 16]
  const float* w_scales = nullptr;        // [blocks * 16]
  const float* bias = nullptr;            // [out] or null
  float* y = nullptr;                     // [rows][out]
  int64_t out = 0;
};

// Column blocks in one AVX-512 micro-tile (int8_gemm_avx512.cc): threads split on whole tiles.
inline constexpr int64_t kAvx512TileBlocks = 3;

// Each computes y's columns [block_begin · 16, block_end · 16) ∩ [0, out) for every row.
using GemmFunction = void (*)(const Operands&, int64_t block_begin, int64_t block_end);
void gemm_portable(const Operands& op, int64_t block_begin, int64_t block_end);
void gemm_avx2(const Operands& op, int64_t block_begin, int64_t block_end);
void gemm_avx_vnni(const Operands& op, int64_t block_begin, int64_t block_end);
void gemm_avx512_vnni(const Operands& op, int64_t block_begin, int64_t block_end);

// Rows whose largest magnitude is below this are quantised as zeros: 127 / max_abs would
// overflow to infinity near 3.7e-37, and such a row contributes nothing measurable.
inline constexpr float kSmallestQuantisedRowMax = 1e-30f;

// Quantises x [rows][in] into out [rows][stride] (stride ≥ in, padded with quantised zeros)
// with q = round_half_even(x · (127 / max_abs)) clamped to [-127, 127], plus 128 when
// `offset`, and scales[m] = max_abs / 127. The AVX2 version gives the same bytes.
void quantize_rows_portable(const float* x, int64_t rows, int64_t in, int64_t stride, bool offset, uint8_t* out,
                            float* scales);
void quantize_rows_avx2(const float* x, int64_t rows, int64_t in, int64_t stride, bool offset, uint8_t* out,
                        float* scales);

// Round half to even (the default rounding mode, as cvtps2dq), clamped to [-127, 127].
inline int8_t round_to_int8(float v) {
  v = std::nearbyint(v);
  if (!(v >= -127.0f)) v = -127.0f;  // also NaN, as the SIMD quantiser's clamp does
  return static_cast<int8_t>(std::min(v, 127.0f));
}

// The scale pair for a row's largest magnitude; shared so both quantisers agree.
struct RowScale {
  float scale, inverse;
};
inline RowScale row_scale(float max_abs) {
  if (!(max_abs >= kSmallestQuantisedRowMax)) return {1.0f, 0.0f};  // also NaN
  return {max_abs / 127.0f, 127.0f / max_abs};
}

// The one float epilogue: every kernel computes exactly this, in this order.
inline float dequantise(int32_t acc, float x_scale, float w_scale, float bias) {
  return static_cast<float>(acc) * x_scale * w_scale + bias;
}

inline int32_t load_group(const uint8_t* p) {  // 4 activation bytes, for a broadcast
  int32_t v;
  std::memcpy(&v, p, sizeof v);
  return v;
}

struct PackedAccess {
  static Operands operands(const PackedWeight& w) {
    Operands op;
    op.w = w.packed_.data();
    op.groups = (w.in_features_ + kGroupInputs - 1) / kGroupInputs;
    op.x_stride = op.groups * kGroupInputs;
    op.compensation = w.compensation_.data();
    op.w_scales = w.scales_.data();
    op.out = w.out_features_;
    return op;
  }
  static int64_t in_features(const PackedWeight& w) { return w.in_features_; }
};

}  // namespace nmt::quant::detail
