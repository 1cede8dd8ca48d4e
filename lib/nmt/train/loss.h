#pragma once
#include <torch/torch.h>

namespace nmt::train {

struct LossSums {
  torch::Tensor loss;  // label-smoothed loss summed over non-pad positions (0-dim)
  torch::Tensor nll;   // plain negative log-likelihood summed over non-pad positions (0-dim)
};

// Label-smoothed cross-entropy as in fairseq: (1-ε-ε/(V-1))·nll + ε/(V-1)·Σ_v -log p_v,
// ignoring positions whose target is padding. logits [B,T,V], target [B,T]. On the CPU in
// float32 it is one fused node (nmt/kernels/softmax_xent.h: no log-probabilities materialised,
// the gradient written in one pass, sums in double); on CUDA label_smoothed_loss_masked;
// elsewhere LibTorch's operators.
LossSums label_smoothed_loss(const torch::Tensor& logits, const torch::Tensor& target, double epsilon,
                             int64_t pad_id = 0);

// The same loss with padding rows weighted 0 rather than removed: no host read of the number
// of real positions, so a GPU's queue need not drain mid-step. What label_smoothed_loss runs
// on CUDA.
LossSums label_smoothed_loss_masked(const torch::Tensor& logits, const torch::Tensor& target, double epsilon,
                                    int64_t pad_id = 0);

// The same loss from LibTorch's operators (log_softmax, gather, sum) on any device: what the
// fused kernel is tested against.
LossSums label_smoothed_loss_reference(const torch::Tensor& logits, const torch::Tensor& target, double epsilon,
                                       int64_t pad_id = 0);

}  // namespace nmt::train
