#include "nmt/train/loss.h"

#include <ATen/Parallel.h>

#include "nmt/kernels/softmax_xent.h"

namespace nmt::train {

namespace {

using torch::autograd::AutogradContext;
using torch::autograd::variable_list;

// Smoothing coefficients: loss = c·nll + e·Σ_v -log p_v per position.
struct Smoothing {
  double c, e;
  Smoothing(double epsilon, int64_t vocab) {
    e = epsilon > 0 ? epsilon / static_cast<double>(vocab - 1) : 0.0;
    c = 1.0 - epsilon - e;
    if (epsilon <= 0) c = 1.0;
  }
};

// Per-row log-sum-exp, logit sum and target logit of flat float logits [N, V] (padding rows 0),
// as a [N, 3] float tensor, over LibTorch's intra-op threads.
torch::Tensor row_stats(const torch::Tensor& x, const torch::Tensor& t, int64_t pad_id) {
  const int64_t n = x.size(0), vocab = x.size(1);
  static_assert(sizeof(kernels::XentRowStats) == 3 * sizeof(float));
  auto stats = torch::empty({n, 3}, x.options());
  auto* out = reinterpret_cast<kernels::XentRowStats*>(stats.data_ptr<float>());
  const float* logits = x.data_ptr<float>();
  const int64_t* target = t.data_ptr<int64_t>();
  const auto kernel = kernels::best_xent_kernel();
  at::parallel_for(0, n, 8, [&](int64_t begin, int64_t end) {
    kernels::xent_forward(logits, vocab, target, pad_id, begin, end, out, kernel);
  });
  return stats;
}

// Sums over the rows, in double: {label-smoothed loss, nll}, each 0-dim float.
LossSums sums_from_stats(const torch::Tensor& stats, int64_t vocab, const Smoothing& s) {
  auto d = stats.to(torch::kDouble);
  auto lse = d.select(1, 0), sum_x = d.select(1, 1), x_t = d.select(1, 2);
  auto nll = (lse - x_t).sum();
  auto smooth = (static_cast<double>(vocab) * lse - sum_x).sum();
  auto loss = s.e > 0 ? s.c * nll + s.e * smooth : nll;
  return {loss.to(torch::kFloat), nll.to(torch::kFloat)};
}

void check_targets(const torch::Tensor& t, int64_t vocab) {
  if (t.numel() == 0) return;
  const auto lo = t.min().item<int64_t>(), hi = t.max().item<int64_t>();
  TORCH_CHECK(lo >= 0 && hi < vocab, "target id out of range [0, ", vocab, "): ", lo, "..", hi);
}

// The fused loss as one autograd node: forward saves the logits and the row statistics, and
// backward writes the logits' gradient in one pass (nmt::kernels::xent_backward).
class FusedLabelSmoothedLoss : public torch::autograd::Function<FusedLabelSmoothedLoss> {
 public:
  static variable_list forward(AutogradContext* ctx, const torch::Tensor& logits, const torch::Tensor& target,
                               double epsilon, int64_t pad_id) {
    const int64_t vocab = logits.size(1);
    const Smoothing s(epsilon, vocab);
    auto stats = row_stats(logits, target, pad_id);
    LossSums sums = sums_from_stats(stats, vocab, s);
    ctx->save_for_backward({logits, target, stats});
    ctx->saved_data["c"] = s.c;
    ctx->saved_data["e"] = s.e;
    ctx->saved_data["pad"] = pad_id;
    ctx->mark_non_differentiable({sums.nll});
    return {sums.loss, sums.nll};
  }

  static variable_list backward(AutogradContext* ctx, variable_list grad_outputs) {
    const auto saved = ctx->get_saved_variables();
    const torch::Tensor& x = saved[0];
    const torch::Tensor& t = saved[1];
    const torch::Tensor& stats = saved[2];
    const auto c = static_cast<float>(ctx->saved_data["c"].toDouble());
    const auto e = static_cast<float>(ctx->saved_data["e"].toDouble());
    const int64_t pad_id = ctx->saved_data["pad"].toInt();
    const float scale = grad_outputs[0].defined() ? grad_outputs[0].item<float>() : 0.0f;
    const int64_t n = x.size(0), vocab = x.size(1);
    auto grad = torch::empty_like(x);
    const float* logits = x.data_ptr<float>();
    const int64_t* target = t.data_ptr<int64_t>();
    const auto* row = reinterpret_cast<const kernels::XentRowStats*>(stats.data_ptr<float>());
    float* g = grad.data_ptr<float>();
    const auto kernel = kernels::best_xent_kernel();
    at::parallel_for(0, n, 8, [&](int64_t begin, int64_t end) {
      kernels::xent_backward(logits, vocab, target, pad_id, row, scale, c, e, begin, end, g, kernel);
    });
    return {grad, torch::Tensor(), torch::Tensor(), torch::Tensor()};
  }
};

// The label-smoothed loss from the summed nll and the summed -log p over the vocabulary.
LossSums smoothed(const torch::Tensor& nll, const torch::Tensor& smooth, double epsilon, int64_t vocab) {
  const Smoothing s(epsilon, vocab);
  return {s.c * nll + s.e * smooth, nll.detach()};
}

// LibTorch's operators: any device and dtype (CUDA, bf16 autocast). Only real positions go
// through log_softmax: padding costs nothing beyond the projection. Selecting them needs their
// count on the host (nonzero), which on a GPU waits for the forward pass to finish mid-step;
// there `masked_loss` is used instead.
LossSums composed_loss(const torch::Tensor& flat_logits, const torch::Tensor& flat_target, double epsilon,
                       int64_t pad_id) {
  const int64_t V = flat_logits.size(-1);
  auto index = flat_target.ne(pad_id).nonzero().squeeze(1);
  auto lprobs = torch::log_softmax(flat_logits.index_select(0, index), -1);
  auto tgt = flat_target.index_select(0, index);
  auto nll = -lprobs.gather(1, tgt.unsqueeze(1)).squeeze(1).sum();
  if (epsilon <= 0) return {nll, nll.detach()};
  return smoothed(nll, -lprobs.sum(), epsilon, V);
}

// The same sums with padding rows weighted 0 instead of removed: no host read, at the price of
// log_softmax over the padding rows (a few percent of a length-bucketed batch).
LossSums masked_loss(const torch::Tensor& flat_logits, const torch::Tensor& flat_target, double epsilon,
                     int64_t pad_id) {
  const int64_t V = flat_logits.size(-1);
  auto keep = flat_target.ne(pad_id).to(flat_logits.scalar_type());
  auto lprobs = torch::log_softmax(flat_logits, -1);
  auto nll = -(lprobs.gather(1, flat_target.unsqueeze(1)).squeeze(1) * keep).sum();
  if (epsilon <= 0) return {nll, nll.detach()};
  return smoothed(nll, -(lprobs.sum(1) * keep).sum(), epsilon, V);
}

}  // namespace

LossSums label_smoothed_loss(const torch::Tensor& logits, const torch::Tensor& target, double epsilon,
                             int64_t pad_id) {
  const int64_t V = logits.size(-1);
  auto flat_logits = logits.reshape({-1, V});
  auto flat_target = target.reshape({-1});
  if (logits.is_cuda()) return masked_loss(flat_logits, flat_target.to(torch::kLong), epsilon, pad_id);
  if (logits.scalar_type() != torch::kFloat) return composed_loss(flat_logits, flat_target, epsilon, pad_id);
  flat_logits = flat_logits.contiguous();
  flat_target = flat_target.to(torch::kLong).contiguous();
  check_targets(flat_target.masked_select(flat_target.ne(pad_id)), V);
  if (!logits.requires_grad() || !torch::GradMode::is_enabled()) {
    LossSums sums = sums_from_stats(row_stats(flat_logits, flat_target, pad_id), V, Smoothing(epsilon, V));
    return {sums.loss, sums.nll};
  }
  auto out = FusedLabelSmoothedLoss::apply(flat_logits, flat_target, epsilon, pad_id);
  return {out[0], out[1]};
}

LossSums label_smoothed_loss_masked(const torch::Tensor& logits, const torch::Tensor& target, double epsilon,
                                    int64_t pad_id) {
  return masked_loss(logits.reshape({-1, logits.size(-1)}), target.reshape({-1}).to(torch::kLong), epsilon, pad_id);
}

LossSums label_smoothed_loss_reference(const torch::Tensor& logits, const torch::Tensor& target, double epsilon,
                                       int64_t pad_id) {
  return composed_loss(logits.reshape({-1, logits.size(-1)}), target.reshape({-1}), epsilon, pad_id);
}

}  // namespace nmt::train
