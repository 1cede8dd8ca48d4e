// Inner loops an AVX2-only CPU could run for nmt's int8 products, timed side by side on one
// thread: the exact kernel nmt ships (lib/nmt/quant/int8_gemm_avx2.cc), two other exact ones,
// and the saturating u8·s8 loop of MKL's and oneDNN's AVX2 int8 GEMMs (which CTranslate2 calls),
// whose products are wrong wherever a pair of products leaves int16. A measurement for
// docs/benchmarks.md, not part of the build:
//
//   g++ -O2 -std=c++17 scripts/int8-avx2-variants.cc -o /tmp/int8-avx2-variants && /tmp/int8-avx2-variants
//
// Each variant computes int32 Σ_i x[m][i]·w[o][i] for rows 64, in 512, out 2048 (a decoding step
// of transformer-base's FFN at batch 64) with 4 × 16 register tiles, and is checked against a
// scalar sum; the table gives GMAC/s (best of 5) and the outputs that differ.
#include <immintrin.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <random>
#include <string>
#include <vector>

#define AVX2 __attribute__((target("avx2")))
#define UNROLL _Pragma("GCC unroll 16")

namespace {

constexpr int kRows = 4;  // rows per register tile; 16 columns (two ymm of int32) per tile

int32_t load4(const void* p) {
  int32_t v;
  std::memcpy(&v, p, 4);
  return v;
}

struct Tile {
  __m256i acc[kRows][2];
};

AVX2 void store(const Tile& t, int32_t* out) {
  for (int r = 0; r < kRows; ++r) {
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(out + 16 * r), t.acc[r][0]);
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(out + 16 * r + 8), t.acc[r][1]);
  }
}

// nmt's: |x| (unsigned) times w with x's sign moved onto it; pairs stay within 2·127·127.
AVX2 void sign_trick(const int8_t* w, const int8_t* x, int64_t groups, int64_t x_stride, int32_t* out) {
  Tile t;
  UNROLL for (int r = 0; r < kRows; ++r) t.acc[r][0] = t.acc[r][1] = _mm256_setzero_si256();
  const __m256i ones = _mm256_set1_epi16(1);
  for (int64_t g = 0; g < groups; ++g) {
    const __m256i w0 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(w + 64 * g));
    const __m256i w1 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(w + 64 * g + 32));
    UNROLL for (int r = 0; r < kRows; ++r) {
      const __m256i xb = _mm256_set1_epi32(load4(x + r * x_stride + 4 * g));
      const __m256i xa = _mm256_abs_epi8(xb);
      t.acc[r][0] = _mm256_add_epi32(t.acc[r][0],
                                     _mm256_madd_epi16(_mm256_maddubs_epi16(xa, _mm256_sign_epi8(w0, xb)), ones));
      t.acc[r][1] = _mm256_add_epi32(t.acc[r][1],
                                     _mm256_madd_epi16(_mm256_maddubs_epi16(xa, _mm256_sign_epi8(w1, xb)), ones));
    }
  }
  store(t, out);
}

// The same packed bytes split into even and odd int16 by shifts, times int16 activations
// (x as [x0 x2 x1 x3] per group of 4): vpmaddwd only, exact.
AVX2 void shift_split(const int8_t* w, const int16_t* x, int64_t groups, int64_t x_stride, int32_t* out) {
  Tile t;
  UNROLL for (int r = 0; r < kRows; ++r) t.acc[r][0] = t.acc[r][1] = _mm256_setzero_si256();
  for (int64_t g = 0; g < groups; ++g) {
    const __m256i w0 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(w + 64 * g));
    const __m256i w1 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(w + 64 * g + 32));
    const __m256i e0 = _mm256_srai_epi16(_mm256_slli_epi16(w0, 8), 8), o0 = _mm256_srai_epi16(w0, 8);
    const __m256i e1 = _mm256_srai_epi16(_mm256_slli_epi16(w1, 8), 8), o1 = _mm256_srai_epi16(w1, 8);
    UNROLL for (int r = 0; r < kRows; ++r) {
      const int16_t* xr = x + r * x_stride + 4 * g;
      const __m256i xe = _mm256_set1_epi32(load4(xr)), xo = _mm256_set1_epi32(load4(xr + 2));
      t.acc[r][0] = _mm256_add_epi32(t.acc[r][0], _mm256_add_epi32(_mm256_madd_epi16(e0, xe), _mm256_madd_epi16(o0, xo)));
      t.acc[r][1] = _mm256_add_epi32(t.acc[r][1], _mm256_add_epi32(_mm256_madd_epi16(e1, xe), _mm256_madd_epi16(o1, xo)));
    }
  }
  store(t, out);
}

// Weights stored as int16 (twice the bytes), pairs of inputs per int32 lane: vpmaddwd only, exact.
AVX2 void int16_weights(const int16_t* w, const int16_t* x, int64_t groups, int64_t x_stride, int32_t* out) {
  Tile t;
  UNROLL for (int r = 0; r < kRows; ++r) t.acc[r][0] = t.acc[r][1] = _mm256_setzero_si256();
  for (int64_t g = 0; g < groups; ++g) {
    const __m256i* p = reinterpret_cast<const __m256i*>(w + 64 * g);
    const __m256i a0 = _mm256_loadu_si256(p), a1 = _mm256_loadu_si256(p + 1);
    const __m256i b0 = _mm256_loadu_si256(p + 2), b1 = _mm256_loadu_si256(p + 3);
    UNROLL for (int r = 0; r < kRows; ++r) {
      const int16_t* xr = x + r * x_stride + 4 * g;
      const __m256i xa = _mm256_set1_epi32(load4(xr)), xb = _mm256_set1_epi32(load4(xr + 2));
      t.acc[r][0] = _mm256_add_epi32(t.acc[r][0], _mm256_add_epi32(_mm256_madd_epi16(a0, xa), _mm256_madd_epi16(b0, xb)));
      t.acc[r][1] = _mm256_add_epi32(t.acc[r][1], _mm256_add_epi32(_mm256_madd_epi16(a1, xa), _mm256_madd_epi16(b1, xb)));
    }
  }
  store(t, out);
}

// MKL's and oneDNN's AVX2 loop: x + 128 (unsigned) times w, pairs summed into int16 with
// saturation (up to 2·255·127 = 64 770 does not fit), 128·Σw subtracted afterwards.
AVX2 void saturating(const int8_t* w, const uint8_t* x, int64_t groups, int64_t x_stride, int32_t* out) {
  Tile t;
  UNROLL for (int r = 0; r < kRows; ++r) t.acc[r][0] = t.acc[r][1] = _mm256_setzero_si256();
  const __m256i ones = _mm256_set1_epi16(1);
  for (int64_t g = 0; g < groups; ++g) {
    const __m256i w0 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(w + 64 * g));
    const __m256i w1 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(w + 64 * g + 32));
    UNROLL for (int r = 0; r < kRows; ++r) {
      const __m256i xb = _mm256_set1_epi32(load4(x + r * x_stride + 4 * g));
      t.acc[r][0] = _mm256_add_epi32(t.acc[r][0], _mm256_madd_epi16(_mm256_maddubs_epi16(xb, w0), ones));
      t.acc[r][1] = _mm256_add_epi32(t.acc[r][1], _mm256_madd_epi16(_mm256_maddubs_epi16(xb, w1), ones));
    }
  }
  store(t, out);
}

std::string cpu_line(const char* key) {
  std::ifstream f("/proc/cpuinfo");
  for (std::string line; std::getline(f, line);)
    if (line.rfind(key, 0) == 0) return line.substr(line.find(':') + 2);
  return "?";
}

}  // namespace

int main() {
  constexpr int64_t rows = 64, in = 512, out = 2048, groups = in / 4, blocks = out / 16;
  std::mt19937 rng(1);
  std::uniform_int_distribution<int> value(-127, 127);
  std::vector<int8_t> w(out * in), x(rows * in);
  for (auto& v : w) v = static_cast<int8_t>(value(rng));
  for (auto& v : x) v = static_cast<int8_t>(value(rng));
  // nmt's layout: blocks of 16 columns, groups of 4 inputs, column c's 4 bytes at c·4; and the
  // int16 layout: per group, input pair p, column half h, 8 columns × 2 inputs.
  std::vector<int8_t> packed(blocks * groups * 64);
  std::vector<int16_t> packed16(blocks * groups * 64);
  std::vector<int32_t> column_sum(out);
  for (int64_t o = 0; o < out; ++o)
    for (int64_t i = 0; i < in; ++i) {
      const int64_t b = o / 16, c = o % 16, g = i / 4, j = i % 4;
      packed[(b * groups + g) * 64 + c * 4 + j] = w[o * in + i];
      packed16[(b * groups + g) * 64 + j / 2 * 32 + c / 8 * 16 + c % 8 * 2 + j % 2] = w[o * in + i];
      column_sum[o] += w[o * in + i];
    }
  std::vector<int16_t> x_even_odd(rows * in), x16(rows * in);
  std::vector<uint8_t> x_offset(rows * in);
  for (int64_t k = 0; k < rows * in; ++k) {
    x16[k] = x[k];
    x_offset[k] = static_cast<uint8_t>(x[k] + 128);
    x_even_odd[k] = x[k / 4 * 4 + (k % 4 == 0 ? 0 : k % 4 == 1 ? 2 : k % 4 == 2 ? 1 : 3)];
  }
  std::vector<int32_t> exact(rows * out);
  for (int64_t m = 0; m < rows; ++m)
    for (int64_t o = 0; o < out; ++o) {
      int32_t s = 0;
      for (int64_t i = 0; i < in; ++i) s += int32_t{x[m * in + i]} * w[o * in + i];
      exact[m * out + o] = s;
    }

  std::printf("CPU: %s\nflags:", cpu_line("model name").c_str());
  const std::string flags = " " + cpu_line("flags") + " ";
  for (const char* f : {"avx2", "fma", "avx512f", "avx512_vnni", "avx_vnni", "amx_int8"})
    if (flags.find(" " + std::string(f) + " ") != std::string::npos) std::printf(" %s", f);
  std::printf("\nrows %ld, in %ld, out %ld, one thread, best of 5\n\n", long(rows), long(in), long(out));
  std::printf("| inner loop | exact | GMAC/s | outputs differing from the exact sum |\n|---|---|---:|---:|\n");

  std::vector<int32_t> y(rows * out), tile(16 * kRows);
  auto run = [&](const char* name, bool is_exact, auto&& kernel, int32_t correction_per_column_sum) {
    double best = 0;
    for (int round = 0; round < 5; ++round) {
      const auto start = std::chrono::steady_clock::now();
      constexpr int repeats = 30;
      for (int k = 0; k < repeats; ++k)
        for (int64_t b = 0; b < blocks; ++b)
          for (int64_t m = 0; m < rows; m += kRows) {
            kernel(b, m, tile.data());
            for (int r = 0; r < kRows; ++r)
              for (int c = 0; c < 16; ++c)
                y[(m + r) * out + b * 16 + c] = tile[16 * r + c] - correction_per_column_sum * column_sum[b * 16 + c];
          }
      const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      best = std::max(best, repeats * double(rows * in * out) / seconds / 1e9);
    }
    int64_t differing = 0;
    for (int64_t k = 0; k < rows * out; ++k) differing += y[k] != exact[k];
    std::printf("| %s | %s | %.1f | %ld of %ld |\n", name, is_exact ? "yes" : "no", best, long(differing),
                long(rows * out));
  };
  run("vpsignb + vpmaddubsw + vpmaddwd (nmt's)", true,
      [&](int64_t b, int64_t m, int32_t* t) { sign_trick(&packed[b * groups * 64], &x[m * in], groups, in, t); }, 0);
  run("shifts + vpmaddwd, int16 activations", true,
      [&](int64_t b, int64_t m, int32_t* t) { shift_split(&packed[b * groups * 64], &x_even_odd[m * in], groups, in, t); },
      0);
  run("vpmaddwd, int16 weights and activations", true,
      [&](int64_t b, int64_t m, int32_t* t) { int16_weights(&packed16[b * groups * 64], &x16[m * in], groups, in, t); },
      0);
  run("x + 128, vpmaddubsw saturating + vpmaddwd (MKL, oneDNN)", false,
      [&](int64_t b, int64_t m, int32_t* t) { saturating(&packed[b * groups * 64], &x_offset[m * in], groups, in, t); },
      128);
  std::printf("\n(the last row's differences: random uniform int8 operands, its worst case)\n");
}
