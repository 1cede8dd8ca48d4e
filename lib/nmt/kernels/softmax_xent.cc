#include "nmt/kernels/softmax_xent.h"

#include <cmath>
#include <cstring>
#include <initializer_list>

#if defined(__x86_64__) || defined(__i386__)
#define NMT_XENT_X86 1
#include <cpuid.h>
#include <immintrin.h>
#define NMT_TARGET_AVX2 __attribute__((target("avx2")))
#endif

namespace nmt::kernels {

namespace {

constexpr int kLanes = 8;  // one AVX2 register of floats; the scalar kernel keeps as many sums

// Cephes' expf (as in avx_mathfun): exp(x) = 2^n · e^r with n = round(x / ln 2) and a degree-5
// polynomial for e^r, |r| ≤ ln 2 / 2; about 1 ulp, 0 below -88.
constexpr float kExpHi = 88.3762626647949f, kExpLo = -88.3762626647949f;
constexpr float kLog2e = 1.44269504088896341f, kLn2Hi = 0.693359375f, kLn2Lo = -2.12194440e-4f;
constexpr float kP0 = 1.9875691500E-4f, kP1 = 1.3981999507E-3f, kP2 = 8.3334519073E-3f, kP3 = 4.1665795894E-2f,
                kP4 = 1.6666665459E-1f, kP5 = 5.0000001201E-1f;

// The same operations in the same order as exp_avx2, lane by lane (min/max as _mm256_min_ps and
// _mm256_max_ps define them), so both give the same bits.
float exp_scalar(float x) {
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

double add_lanes(const float* lanes) {
  double s = 0;
  for (int i = 0; i < kLanes; ++i) s += lanes[i];
  return s;
}

// Lane l holds the columns v ≡ l (mod 8); `from` is where the vector loop stopped (a multiple of 8).
void forward_tail(const float* x, int64_t from, int64_t vocab, float* max_lanes, float* sum_lanes) {
  for (int64_t v = from; v < vocab; ++v) {
    const int l = static_cast<int>(v % kLanes);
    max_lanes[l] = max_lanes[l] > x[v] ? max_lanes[l] : x[v];
    sum_lanes[l] += x[v];
  }
}

XentRowStats finish_row(const float* sum_lanes, float row_max, const float* exp_lanes, float target_logit) {
  XentRowStats s;
  s.log_sum_exp = static_cast<float>(row_max + std::log(add_lanes(exp_lanes)));
  s.sum_logits = static_cast<float>(add_lanes(sum_lanes));
  s.target_logit = target_logit;
  return s;
}

float max_of(const float* lanes) {
  float m = lanes[0];
  for (int i = 1; i < kLanes; ++i) m = m > lanes[i] ? m : lanes[i];
  return m;
}

void forward_portable(const float* x, int64_t vocab, int64_t t, XentRowStats* out) {
  float max_lanes[kLanes], sum_lanes[kLanes] = {}, exp_lanes[kLanes] = {};
  for (int l = 0; l < kLanes; ++l) max_lanes[l] = -INFINITY;
  forward_tail(x, 0, vocab, max_lanes, sum_lanes);
  const float m = max_of(max_lanes);
  for (int64_t v = 0; v < vocab; ++v) exp_lanes[v % kLanes] += exp_scalar(x[v] - m);
  *out = finish_row(sum_lanes, m, exp_lanes, x[t]);
}

void backward_portable(const float* x, int64_t vocab, int64_t t, const XentRowStats& s, float scale, float c, float e,
                       float* g) {
  for (int64_t v = 0; v < vocab; ++v) g[v] = (exp_scalar(x[v] - s.log_sum_exp) - e) * scale;
  g[t] = (exp_scalar(x[t] - s.log_sum_exp) - e - c) * scale;
}

#ifdef NMT_XENT_X86
NMT_TARGET_AVX2 __m256 exp_avx2(__m256 x) {
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

NMT_TARGET_AVX2 void forward_avx2(const float* x, int64_t vocab, int64_t t, XentRowStats* out) {
  const int64_t full = vocab / kLanes * kLanes;
  __m256 vmax = _mm256_set1_ps(-INFINITY), vsum = _mm256_setzero_ps();
  for (int64_t v = 0; v < full; v += kLanes) {
    const __m256 xv = _mm256_loadu_ps(x + v);
    vmax = _mm256_max_ps(vmax, xv);
    vsum = _mm256_add_ps(vsum, xv);
  }
  float max_lanes[kLanes], sum_lanes[kLanes], exp_lanes[kLanes];
  _mm256_storeu_ps(max_lanes, vmax);
  _mm256_storeu_ps(sum_lanes, vsum);
  forward_tail(x, full, vocab, max_lanes, sum_lanes);
  const float m = max_of(max_lanes);
  const __m256 vm = _mm256_set1_ps(m);
  __m256 vexp = _mm256_setzero_ps();
  for (int64_t v = 0; v < full; v += kLanes) vexp = _mm256_add_ps(vexp, exp_avx2(_mm256_sub_ps(_mm256_loadu_ps(x + v), vm)));
  _mm256_storeu_ps(exp_lanes, vexp);
  for (int64_t v = full; v < vocab; ++v) exp_lanes[v % kLanes] += exp_scalar(x[v] - m);
  *out = finish_row(sum_lanes, m, exp_lanes, x[t]);
}

NMT_TARGET_AVX2 void backward_avx2(const float* x, int64_t vocab, int64_t t, const XentRowStats& s, float scale, float c,
                                   float e, float* g) {
  const int64_t full = vocab / kLanes * kLanes;
  const __m256 vlse = _mm256_set1_ps(s.log_sum_exp), ve = _mm256_set1_ps(e), vscale = _mm256_set1_ps(scale);
  for (int64_t v = 0; v < full; v += kLanes) {
    const __m256 p = exp_avx2(_mm256_sub_ps(_mm256_loadu_ps(x + v), vlse));
    _mm256_storeu_ps(g + v, _mm256_mul_ps(_mm256_sub_ps(p, ve), vscale));
  }
  for (int64_t v = full; v < vocab; ++v) g[v] = (exp_scalar(x[v] - s.log_sum_exp) - e) * scale;
  g[t] = (exp_scalar(x[t] - s.log_sum_exp) - e - c) * scale;
}

bool cpu_has_avx2() {
  unsigned a, b, c, d;
  if (!__get_cpuid(1, &a, &b, &c, &d)) return false;
  if (!(c & (1u << 27)) || !(c & (1u << 28))) return false;  // OSXSAVE, AVX
  unsigned xcr0_low, xcr0_high;
  __asm__("xgetbv" : "=a"(xcr0_low), "=d"(xcr0_high) : "c"(0));
  if ((xcr0_low & 0x6) != 0x6) return false;  // the OS saves ymm registers
  return __get_cpuid_count(7, 0, &a, &b, &c, &d) && (b & (1u << 5));
}
#endif

}  // namespace

bool xent_kernel_supported(XentKernel kernel) {
#ifdef NMT_XENT_X86
  static const bool avx2 = cpu_has_avx2();
  return kernel == XentKernel::portable || avx2;
#else
  return kernel == XentKernel::portable;
#endif
}

XentKernel best_xent_kernel() {
  return xent_kernel_supported(XentKernel::avx2) ? XentKernel::avx2 : XentKernel::portable;
}

void xent_forward(const float* logits, int64_t vocab, const int64_t* target, int64_t ignore_id, int64_t begin,
                  int64_t end, XentRowStats* stats, XentKernel kernel) {
  for (int64_t r = begin; r < end; ++r) {
    if (target[r] == ignore_id) {
      stats[r] = XentRowStats{};
      continue;
    }
    const float* x = logits + r * vocab;
#ifdef NMT_XENT_X86
    if (kernel == XentKernel::avx2) {
      forward_avx2(x, vocab, target[r], &stats[r]);
      continue;
    }
#endif
    forward_portable(x, vocab, target[r], &stats[r]);
  }
  (void)kernel;
}

void xent_backward(const float* logits, int64_t vocab, const int64_t* target, int64_t ignore_id,
                   const XentRowStats* stats, float scale, float target_coeff, float uniform_coeff, int64_t begin,
                   int64_t end, float* grad, XentKernel kernel) {
  for (int64_t r = begin; r < end; ++r) {
    float* g = grad + r * vocab;
    if (target[r] == ignore_id) {
      std::memset(g, 0, static_cast<size_t>(vocab) * sizeof(float));
      continue;
    }
    const float* x = logits + r * vocab;
#ifdef NMT_XENT_X86
    if (kernel == XentKernel::avx2) {
      backward_avx2(x, vocab, target[r], stats[r], scale, target_coeff, uniform_coeff, g);
      continue;
    }
#endif
    backward_portable(x, vocab, target[r], stats[r], scale, target_coeff, uniform_coeff, g);
  }
  (void)kernel;
}

}  // namespace nmt::kernels
