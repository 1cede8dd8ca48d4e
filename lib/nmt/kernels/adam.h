#pragma once
// Adam's update of one parameter in one pass over its elements, for training on the CPU:
// torch::optim::Adam::step runs about ten ATen operations per parameter, each a pass over
// parameter-sized tensors (on transformer-small's 11.5 M parameters, 55 ms of a ~500 ms update on
// two Zen 4 cores); this reads the gradient, the parameter and both moments once and writes the
// last three once. Torch-free; the caller (train/step.cc) keeps the optimizer's own state tensors,
// so checkpoints and --resume do not change.
//
// Per element, in torch::optim::Adam's order (LibTorch 1.13 and 2.x, amsgrad off):
//   g = grad + weight_decay·p;  m = β1·m + (1-β1)·g;  v = β2·v + (1-β2)·g²;
//   p = p - step_size · m / (√v / √(1-β2^t) + ε),  step_size = lr / (1-β1^t).
// The AVX2 and the portable kernels give the same bits (no fused multiply-add in either).
#include <cstdint>

namespace nmt::kernels {

enum class AdamKernel { portable, avx2 };
AdamKernel best_adam_kernel();
bool adam_kernel_supported(AdamKernel kernel);

struct AdamCoefficients {
  float beta1, beta2, one_minus_beta1, one_minus_beta2;
  float step_size;             // lr / (1 - β1^t)
  float sqrt_bias_correction2; // √(1 - β2^t)
  float eps, weight_decay;
};

// t is the step count after this update (1 for the first).
AdamCoefficients adam_coefficients(double lr, double beta1, double beta2, double eps, double weight_decay, int64_t t);

// Elements [begin, end) of one parameter.
void adam_update(float* param, const float* grad, float* exp_avg, float* exp_avg_sq, int64_t begin, int64_t end,
                 const AdamCoefficients& c, AdamKernel kernel);

}  // namespace nmt::kernels
