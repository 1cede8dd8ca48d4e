#include "nmt/train/step.h"

#include <algorithm>
#include <cmath>
#include <sstream>
#include <string>
#include <type_traits>

#include <ATen/Parallel.h>
#include <ATen/autocast_mode.h>
#include <torch/version.h>

#include "nmt/kernels/adam.h"
#include "nmt/kernels/fused_switch.h"

namespace nmt::train {

torch::optim::Adam make_optimizer(const std::vector<torch::Tensor>& params, const TrainOptions& o) {
  return torch::optim::Adam(params, torch::optim::AdamOptions(o.lr)
                                        .betas({o.adam_beta1, o.adam_beta2})
                                        .eps(o.adam_eps)
                                        .weight_decay(o.weight_decay));
}

double budget_progress(const TrainOptions& o, int64_t step, double elapsed_s) {
  double p = 0;
  if (o.max_steps > 0) p = static_cast<double>(std::max<int64_t>(step - 1, 0)) / static_cast<double>(o.max_steps);
  if (o.max_time_s > 0) p = std::max(p, elapsed_s / o.max_time_s);
  return std::clamp(p, 0.0, 1.0);
}

double learning_rate(const TrainOptions& o, int64_t step, double progress) {
  const double s = static_cast<double>(std::max<int64_t>(step, 1));
  const double w = static_cast<double>(std::max<int64_t>(o.warmup, 1));
  const double ramp = std::min(1.0, s / w);
  switch (o.lr_schedule) {
    case LrSchedule::kConstant: return o.lr * ramp;
    case LrSchedule::kInverseSqrt: return s < w ? o.lr * ramp : o.lr * std::sqrt(w / s);
    case LrSchedule::kLinear: return ramp * (o.min_lr + (o.lr - o.min_lr) * (1.0 - progress));
    case LrSchedule::kCosine: return ramp * (o.min_lr + (o.lr - o.min_lr) * 0.5 * (1.0 + std::cos(M_PI * progress)));
  }
  return o.lr;
}

void set_lr(torch::optim::Adam& optimizer, double lr) {
  for (auto& group : optimizer.param_groups()) static_cast<torch::optim::AdamOptions&>(group.options()).lr(lr);
}

namespace {
// The key of a parameter in the optimizer's state map: its TensorImpl's address, as a string
// in LibTorch 1.13 and as the pointer itself in 2.x.
template <class Key>
Key state_key(const torch::Tensor& p) {
  if constexpr (std::is_same_v<Key, std::string>) {
    std::ostringstream key;  // c10::guts::to_string's own spelling (1.13: optim/adam.cpp)
    key << p.unsafeGetTensorImpl();
    return key.str();
  } else {
    return p.unsafeGetTensorImpl();
  }
}
}  // namespace

namespace {
// What a fused Adam step needs: every parameter with a gradient, its moments and state, one
// step count and one set of hyperparameters. Empty where a fused kernel does not apply.
struct AdamTensors {
  std::vector<torch::Tensor> params, grads, exp_avgs, exp_avg_sqs;
  std::vector<torch::optim::AdamParamState*> states;
  int64_t step = -1;
};

bool same_hyperparameters(const torch::optim::AdamOptions& a, const torch::optim::AdamOptions& b) {
  return !a.amsgrad() && a.lr() == b.lr() && a.betas() == b.betas() && a.eps() == b.eps() &&
         a.weight_decay() == b.weight_decay();
}

AdamTensors gather_adam_tensors(torch::optim::Adam& optimizer) {
  using Key = typename std::decay_t<decltype(optimizer.state())>::key_type;
  AdamTensors t;
  auto& state = optimizer.state();
  const auto& first = static_cast<const torch::optim::AdamOptions&>(optimizer.param_groups().front().options());
  for (auto& group : optimizer.param_groups()) {
    if (!same_hyperparameters(static_cast<const torch::optim::AdamOptions&>(group.options()), first)) return {};
    for (auto& p : group.params()) {
      if (!p.grad().defined()) continue;
      if (p.scalar_type() != torch::kFloat || p.grad().is_sparse() || p.device() != p.grad().device()) return {};
      auto it = state.find(state_key<Key>(p));
      if (it == state.end()) return {};
      auto* s = static_cast<torch::optim::AdamParamState*>(it->second.get());
      if (t.step >= 0 && s->step() != t.step) return {};
      t.step = s->step();
      t.params.push_back(p);
      t.grads.push_back(p.grad());
      t.exp_avgs.push_back(s->exp_avg());
      t.exp_avg_sqs.push_back(s->exp_avg_sq());
      t.states.push_back(s);
    }
  }
  return t;
}

bool all_contiguous(const AdamTensors& t) {
  for (size_t i = 0; i < t.params.size(); ++i)
    if (!t.params[i].is_contiguous() || !t.grads[i].is_contiguous() || !t.exp_avgs[i].is_contiguous() ||
        !t.exp_avg_sqs[i].is_contiguous())
      return false;
  return true;
}

// nmt's own kernel (nmt/kernels/adam.h), parameter by parameter, elements split over the threads.
void cpu_adam(const AdamTensors& t, const torch::optim::AdamOptions& o) {
  const auto c = kernels::adam_coefficients(o.lr(), std::get<0>(o.betas()), std::get<1>(o.betas()), o.eps(),
                                            o.weight_decay(), t.step + 1);
  const auto kernel = kernels::best_adam_kernel();
  for (size_t i = 0; i < t.params.size(); ++i) {
    float* p = t.params[i].data_ptr<float>();
    const float* g = t.grads[i].data_ptr<float>();
    float* m = t.exp_avgs[i].data_ptr<float>();
    float* v = t.exp_avg_sqs[i].data_ptr<float>();
    at::parallel_for(0, t.params[i].numel(), 32768, [&](int64_t begin, int64_t end) {
      kernels::adam_update(p, g, m, v, begin, end, c, kernel);
    });
  }
}
}  // namespace

bool fused_adam_step(torch::optim::Adam& optimizer) {
  AdamTensors t = gather_adam_tensors(optimizer);
  if (t.params.empty()) return false;
  const auto& first = static_cast<const torch::optim::AdamOptions&>(optimizer.param_groups().front().options());
  torch::NoGradGuard no_grad;
  if (t.params.front().is_cuda()) {
    // The kernel reads each parameter's step count (already incremented, as PyTorch's _fused_adam
    // does before calling it) from a float tensor on the parameters' device; one shared tensor,
    // filled there, costs no host-to-device copy.
    const auto step_count = torch::full({}, static_cast<double>(t.step + 1), t.params.front().options());
    const std::vector<torch::Tensor> steps(t.params.size(), step_count);
    at::_fused_adam_(t.params, t.grads, t.exp_avgs, t.exp_avg_sqs, {}, steps, first.lr(), std::get<0>(first.betas()),
                     std::get<1>(first.betas()), first.weight_decay(), first.eps(), /*amsgrad=*/false,
                     /*maximize=*/false);
  } else {
    if (!t.params.front().device().is_cpu() || !all_contiguous(t)) return false;
    cpu_adam(t, first);
  }
  for (auto* s : t.states) s->step(t.step + 1);
  return true;
}

namespace {
// Turns on CUDA autocast to bf16 for its lifetime (compiled everywhere, used only on CUDA).
class AutocastScope {
 public:
  explicit AutocastScope(bool enable) : enabled_(enable) {
    if (!enabled_) return;
#if TORCH_VERSION_MAJOR > 2 || (TORCH_VERSION_MAJOR == 2 && TORCH_VERSION_MINOR >= 4)
    at::autocast::set_autocast_dtype(at::kCUDA, at::kBFloat16);  // the per-device API of 2.4+
    at::autocast::set_autocast_enabled(at::kCUDA, true);
#else
    at::autocast::set_autocast_gpu_dtype(at::kBFloat16);
    at::autocast::set_enabled(true);
#endif
  }
  ~AutocastScope() {
    if (!enabled_) return;
#if TORCH_VERSION_MAJOR > 2 || (TORCH_VERSION_MAJOR == 2 && TORCH_VERSION_MINOR >= 4)
    at::autocast::set_autocast_enabled(at::kCUDA, false);
#else
    at::autocast::set_enabled(false);
#endif
    at::autocast::clear_cache();
  }
  AutocastScope(const AutocastScope&) = delete;
  AutocastScope& operator=(const AutocastScope&) = delete;

 private:
  bool enabled_;
};

std::vector<torch::Tensor> defined_grads(const std::vector<torch::Tensor>& params) {
  std::vector<torch::Tensor> grads;
  for (const auto& p : params)
    if (p.grad().defined()) grads.push_back(p.grad());
  return grads;
}

// The global L2 norm of all gradients, as a 0-dim tensor. On a GPU the per-tensor norms come
// from one multi-tensor kernel (_foreach_norm) instead of one launch per tensor; on the CPU the
// loop stays, for the same bits as before.
torch::Tensor grad_norm(const std::vector<torch::Tensor>& params) {
  const auto grads = defined_grads(params);
  if (grads.empty()) return torch::zeros({});
  if (grads.front().is_cuda()) return torch::stack(at::_foreach_norm(grads)).norm();
  std::vector<torch::Tensor> norms;
  norms.reserve(grads.size());
  for (const auto& g : grads) norms.push_back(g.norm());
  return torch::stack(norms).norm();
}

// Scales gradients so their global norm is at most max_norm, without a host round trip.
void clip_gradients(const std::vector<torch::Tensor>& params, const torch::Tensor& norm, double max_norm) {
  auto coef = (max_norm / (norm + 1e-6)).clamp_max(1.0);
  const auto grads = defined_grads(params);
#if TORCH_VERSION_MAJOR > 2 || (TORCH_VERSION_MAJOR == 2 && TORCH_VERSION_MINOR >= 1)
  if (!grads.empty() && grads.front().is_cuda()) {
    at::_foreach_mul_(grads, coef);  // one launch (the tensor overload is 2.1's)
    return;
  }
#endif
  for (const auto& g : grads) g.mul_(coef);
}
}  // namespace

StepResult train_step(models::Seq2SeqModelImpl& model, torch::optim::Adam& optimizer,
                      const std::vector<torch::Tensor>& params, const std::vector<Batch>& micro_batches,
                      int64_t update_tgt_tokens, const TrainOptions& o, double lr,
                      const SumAcrossProcesses& sum_across_processes) {
  set_lr(optimizer, lr);
  optimizer.zero_grad();
  StepResult r;
  const double denominator = static_cast<double>(std::max<int64_t>(update_tgt_tokens, 1));
  for (const Batch& batch : micro_batches) {
    torch::Tensor logits;
    {
      // bf16 autocast (CUDA only): matrix products in bf16, the loss in fp32.
      AutocastScope autocast(o.bf16 && batch.src.is_cuda());
      logits = model.forward(batch.src, batch.src_mask, batch.tgt_in);
    }
    LossSums sums = label_smoothed_loss(logits.to(torch::kFloat), batch.tgt_out, o.label_smoothing);
    (sums.loss / denominator).backward();
    r.sums.loss = r.sums.loss.defined() ? r.sums.loss + sums.loss.detach() : sums.loss.detach();
    r.sums.nll = r.sums.nll.defined() ? r.sums.nll + sums.nll.detach() : sums.nll.detach();
  }
  if (!r.sums.loss.defined()) {
    const auto device = params.empty() ? torch::Device(torch::kCPU) : params.front().device();
    r.sums.loss = torch::zeros({}, torch::TensorOptions().device(device));
    r.sums.nll = torch::zeros({}, torch::TensorOptions().device(device));
  }
  if (sum_across_processes) {
    // Every process must hand over the same list: a parameter this process's batches did not
    // reach gets a zero gradient. The loss sums ride along in the same buckets.
    std::vector<torch::Tensor> tensors;
    tensors.reserve(params.size() + 1);
    for (const auto& p : params) {
      if (!p.grad().defined()) p.mutable_grad() = torch::zeros_like(p);
      tensors.push_back(p.grad());
    }
    auto sums = torch::stack({r.sums.loss.to(torch::kFloat), r.sums.nll.to(torch::kFloat)});
    tensors.push_back(sums);
    sum_across_processes(tensors);
    r.sums.loss = sums[0];
    r.sums.nll = sums[1];
  }
  // A non-finite loss or gradient skips the update: weights and Adam moments stay as they were.
  // One host read for both checks: a GPU's queue drains once per update, not twice.
  auto norm = grad_norm(params);
  const bool finite = torch::isfinite(norm.to(torch::kDouble) + r.sums.loss.to(torch::kDouble)).item<bool>();
  if (!finite) {
    optimizer.zero_grad();
    return r;
  }
  if (o.clip_norm > 0) clip_gradients(params, norm, o.clip_norm);
  if (!kernels::fused_training_kernels_enabled() || !fused_adam_step(optimizer)) optimizer.step();
  r.applied = true;
  return r;
}

StepResult train_step(models::Seq2SeqModelImpl& model, torch::optim::Adam& optimizer,
                      const std::vector<torch::Tensor>& params, const Batch& batch, const TrainOptions& o, double lr) {
  return train_step(model, optimizer, params, std::vector<Batch>{batch}, batch.tgt_tokens, o, lr);
}

}  // namespace nmt::train
