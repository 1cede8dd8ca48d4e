#include "nmt/train/step.h"

#include <cmath>

namespace nmt::train {

torch::optim::Adam make_optimizer(const std::vector<torch::Tensor>& params, const TrainOptions& o) {
  return torch::optim::Adam(params, torch::optim::AdamOptions(o.lr)
                                        .betas({o.adam_beta1, o.adam_beta2})
                                        .eps(o.adam_eps)
                                        .weight_decay(o.weight_decay));
}

double learning_rate(const TrainOptions& o, int64_t step) {
  const double s = static_cast<double>(std::max<int64_t>(step, 1));
  const double w = static_cast<double>(std::max<int64_t>(o.warmup, 1));
  if (s < w) return o.lr * s / w;
  if (o.lr_schedule == "constant") return o.lr;
  return o.lr * std::sqrt(w / s);
}

void set_lr(torch::optim::Adam& optimizer, double lr) {
  for (auto& group : optimizer.param_groups()) static_cast<torch::optim::AdamOptions&>(group.options()).lr(lr);
}

namespace {
// The global L2 norm of all gradients, as a 0-dim tensor.
torch::Tensor grad_norm(const std::vector<torch::Tensor>& params) {
  std::vector<torch::Tensor> norms;
  for (const auto& p : params)
    if (p.grad().defined()) norms.push_back(p.grad().norm());
  if (norms.empty()) return torch::zeros({});
  return torch::stack(norms).norm();
}

// Scales gradients so their global norm is at most max_norm, without a host round trip.
void clip_gradients(const std::vector<torch::Tensor>& params, const torch::Tensor& norm, double max_norm) {
  auto coef = (max_norm / (norm + 1e-6)).clamp_max(1.0);
  for (const auto& p : params)
    if (p.grad().defined()) p.grad().mul_(coef);
}
}  // namespace

StepResult train_step(models::Seq2SeqModelImpl& model, torch::optim::Adam& optimizer,
                      const std::vector<torch::Tensor>& params, const Batch& batch, const TrainOptions& o, double lr) {
  set_lr(optimizer, lr);
  optimizer.zero_grad();
  auto logits = model.forward(batch.src, batch.src_mask, batch.tgt_in);
  StepResult r;
  r.sums = label_smoothed_loss(logits, batch.tgt_out, o.label_smoothing);
  (r.sums.loss / static_cast<double>(batch.tgt_tokens)).backward();
  r.sums.loss = r.sums.loss.detach();
  r.sums.nll = r.sums.nll.detach();
  // A non-finite loss or gradient skips the update: weights and Adam moments stay as they were.
  auto norm = grad_norm(params);
  if (!std::isfinite(norm.item<double>()) || !std::isfinite(r.sums.loss.item<double>())) {
    optimizer.zero_grad();
    return r;
  }
  if (o.clip_norm > 0) clip_gradients(params, norm, o.clip_norm);
  optimizer.step();
  r.applied = true;
  return r;
}

}  // namespace nmt::train
