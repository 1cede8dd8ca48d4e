#pragma once
// The label-smoothed cross-entropy of a training step, fused: per row of the logits, one read for
// the forward pass and one read plus one write for the gradient, instead of materialising the
// log-probabilities, the one-hot target and their gradients over the whole vocabulary (8,000
// columns × ~2,500 target tokens per transformer-small batch = 80 MB per tensor). Torch-free:
// raw rows; the autograd wrapper is train/loss.cc.
//
// Every kernel computes exactly the same bits: exp is one polynomial (Cephes' expf, no fused
// multiply-add) evaluated in 8 lanes, scalar or AVX2, and sums are kept per lane then added in
// one order, so a run's losses do not depend on which CPU it trained on.
#include <cstdint>

namespace nmt::kernels {

enum class XentKernel { portable, avx2 };
XentKernel best_xent_kernel();  // AVX2 where the CPU and OS have it
bool xent_kernel_supported(XentKernel kernel);

struct XentRowStats {
  float log_sum_exp = 0;  // log Σ_v exp(x_v)
  float sum_logits = 0;   // Σ_v x_v
  float target_logit = 0; // x_target
};

// Rows [begin, end) of `logits` (row-major, `vocab` columns); a row whose target is `ignore_id`
// (padding) gets all-zero stats and is otherwise skipped.
void xent_forward(const float* logits, int64_t vocab, const int64_t* target, int64_t ignore_id, int64_t begin,
                  int64_t end, XentRowStats* stats, XentKernel kernel);

// The gradient of Σ_rows [c·(lse - x_t) + e·(V·lse - Σ_v x_v)] times `scale` (the loss's upstream
// gradient), written to rows [begin, end) of `grad`: scale · (softmax(x)_v - e - c·[v = t]), as
// c + e·V = 1 for label smoothing (c = 1 - ε - e, e = ε / (V - 1)). Padding rows get zeros.
void xent_backward(const float* logits, int64_t vocab, const int64_t* target, int64_t ignore_id,
                   const XentRowStats* stats, float scale, float target_coeff, float uniform_coeff, int64_t begin,
                   int64_t end, float* grad, XentKernel kernel);

}  // namespace nmt::kernels
