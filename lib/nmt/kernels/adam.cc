#include "nmt/kernels/adam.h"

#include <cmath>

#include "nmt/kernels/vector_exp.h"

namespace nmt::kernels {

namespace {

void update_portable(float* p, const float* grad, float* m, float* v, int64_t begin, int64_t end,
                     const AdamCoefficients& c) {
  for (int64_t i = begin; i < end; ++i) {
    float g = grad[i];
    if (c.weight_decay != 0) g = g + c.weight_decay * p[i];
    m[i] = m[i] * c.beta1 + g * c.one_minus_beta1;
    v[i] = v[i] * c.beta2 + g * g * c.one_minus_beta2;
    const float denom = std::sqrt(v[i]) / c.sqrt_bias_correction2 + c.eps;
    p[i] = p[i] - c.step_size * (m[i] / denom);
  }
}

#ifdef NMT_KERNELS_X86
NMT_TARGET_AVX2 void update_avx2(float* p, const float* grad, float* m, float* v, int64_t begin, int64_t end,
                                 const AdamCoefficients& c) {
  const __m256 b1 = _mm256_set1_ps(c.beta1), b2 = _mm256_set1_ps(c.beta2);
  const __m256 omb1 = _mm256_set1_ps(c.one_minus_beta1), omb2 = _mm256_set1_ps(c.one_minus_beta2);
  const __m256 bc2 = _mm256_set1_ps(c.sqrt_bias_correction2), eps = _mm256_set1_ps(c.eps);
  const __m256 step = _mm256_set1_ps(c.step_size), wd = _mm256_set1_ps(c.weight_decay);
  int64_t i = begin;
  for (; i + 8 <= end; i += 8) {
    const __m256 pv = _mm256_loadu_ps(p + i);
    __m256 g = _mm256_loadu_ps(grad + i);
    if (c.weight_decay != 0) g = _mm256_add_ps(g, _mm256_mul_ps(wd, pv));
    const __m256 mv = _mm256_add_ps(_mm256_mul_ps(_mm256_loadu_ps(m + i), b1), _mm256_mul_ps(g, omb1));
    const __m256 vv =
        _mm256_add_ps(_mm256_mul_ps(_mm256_loadu_ps(v + i), b2), _mm256_mul_ps(_mm256_mul_ps(g, g), omb2));
    const __m256 denom = _mm256_add_ps(_mm256_div_ps(_mm256_sqrt_ps(vv), bc2), eps);
    _mm256_storeu_ps(m + i, mv);
    _mm256_storeu_ps(v + i, vv);
    _mm256_storeu_ps(p + i, _mm256_sub_ps(pv, _mm256_mul_ps(step, _mm256_div_ps(mv, denom))));
  }
  update_portable(p, grad, m, v, i, end, c);
}
#endif

}  // namespace

bool adam_kernel_supported(AdamKernel kernel) {
  return kernel == AdamKernel::portable || vector_exp::avx2_kernels_run_here();
}

AdamKernel best_adam_kernel() {
  return adam_kernel_supported(AdamKernel::avx2) ? AdamKernel::avx2 : AdamKernel::portable;
}

AdamCoefficients adam_coefficients(double lr, double beta1, double beta2, double eps, double weight_decay, int64_t t) {
  const double bias_correction1 = 1.0 - std::pow(beta1, static_cast<double>(t));
  const double bias_correction2 = 1.0 - std::pow(beta2, static_cast<double>(t));
  AdamCoefficients c;
  c.beta1 = static_cast<float>(beta1);
  c.beta2 = static_cast<float>(beta2);
  c.one_minus_beta1 = static_cast<float>(1.0 - beta1);
  c.one_minus_beta2 = static_cast<float>(1.0 - beta2);
  c.step_size = static_cast<float>(lr / bias_correction1);
  c.sqrt_bias_correction2 = static_cast<float>(std::sqrt(bias_correction2));
  c.eps = static_cast<float>(eps);
  c.weight_decay = static_cast<float>(weight_decay);
  return c;
}

void adam_update(float* param, const float* grad, float* exp_avg, float* exp_avg_sq, int64_t begin, int64_t end,
                 const AdamCoefficients& c, AdamKernel kernel) {
#ifdef NMT_KERNELS_X86
  if (kernel == AdamKernel::avx2) return update_avx2(param, grad, exp_avg, exp_avg_sq, begin, end, c);
#endif
  (void)kernel;
  update_portable(param, grad, exp_avg, exp_avg_sq, begin, end, c);
}

}  // namespace nmt::kernels
