#include "nmt/kernels/softmax_xent.h"

#include <cmath>
#include <cstring>

#include "nmt/kernels/vector_exp.h"

namespace nmt::kernels {

namespace {

constexpr int kLanes = 8;  // one AVX2 register of floats; the scalar kernel keeps as many sums

using vector_exp::exp_scalar;
#ifdef NMT_KERNELS_X86
using vector_exp::exp_avx2;
#endif

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

#ifdef NMT_KERNELS_X86
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

#endif

}  // namespace

bool xent_kernel_supported(XentKernel kernel) {
  return kernel == XentKernel::portable || vector_exp::avx2_kernels_run_here();
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
#ifdef NMT_KERNELS_X86
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
#ifdef NMT_KERNELS_X86
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
