// The AVX-512 VNNI kernel (Ice Lake / Cascade Lake and later Xeons, Zen 4 and later): vpdpbusd on
// zmm, 64 u8×s8 multiply-adds per instruction. Compiled for that instruction set per function,
// called only when cpuid says the CPU has it (int8_gemm.cc).
#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>

#include <array>
#include <utility>

#include "nmt/quant/int8_kernels.h"

// GCC 12's _mm512_cvtepi32_ps passes _mm512_undefined_ps() and warns about it at every call
// (GCC bug 105593, fixed in 12.3).
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wuninitialized"
#endif

#define NMT_TARGET_AVX512_VNNI __attribute__((target("avx512f,avx512bw,avx512vnni")))

namespace nmt::quant::detail {
namespace {

// Rows × (Blocks · 16) int32 accumulators, 5 × 48 for the inner tiles: per 4 inputs, 3 weight
// loads, 5 broadcasts and 15 vpdpbusd. Larger tiles would fit the 32 zmm registers, but GCC 12
// spills them: 6 × 64 (24 accumulators) stored 19 registers to the stack on every iteration and
// ran at 245-290 GFLOP/s-equivalent where 5 × 48 runs at 430-710 on one Zen 5 core (in 512,
// rows 6-320, out 512-8000; 6 × 32 and 4 × 48, also spill-free, came within 10-20 %).
template <int Rows, int Blocks>
NMT_TARGET_AVX512_VNNI void tile_avx512(const Operands& op, int64_t row0, int64_t block0) {
  __m512i acc[Rows][Blocks];
  const PackedGroup* w[Blocks];
  NMT_UNROLL
  for (int v = 0; v < Blocks; ++v) {
    const __m512i start = _mm512_loadu_si512(op.compensation + (block0 + v) * kBlockColumns);
    NMT_UNROLL
    for (int r = 0; r < Rows; ++r) acc[r][v] = start;
    w[v] = op.w + (block0 + v) * op.groups;
  }
  const uint8_t* x = op.x + row0 * op.x_stride;
  for (int64_t g = 0; g < op.groups; ++g) {
    __m512i wv[Blocks];
    NMT_UNROLL
    for (int v = 0; v < Blocks; ++v) wv[v] = _mm512_load_si512(w[v][g].values);
    NMT_UNROLL
    for (int r = 0; r < Rows; ++r) {
      const __m512i xb = _mm512_set1_epi32(load_group(x + r * op.x_stride + g * kGroupInputs));
      NMT_UNROLL
      for (int v = 0; v < Blocks; ++v) acc[r][v] = _mm512_dpbusd_epi32(acc[r][v], xb, wv[v]);
    }
  }
  // The epilogue, in dequantise()'s order; the masks cover a partial last block.
  NMT_UNROLL
  for (int v = 0; v < Blocks; ++v) {
    const int64_t column = (block0 + v) * kBlockColumns;
    const int64_t width = std::min(kBlockColumns, op.out - column);
    const __mmask16 mask = static_cast<__mmask16>((1u << width) - 1);
    const __m512 ws = _mm512_loadu_ps(op.w_scales + column);
    const __m512 bias = op.bias ? _mm512_maskz_loadu_ps(mask, op.bias + column) : _mm512_setzero_ps();
    NMT_UNROLL
    for (int r = 0; r < Rows; ++r) {
      const __m512 xs = _mm512_set1_ps(op.x_scales[row0 + r]);
      const __m512 product = _mm512_mul_ps(_mm512_mul_ps(_mm512_cvtepi32_ps(acc[r][v]), xs), ws);
      _mm512_mask_storeu_ps(op.y + (row0 + r) * op.out + column, mask, _mm512_add_ps(product, bias));
    }
  }
}

using Tile = void (*)(const Operands&, int64_t, int64_t);
constexpr int kTileRows = 5, kTileBlocks = int{kAvx512TileBlocks};

// kTiles[r - 1][b - 1] = tile_avx512<r, b>: the edges of the matrix get smaller tiles.
template <int Rows, size_t... Blocks>
constexpr std::array<Tile, kTileBlocks> tiles_of_rows(std::index_sequence<Blocks...>) {
  return {tile_avx512<Rows, int{Blocks} + 1>...};
}
template <size_t... Rows>
constexpr std::array<std::array<Tile, kTileBlocks>, kTileRows> tile_table(std::index_sequence<Rows...>) {
  return {tiles_of_rows<int{Rows} + 1>(std::make_index_sequence<kTileBlocks>())...};
}
constexpr auto kTiles = tile_table(std::make_index_sequence<kTileRows>());

}  // namespace

// A panel of 48 columns (its weights: 24 KiB at in_features 512, 96 KiB at 2048, held in L1/L2)
// against every row in turn, so the weight matrix is read from memory once per call.
void gemm_avx512_vnni(const Operands& op, int64_t block_begin, int64_t block_end) {
  for (int64_t b = block_begin; b < block_end; b += kTileBlocks) {
    const int64_t blocks = std::min<int64_t>(kTileBlocks, block_end - b);
    for (int64_t m = 0; m < op.rows; m += kTileRows)
      kTiles[std::min<int64_t>(kTileRows, op.rows - m) - 1][blocks - 1](op, m, b);
  }
}

}  // namespace nmt::quant::detail
#endif
