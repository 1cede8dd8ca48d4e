#pragma once
// exp in 8 float lanes, scalar and AVX2 with the same bits, for nmt's fused kernels (the loss in
// softmax_xent.cc, the recurrent cells in recurrent.cc). Internal to lib/nmt/kernels: compiled
// with -ffp-contract=off there, so no multiply-add is fused and both forms round alike.
#include <cmath>
#include <cstdint>
#include <cstring>
#include <initializer_list>

#if defined(__x86_64__) || defined(__i386__)
#define NMT_KERNELS_X86 1
#include <cpuid.h>
#include <immintrin.h>
#define NMT_TARGET_AVX2 __attribute__((target("avx2")))
#endif

namespace nmt::kernels::vector_exp {

// Cephes' expf (as in avx_mathfun): exp(x) = 2^n · e^r with n = round(x / ln 2) and a degree-5
// polynomial for e^r, |r| ≤ ln 2 / 2; about 1 ulp, 0 below -88.
constexpr float kExpHi = 88.3762626647949f, kExpLo = -88.3762626647949f;
constexpr float kLog2e = 1.44269504088896341f, kLn2Hi = 0.693359375f, kLn2Lo = -2.12194440e-4f;
constexpr float kP0 = 1.9875691500E-4f, kP1 = 1.3981999507E-3f, kP2 = 8.3334519073E-3f, kP3 = 4.1665795894E-2f,
                kP4 = 1.6666665459E-1f, kP5 = 5.0000001201E-1f;

// The same operations in the same order as exp_avx2, lane by lane (min/max as _mm256_min_ps and
// _mm256_max_ps define them), so both give the same bits.
inline float exp_scalar(float x) {
  x = x < kExpHi ? x : kExpHi;
  x = x > kExpLo ? x : kExpLo;
  float fx = x * kLog2e;
  fx = fx + 0.5f;
  fx = std::floor(fx);
  const float hi = fx * kLn2Hi, lo = fx * kLn2Lo;
  x = x - hi;
  x = x - lo;
  const float z = x * x;
  float y = kP0;
  for (float p : {kP1, kP2, kP3, kP4, kP5}) {
    y = y * x;
    y = y + p;
  }
  y = y * z;
  y = y + x;
  y = y + 1.0f;
  const int32_t bits = (static_cast<int32_t>(fx) + 127) << 23;
  float pow2n;
  std::memcpy(&pow2n, &bits, sizeof pow2n);
  return y * pow2n;
}

#ifdef NMT_KERNELS_X86
NMT_TARGET_AVX2 inline __m256 exp_avx2(__m256 x) {
  x = _mm256_min_ps(x, _mm256_set1_ps(kExpHi));
  x = _mm256_max_ps(x, _mm256_set1_ps(kExpLo));
  __m256 fx = _mm256_mul_ps(x, _mm256_set1_ps(kLog2e));
  fx = _mm256_add_ps(fx, _mm256_set1_ps(0.5f));
  fx = _mm256_floor_ps(fx);
  const __m256 hi = _mm256_mul_ps(fx, _mm256_set1_ps(kLn2Hi)), lo = _mm256_mul_ps(fx, _mm256_set1_ps(kLn2Lo));
  x = _mm256_sub_ps(x, hi);
  x = _mm256_sub_ps(x, lo);
  const __m256 z = _mm256_mul_ps(x, x);
  __m256 y = _mm256_set1_ps(kP0);
  for (float p : {kP1, kP2, kP3, kP4, kP5}) {
    y = _mm256_mul_ps(y, x);
    y = _mm256_add_ps(y, _mm256_set1_ps(p));
  }
  y = _mm256_mul_ps(y, z);
  y = _mm256_add_ps(y, x);
  y = _mm256_add_ps(y, _mm256_set1_ps(1.0f));
  __m256i n = _mm256_cvttps_epi32(fx);
  n = _mm256_slli_epi32(_mm256_add_epi32(n, _mm256_set1_epi32(127)), 23);
  return _mm256_mul_ps(y, _mm256_castsi256_ps(n));
}

inline bool cpu_has_avx2() {
  unsigned a, b, c, d;
  if (!__get_cpuid(1, &a, &b, &c, &d)) return false;
  if (!(c & (1u << 27)) || !(c & (1u << 28))) return false;  // OSXSAVE, AVX
  unsigned xcr0_low, xcr0_high;
  __asm__("xgetbv" : "=a"(xcr0_low), "=d"(xcr0_high) : "c"(0));
  if ((xcr0_low & 0x6) != 0x6) return false;  // the OS saves ymm registers
  return __get_cpuid_count(7, 0, &a, &b, &c, &d) && (b & (1u << 5));
}
#endif

// Whether the AVX2 forms of the kernels may run here (asked once per process).
inline bool avx2_kernels_run_here() {
#ifdef NMT_KERNELS_X86
  static const bool avx2 = cpu_has_avx2();
  return avx2;
#else
  return false;
#endif
}

}  // namespace nmt::kernels::vector_exp
