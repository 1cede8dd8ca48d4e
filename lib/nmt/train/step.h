#pragma once
// One optimisation step, shared by the trainer and `nmt bench` so the benchmark times exactly
// what training runs.
#include <functional>
#include <vector>

#include <torch/torch.h>

#include "nmt/models/model.h"
#include "nmt/tensor/batch.h"
#include "nmt/train/loss.h"
#include "nmt/train/options.h"

namespace nmt::train {

// Adam(β1, β2, ε, weight decay) as configured; the learning rate is set per step.
torch::optim::Adam make_optimizer(const std::vector<torch::Tensor>& params, const TrainOptions& o);

// How far a run is through its budget before update `step` (counted from 1), in [0, 1]: the
// larger of (step - 1) / --max-steps and elapsed / --max-time (0 when neither is set).
double budget_progress(const TrainOptions& o, int64_t step, double elapsed_s);

// The learning rate of update `step` (counted from 1): a linear warm-up over --warmup updates,
// then inverse-sqrt decay or constant; linear and cosine instead multiply the warm-up ramp by a
// decay from --lr to --min-lr over the budget, reaching --min-lr as the budget ends. `progress`
// (budget_progress) matters only to those two.
double learning_rate(const TrainOptions& o, int64_t step, double progress = 0);
void set_lr(torch::optim::Adam& optimizer, double lr);

// Adam's update of every parameter that has a gradient, fused, on the optimizer's own state, so
// checkpoints and --resume are unchanged: on CUDA LibTorch's kernel (at::_fused_adam_, PyTorch's
// `fused=True`; torch::optim::Adam::step launches about ten kernels per parameter tensor, over
// 2,000 for transformer-base, which costs more host time than the model's forward pass at small
// batches), on the CPU nmt's own (nmt/kernels/adam.h: one pass over each parameter instead of ten;
// it agrees with torch::optim::Adam to float rounding, not bit for bit). Returns false, having
// changed nothing, where it does not apply: a parameter without Adam state yet (the first update:
// `step()` makes it), not float32, sparse, not contiguous, amsgrad, or parameters at different
// step counts. train_step uses it unless nmt::kernels::set_fused_training_kernels(false).
bool fused_adam_step(torch::optim::Adam& optimizer);

struct StepResult {
  LossSums sums;      // summed over the batch's target tokens (detached)
  bool applied = false;  // false: the loss or a gradient was not finite and nothing changed
};

// Sums tensors in place over the data-parallel processes (Distributed::all_reduce_sum).
using SumAcrossProcesses = std::function<void(const std::vector<torch::Tensor>&)>;

// One update from several micro-batches: the batches of this process (gradient accumulation
// and/or data parallelism), where `update_tgt_tokens` counts the target tokens of the whole
// update over every process. Each micro-batch backpropagates its loss sum / update_tgt_tokens,
// so after `sum_across_processes` (when given) every process holds exactly the gradient of
// the combined batch, and the loss sums returned are the whole update's. Clipping, the
// non-finite check and Adam then see the same numbers on every process, which keeps them in
// lock-step. An empty `micro_batches` (a process with no batch left at the end of an epoch)
// contributes zeros.
StepResult train_step(models::Seq2SeqModelImpl& model, torch::optim::Adam& optimizer,
                      const std::vector<torch::Tensor>& params, const std::vector<Batch>& micro_batches,
                      int64_t update_tgt_tokens, const TrainOptions& o, double lr,
                      const SumAcrossProcesses& sum_across_processes = {});

// zero_grad, teacher-forced forward, label-smoothed loss per target token, backward, then
// (when loss and gradient norm are finite) clipping and the Adam update at learning rate `lr`.
// One host read of the gradient norm and loss per step (free on CPU).
StepResult train_step(models::Seq2SeqModelImpl& model, torch::optim::Adam& optimizer,
                      const std::vector<torch::Tensor>& params, const Batch& batch, const TrainOptions& o, double lr);

}  // namespace nmt::train
