#pragma once
// A Linear layer that can run its matrix product in int8 (`nmt quantize`, `nmt translate --int8`).
//
// It is torch::nn::Linear (same parameters "weight" and "bias", same initialisation and the same
// fp32 forward, bit for bit), so model.pt files and training checkpoints are unchanged and
// training is unaffected. Once quantised it also holds the weight as int8 values with one scale
// per output channel (nmt/quant/int8_gemm.h), packed for this CPU's kernel, and its forward
// pass on the CPU without gradients (decoding) runs nmt::quant::linear: activations quantised
// per row, int32 accumulation. Everywhere else (training, autograd, CUDA) it stays the fp32
// product, with the weight replaced by its dequantised values so every path computes with the
// same weights.
#include <memory>

#include <torch/torch.h>

#include "nmt/quant/int8_gemm.h"

namespace nmt::models {

class QuantizableLinearImpl : public torch::nn::LinearImpl {
 public:
  using torch::nn::LinearImpl::LinearImpl;

  torch::Tensor forward(const torch::Tensor& input);

  // Quantises the current fp32 weight per output channel.
  void quantize();
  // Takes a quantised weight (read from an int8 weights file) of this layer's shape.
  void set_quantized(quant::QuantizedWeight weight);
  bool quantized() const { return quantized_ != nullptr; }
  // The int8 values and scales (null unless quantised), as written to int8 weights files.
  const quant::QuantizedWeight* quantized_weight() const { return quantized_.get(); }

 private:
  bool runs_int8(const torch::Tensor& input) const;
  torch::Tensor forward_int8(const torch::Tensor& input);
  std::shared_ptr<const quant::QuantizedWeight> quantized_;
  std::shared_ptr<const quant::PackedWeight> packed_;
};
TORCH_MODULE(QuantizableLinear);

// A quantised Linear (no bias, in evaluation mode) computing x · weightᵀ with an int8 copy of
// `weight` [out, in]: the tied output projection, whose weight is the target embedding (the
// lookup keeps the fp32 table).
QuantizableLinear quantized_copy(const torch::Tensor& weight);

}  // namespace nmt::models
