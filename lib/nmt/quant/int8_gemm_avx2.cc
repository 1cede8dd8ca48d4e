// The 256-bit int8 kernels: AVX2 (Haswell to Skylake client, Zen 1-3) and AVX-VNNI (Alder Lake
// and later client cores, which lack AVX-512), plus the activation quantiser every x86 kernel
// uses. Compiled per function for its instruction set (no -m flags): the binary runs on any
// x86-64, and int8_gemm.cc calls a kernel only when cpuid says the CPU has it.
#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>

#include "nmt/quant/int8_kernels.h"

#define NMT_TARGET_AVX2 __attribute__((target("avx2")))
#define NMT_TARGET_AVX_VNNI __attribute__((target("avx2,avxvnni")))

namespace nmt::quant::detail {
namespace {

NMT_TARGET_AVX2 float max_abs_avx2(const float* row, int64_t in) {
  const __m256 sign = _mm256_set1_ps(-0.0f);
  __m256 max8 = _mm256_setzero_ps();
  int64_t i = 0;
  // max_ps returns its second operand when either is NaN: NaNs are skipped, as std::max does.
  for (; i + 8 <= in; i += 8) max8 = _mm256_max_ps(_mm256_andnot_ps(sign, _mm256_loadu_ps(row + i)), max8);
  __m128 max4 = _mm_max_ps(_mm256_castps256_ps128(max8), _mm256_extractf128_ps(max8, 1));
  max4 = _mm_max_ps(max4, _mm_movehl_ps(max4, max4));
  max4 = _mm_max_ss(max4, _mm_shuffle_ps(max4, max4, 1));
  float max_abs = _mm_cvtss_f32(max4);
  for (; i < in; ++i) max_abs = std::max(max_abs, std::fabs(row[i]));
  return max_abs;
}

// 32 floats → 32 bytes: cvtps2dq rounds half to even like std::nearbyint, the saturating packs
// and the max with -127 clamp like round_to_int8 (NaN becomes INT_MIN, then -127).
NMT_TARGET_AVX2 __m256i quantise32_avx2(const float* x, __m256 inverse) {
  const __m256i a = _mm256_cvtps_epi32(_mm256_mul_ps(_mm256_loadu_ps(x), inverse));
  const __m256i b = _mm256_cvtps_epi32(_mm256_mul_ps(_mm256_loadu_ps(x + 8), inverse));
  const __m256i c = _mm256_cvtps_epi32(_mm256_mul_ps(_mm256_loadu_ps(x + 16), inverse));
  const __m256i d = _mm256_cvtps_epi32(_mm256_mul_ps(_mm256_loadu_ps(x + 24), inverse));
  // The packs work within 128-bit lanes, leaving the 4-byte groups in the order a0 b0 c0 d0 a1...
  const __m256i packed = _mm256_packs_epi16(_mm256_packs_epi32(a, b), _mm256_packs_epi32(c, d));
  const __m256i ordered = _mm256_permutevar8x32_epi32(packed, _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7));
  return _mm256_max_epi8(ordered, _mm256_set1_epi8(-127));
}

}  // namespace

NMT_TARGET_AVX2 void quantize_rows_avx2(const float* x, int64_t rows, int64_t in, int64_t stride, bool offset,
                                        uint8_t* out, float* scales) {
  const uint8_t bias = offset ? 128 : 0;
  const __m256i bias32 = _mm256_set1_epi8(static_cast<char>(bias));
  for (int64_t m = 0; m < rows; ++m) {
    const float* row = x + m * in;
    uint8_t* q = out + m * stride;
    const RowScale s = row_scale(max_abs_avx2(row, in));
    scales[m] = s.scale;
    const __m256 inverse = _mm256_set1_ps(s.inverse);
    int64_t i = 0;
    for (; i + 32 <= in; i += 32)
      _mm256_storeu_si256(reinterpret_cast<__m256i*>(q + i),
                          _mm256_xor_si256(quantise32_avx2(row + i, inverse), bias32));
    for (; i < in; ++i) q[i] = static_cast<uint8_t>(round_to_int8(row[i] * s.inverse) + bias);
    std::fill(q + in, q + stride, bias);
  }
}

namespace {

// The epilogue of one 16-column block of one row, in dequantise()'s order.
__attribute__((always_inline)) NMT_TARGET_AVX2 inline void store_block_avx2(const Operands& op, int64_t row,
                                                                            int64_t block, __m256i low, __m256i high) {
  const int64_t column = block * kBlockColumns;
  const float x_scale = op.x_scales[row];
  float* y = op.y + row * op.out + column;
  if (column + kBlockColumns > op.out) {  // the partial last block
    alignas(32) int32_t acc[kBlockColumns];
    _mm256_store_si256(reinterpret_cast<__m256i*>(acc), low);
    _mm256_store_si256(reinterpret_cast<__m256i*>(acc + 8), high);
    for (int64_t c = 0; c < op.out - column; ++c)
      y[c] = dequantise(acc[c], x_scale, op.w_scales[column + c], op.bias ? op.bias[column + c] : 0.0f);
    return;
  }
  const __m256 xs = _mm256_set1_ps(x_scale);
  const __m256i halves[2] = {low, high};
  NMT_UNROLL
  for (int h = 0; h < 2; ++h) {
    const __m256 ws = _mm256_loadu_ps(op.w_scales + column + 8 * h);
    const __m256 bias = op.bias ? _mm256_loadu_ps(op.bias + column + 8 * h) : _mm256_setzero_ps();
    const __m256 v = _mm256_mul_ps(_mm256_mul_ps(_mm256_cvtepi32_ps(halves[h]), xs), ws);
    _mm256_storeu_ps(y + 8 * h, _mm256_add_ps(v, bias));
  }
}

// AVX2 has no u8×s8 dot product into int32, only vpmaddubsw (u8×s8 pairs summed into int16,
// saturating) then vpmaddwd. With activations offset to [1, 255] a pair can reach
// 2·255·127 = 64 770 and saturate, so this kernel keeps the signed activations and moves their
// sign onto the weights (vpsignb): |x|·(±w) pairs stay within 2·127·127 = 32 258, the sum is
// exact, and no compensation is needed. 4 rows × 16 columns: 8 accumulators of 16 registers.
template <int Rows>
NMT_TARGET_AVX2 void tile_avx2(const Operands& op, int64_t row0, int64_t block) {
  __m256i acc[Rows][2];
  NMT_UNROLL
  for (int r = 0; r < Rows; ++r) acc[r][0] = acc[r][1] = _mm256_setzero_si256();
  const PackedGroup* w = op.w + block * op.groups;
  const uint8_t* x = op.x + row0 * op.x_stride;
  const __m256i ones = _mm256_set1_epi16(1);
  for (int64_t g = 0; g < op.groups; ++g) {
    const __m256i w0 = _mm256_load_si256(reinterpret_cast<const __m256i*>(w[g].values));
    const __m256i w1 = _mm256_load_si256(reinterpret_cast<const __m256i*>(w[g].values + 32));
    NMT_UNROLL
    for (int r = 0; r < Rows; ++r) {
      const __m256i xb = _mm256_set1_epi32(load_group(x + r * op.x_stride + g * kGroupInputs));
      const __m256i xa = _mm256_abs_epi8(xb);
      const __m256i p0 = _mm256_maddubs_epi16(xa, _mm256_sign_epi8(w0, xb));
      const __m256i p1 = _mm256_maddubs_epi16(xa, _mm256_sign_epi8(w1, xb));
      acc[r][0] = _mm256_add_epi32(acc[r][0], _mm256_madd_epi16(p0, ones));
      acc[r][1] = _mm256_add_epi32(acc[r][1], _mm256_madd_epi16(p1, ones));
    }
  }
  NMT_UNROLL
  for (int r = 0; r < Rows; ++r) store_block_avx2(op, row0 + r, block, acc[r][0], acc[r][1]);
}

// vpdpbusd on ymm: 6 rows × 16 columns, 12 accumulators + 2 weights + 1 broadcast of the 16
// registers AVX has.
template <int Rows>
NMT_TARGET_AVX_VNNI void tile_avx_vnni(const Operands& op, int64_t row0, int64_t block) {
  const int32_t* compensation = op.compensation + block * kBlockColumns;
  const __m256i c0 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(compensation));
  const __m256i c1 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(compensation + 8));
  __m256i acc[Rows][2];
  NMT_UNROLL
  for (int r = 0; r < Rows; ++r) acc[r][0] = c0, acc[r][1] = c1;
  const PackedGroup* w = op.w + block * op.groups;
  const uint8_t* x = op.x + row0 * op.x_stride;
  for (int64_t g = 0; g < op.groups; ++g) {
    const __m256i w0 = _mm256_load_si256(reinterpret_cast<const __m256i*>(w[g].values));
    const __m256i w1 = _mm256_load_si256(reinterpret_cast<const __m256i*>(w[g].values + 32));
    NMT_UNROLL
    for (int r = 0; r < Rows; ++r) {
      const __m256i xb = _mm256_set1_epi32(load_group(x + r * op.x_stride + g * kGroupInputs));
      acc[r][0] = _mm256_dpbusd_avx_epi32(acc[r][0], xb, w0);
      acc[r][1] = _mm256_dpbusd_avx_epi32(acc[r][1], xb, w1);
    }
  }
  NMT_UNROLL
  for (int r = 0; r < Rows; ++r) store_block_avx2(op, row0 + r, block, acc[r][0], acc[r][1]);
}

using Tile = void (*)(const Operands&, int64_t, int64_t);

// Each 16-column block (its weights, ≤ 32 KiB up to in_features 2048, stay in L1) against every
// row in turn, so the weight matrix is read from memory once per call.
void run_tiles(const Operands& op, int64_t block_begin, int64_t block_end, const Tile* tiles, int64_t tile_rows) {
  for (int64_t b = block_begin; b < block_end; ++b)
    for (int64_t m = 0; m < op.rows; m += tile_rows) tiles[std::min(tile_rows, op.rows - m) - 1](op, m, b);
}

}  // namespace

void gemm_avx2(const Operands& op, int64_t block_begin, int64_t block_end) {
  static constexpr Tile kTiles[] = {tile_avx2<1>, tile_avx2<2>, tile_avx2<3>, tile_avx2<4>};
  run_tiles(op, block_begin, block_end, kTiles, 4);
}

void gemm_avx_vnni(const Operands& op, int64_t block_begin, int64_t block_end) {
  static constexpr Tile kTiles[] = {tile_avx_vnni<1>, tile_avx_vnni<2>, tile_avx_vnni<3>,
                                    tile_avx_vnni<4>, tile_avx_vnni<5>, tile_avx_vnni<6>};
  run_tiles(op, block_begin, block_end, kTiles, 6);
}

}  // namespace nmt::quant::detail
#endif
