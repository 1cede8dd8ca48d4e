#pragma once
// Helpers shared by the model implementations.
#include <torch/torch.h>

namespace nmt::models {

// Additive mask value for padded / future positions: large and finite, so a fully masked row
// gives uniform weights instead of NaN.
inline constexpr double kMaskValue = -1e9;

// Alive while a model is built only for a file's weights to replace its own (load_model): the
// models' own initialisation (below, and their embedding and output tables) is skipped then.
// torch::nn's constructors still draw theirs. Drawing weights that are thrown away took about
// 5 % of a transformer-small's time to first translation (perf, 2026-11-27). Training never
// sets it: a run started from other weights (--init-from) draws fresh ones first, so its random
// generator is where a fresh run's is.
class WeightsFromFileGuard {
 public:
  WeightsFromFileGuard() : previous_(active_) { active_ = true; }
  ~WeightsFromFileGuard() { active_ = previous_; }
  WeightsFromFileGuard(const WeightsFromFileGuard&) = delete;
  WeightsFromFileGuard& operator=(const WeightsFromFileGuard&) = delete;
  static bool active() { return active_; }

 private:
  bool previous_;
  static inline thread_local bool active_ = false;
};

// Xavier-uniform weights and zero bias, the initialisation every Linear here uses
// (torch::nn::Linear or QuantizableLinear).
template <typename Linear>
void init_linear(Linear& linear) {
  if (WeightsFromFileGuard::active()) return;
  torch::nn::init::xavier_uniform_(linear->weight);
  if (linear->bias.defined()) torch::nn::init::zeros_(linear->bias);
}

}  // namespace nmt::models
