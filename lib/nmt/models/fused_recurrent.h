#pragma once
// Autograd functions over the fused GRU kernels (nmt/kernels/recurrent.h): the GRU cell and the
// Bahdanau attention scores, one node each in the graph instead of ten to twenty. They apply to
// float32 tensors on the CPU when a gradient is being recorded (training); decoding and
// validation keep ATen's operations, so translations stay those of the plain-PyTorch reference.
#include <torch/torch.h>

namespace nmt::models {

// True where the fused training path is used: CPU, float32, gradients recorded, and not turned
// off with nmt::kernels::set_fused_training_kernels(false) (nmt/kernels/fused_switch.h).
bool fused_recurrence_applies(const torch::Tensor& like);

// h' of torch.nn.GRU's cell from its two gate products, [rows, 3H] each (r, z, n), and h [rows, H].
// `active` (uint8 [rows], optional): rows without one keep h' = h (a sentence that has ended).
torch::Tensor fused_gru_cell(const torch::Tensor& input_gates, const torch::Tensor& hidden_gates,
                             const torch::Tensor& h, const torch::Tensor& active = {});

// scores [rows, S] = v · tanh(q[:, None, :] + k): q [rows, H], k [rows, S, H], v [1, H] (a
// Linear(H, 1) weight).
torch::Tensor fused_additive_scores(const torch::Tensor& q, const torch::Tensor& k, const torch::Tensor& v);

}  // namespace nmt::models
