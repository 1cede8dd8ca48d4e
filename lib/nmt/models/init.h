#pragma once
// Helpers shared by the model implementations.
#include <torch/torch.h>

namespace nmt::models {

// Additive mask value for padded / future positions: large and finite, so a fully masked row
// gives uniform weights instead of NaN.
inline constexpr double kMaskValue = -1e9;

// Xavier-uniform weights and zero bias, the initialisation every Linear here uses
// (torch::nn::Linear or QuantizableLinear).
template <typename Linear>
void init_linear(Linear& linear) {
  torch::nn::init::xavier_uniform_(linear->weight);
  if (linear->bias.defined()) torch::nn::init::zeros_(linear->bias);
}

}  // namespace nmt::models
