#include "nmt/kernels/recurrent.h"

#include <cmath>
#include <cstring>

#include "nmt/kernels/vector_exp.h"

namespace nmt::kernels {

namespace {

using vector_exp::exp_scalar;

// 1 / (1 + exp(-scale·x)), the common part of sigmoid (scale 1) and tanh (scale 2).
float logistic_scalar(float x, float scale) {
  if (x != x) return x;
  const float e = exp_scalar(-(scale * x));
  return 1.0f / (1.0f + e);
}

void sigmoid_portable(float* x, int64_t n) {
  for (int64_t i = 0; i < n; ++i) x[i] = logistic_scalar(x[i], 1.0f);
}

void tanh_portable(float* x, int64_t n) {
  for (int64_t i = 0; i < n; ++i) {
    const float y = logistic_scalar(x[i], 2.0f);
    x[i] = y != y ? y : 2.0f * y - 1.0f;
  }
}

#ifdef NMT_KERNELS_X86
using vector_exp::exp_avx2;

NMT_TARGET_AVX2 __m256 logistic_avx2(__m256 x, float scale) {
  const __m256 e = exp_avx2(_mm256_sub_ps(_mm256_setzero_ps(), _mm256_mul_ps(_mm256_set1_ps(scale), x)));
  const __m256 y = _mm256_div_ps(_mm256_set1_ps(1.0f), _mm256_add_ps(_mm256_set1_ps(1.0f), e));
  return _mm256_blendv_ps(y, x, _mm256_cmp_ps(x, x, _CMP_UNORD_Q));  // NaN stays NaN
}

NMT_TARGET_AVX2 void sigmoid_avx2(float* x, int64_t n) {
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) _mm256_storeu_ps(x + i, logistic_avx2(_mm256_loadu_ps(x + i), 1.0f));
  sigmoid_portable(x + i, n - i);
}

NMT_TARGET_AVX2 void tanh_avx2(float* x, int64_t n) {
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    const __m256 v = _mm256_loadu_ps(x + i);
    const __m256 y = logistic_avx2(v, 2.0f);
    const __m256 t = _mm256_sub_ps(_mm256_mul_ps(_mm256_set1_ps(2.0f), y), _mm256_set1_ps(1.0f));
    _mm256_storeu_ps(x + i, _mm256_blendv_ps(t, v, _mm256_cmp_ps(v, v, _CMP_UNORD_Q)));
  }
  tanh_portable(x + i, n - i);
}
#endif

}  // namespace

bool recurrent_kernel_supported(RecurrentKernel kernel) {
  return kernel == RecurrentKernel::portable || vector_exp::avx2_kernels_run_here();
}

RecurrentKernel best_recurrent_kernel() {
  return recurrent_kernel_supported(RecurrentKernel::avx2) ? RecurrentKernel::avx2 : RecurrentKernel::portable;
}

void sigmoid_inplace(float* x, int64_t n, RecurrentKernel kernel) {
#ifdef NMT_KERNELS_X86
  if (kernel == RecurrentKernel::avx2) return sigmoid_avx2(x, n);
#endif
  (void)kernel;
  sigmoid_portable(x, n);
}

void tanh_inplace(float* x, int64_t n, RecurrentKernel kernel) {
#ifdef NMT_KERNELS_X86
  if (kernel == RecurrentKernel::avx2) return tanh_avx2(x, n);
#endif
  (void)kernel;
  tanh_portable(x, n);
}

void gru_cell_forward(const float* input_gates, const float* hidden_gates, const float* h, const uint8_t* active,
                      int64_t H, int64_t begin, int64_t end, float* h_next, float* saved, RecurrentKernel kernel) {
  for (int64_t row = begin; row < end; ++row) {
    if (active && !active[row]) {
      std::memcpy(h_next + row * H, h + row * H, static_cast<size_t>(H) * sizeof(float));
      continue;
    }
    const float* gi = input_gates + row * 3 * H;
    const float* gh = hidden_gates + row * 3 * H;
    const float* hr = h + row * H;
    float* s = saved + row * 4 * H;  // r | z | n | h_n
    float *r = s, *z = s + H, *n = s + 2 * H, *hn = s + 3 * H;
    for (int64_t j = 0; j < 2 * H; ++j) s[j] = gi[j] + gh[j];
    sigmoid_inplace(s, 2 * H, kernel);
    for (int64_t j = 0; j < H; ++j) {
      hn[j] = gh[2 * H + j];
      n[j] = gi[2 * H + j] + r[j] * hn[j];
    }
    tanh_inplace(n, H, kernel);
    float* out = h_next + row * H;
    for (int64_t j = 0; j < H; ++j) out[j] = n[j] + z[j] * (hr[j] - n[j]);
  }
}

void gru_cell_backward(const float* grad_next, const float* h, const float* saved, const uint8_t* active, int64_t H,
                       int64_t begin, int64_t end, float* grad_input_gates, float* grad_hidden_gates, float* grad_h) {
  for (int64_t row = begin; row < end; ++row) {
    const float* g = grad_next + row * H;
    if (active && !active[row]) {
      std::memset(grad_input_gates + row * 3 * H, 0, static_cast<size_t>(3 * H) * sizeof(float));
      std::memset(grad_hidden_gates + row * 3 * H, 0, static_cast<size_t>(3 * H) * sizeof(float));
      std::memcpy(grad_h + row * H, g, static_cast<size_t>(H) * sizeof(float));
      continue;
    }
    const float* hr = h + row * H;
    const float* s = saved + row * 4 * H;
    const float *r = s, *z = s + H, *n = s + 2 * H, *hn = s + 3 * H;
    float* gi = grad_input_gates + row * 3 * H;
    float* gh = grad_hidden_gates + row * 3 * H;
    float* dh = grad_h + row * H;
    for (int64_t j = 0; j < H; ++j) {
      const float dn = g[j] * (1.0f - z[j]);
      const float dz = g[j] * (hr[j] - n[j]);
      dh[j] = g[j] * z[j];
      const float da_n = dn * (1.0f - n[j] * n[j]);
      const float da_r = da_n * hn[j] * r[j] * (1.0f - r[j]);
      const float da_z = dz * z[j] * (1.0f - z[j]);
      gi[j] = da_r;
      gi[H + j] = da_z;
      gi[2 * H + j] = da_n;
      gh[j] = da_r;
      gh[H + j] = da_z;
      gh[2 * H + j] = da_n * r[j];
    }
  }
}

void additive_scores_forward(const float* q, const float* k, const float* v, int64_t S, int64_t H, int64_t begin,
                             int64_t end, float* scores, float* saved, RecurrentKernel kernel) {
  for (int64_t row = begin; row < end; ++row) {
    const float* qr = q + row * H;
    for (int64_t s = 0; s < S; ++s) {
      const float* ks = k + (row * S + s) * H;
      float* t = saved + (row * S + s) * H;
      for (int64_t j = 0; j < H; ++j) t[j] = qr[j] + ks[j];
      tanh_inplace(t, H, kernel);
      float sum = 0;
      for (int64_t j = 0; j < H; ++j) sum += v[j] * t[j];
      scores[row * S + s] = sum;
    }
  }
}

void additive_scores_backward(const float* grad_scores, const float* v, const float* saved, int64_t S, int64_t H,
                              int64_t begin, int64_t end, float* grad_k, float* grad_q) {
  for (int64_t row = begin; row < end; ++row) {
    float* dq = grad_q + row * H;
    for (int64_t j = 0; j < H; ++j) dq[j] = 0;
    for (int64_t s = 0; s < S; ++s) {
      const float gs = grad_scores[row * S + s];
      const float* t = saved + (row * S + s) * H;
      float* dk = grad_k + (row * S + s) * H;
      for (int64_t j = 0; j < H; ++j) {
        dk[j] = gs * v[j] * (1.0f - t[j] * t[j]);
        dq[j] += dk[j];
      }
    }
  }
}

}  // namespace nmt::kernels
