#pragma once
// The GRU decoder's training step, fused: the GRU cell and the Bahdanau attention scores, forward
// and backward, each one pass over its rows instead of a chain of ATen operations and their
// autograd nodes (a GRU cell is 10 operations forward and about 20 backward, over tensors of a
// few hundred kilobytes, at every target position). Torch-free: raw rows; the autograd wrappers
// are models/fused_recurrent.cc, checked against autograd's gradients in tests/unit/models/fused_recurrent_test.cc.
//
// sigmoid(x) = 1 / (1 + exp(-x)) and tanh(x) = 2 / (1 + exp(-2x)) - 1 with vector_exp.h's exp
// (about 1 ulp; tanh's absolute error stays below 1.2e-7); a NaN goes through as a NaN. The AVX2
// and the portable kernels give the same bits.
#include <cstdint>

namespace nmt::kernels {

enum class RecurrentKernel { portable, avx2 };
RecurrentKernel best_recurrent_kernel();  // AVX2 where the CPU and OS have it
bool recurrent_kernel_supported(RecurrentKernel kernel);

void sigmoid_inplace(float* x, int64_t n, RecurrentKernel kernel);
void tanh_inplace(float* x, int64_t n, RecurrentKernel kernel);

// PyTorch's GRU cell (gates in the order r, z, n of torch.nn.GRU's weights) for rows
// [begin, end): input_gates = W_ih·x + b_ih and hidden_gates = W_hh·h + b_hh, [rows, 3H] each;
//   r = σ(i_r + h_r), z = σ(i_z + h_z), n = tanh(i_n + r·h_n), h' = n + z·(h - n).
// `saved` [rows, 4H] keeps r, z, n and h_n for the backward pass. `active` (may be null: all
// rows) marks the rows whose sequence has a token at this step; the others keep h' = h, as a
// packed sequence leaves a finished (or, backwards, not yet started) sentence's state alone.
void gru_cell_forward(const float* input_gates, const float* hidden_gates, const float* h, const uint8_t* active,
                      int64_t H, int64_t begin, int64_t end, float* h_next, float* saved, RecurrentKernel kernel);

// Given dL/dh' (`grad_next`), writes dL/d(input_gates), dL/d(hidden_gates) [rows, 3H] and dL/dh
// [rows, H] through the cell (an inactive row: zero for the gates, dL/dh' for h).
void gru_cell_backward(const float* grad_next, const float* h, const float* saved, const uint8_t* active, int64_t H,
                       int64_t begin, int64_t end, float* grad_input_gates, float* grad_hidden_gates, float* grad_h);

// Bahdanau's scores for rows [begin, end): scores[b, s] = Σ_j v_j · tanh(q[b, j] + k[b, s, j]),
// q [rows, H], k [rows, S, H]; `saved` [rows, S, H] keeps the tanh values.
void additive_scores_forward(const float* q, const float* k, const float* v, int64_t S, int64_t H, int64_t begin,
                             int64_t end, float* scores, float* saved, RecurrentKernel kernel);

// Given dL/dscores [rows, S], writes dL/dk [rows, S, H] and dL/dq [rows, H]; dL/dv is
// Σ_{b,s} dL/dscores[b, s] · saved[b, s, :], one matrix-vector product left to the caller.
void additive_scores_backward(const float* grad_scores, const float* v, const float* saved, int64_t S, int64_t H,
                              int64_t begin, int64_t end, float* grad_k, float* grad_q);

}  // namespace nmt::kernels
