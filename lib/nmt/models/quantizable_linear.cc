#include "nmt/models/quantizable_linear.h"

#include "nmt/tensor/threads.h"

namespace nmt::models {

bool QuantizableLinearImpl::runs_int8(const torch::Tensor& input) const {
  return packed_ && !is_training() && !torch::GradMode::is_enabled() && input.device().is_cpu() &&
         input.scalar_type() == torch::kFloat;
}

torch::Tensor QuantizableLinearImpl::forward(const torch::Tensor& input) {
  if (runs_int8(input)) return forward_int8(input);
  // On a GPU, ATen's linear folds a 3-D input into one addmm with the bias in it (PyTorch's
  // F.linear); torch::nn::Linear's C++ arithmetic is matmul then `+= bias`, a kernel more each
  // way. On the CPU the C++ arithmetic stays: the Python reference reproduces its bits.
  if (input.is_cuda()) return at::linear(input, weight, bias);
  return torch::nn::LinearImpl::forward(input);
}

torch::Tensor QuantizableLinearImpl::forward_int8(const torch::Tensor& input) {
  const int64_t in = packed_->in_features(), out = packed_->out_features();
  TORCH_CHECK(input.dim() >= 1 && input.size(-1) == in, "int8 Linear: input of width ", input.size(-1), ", expected ",
              in);
  const torch::Tensor x = input.contiguous();
  auto sizes = input.sizes().vec();
  sizes.back() = out;
  torch::Tensor y = torch::empty(sizes, input.options());
  const int64_t rows = in > 0 ? x.numel() / in : 0;
  if (rows > 0) {
    const float* b = bias.defined() ? bias.data_ptr<float>() : nullptr;
    quant::linear(x.data_ptr<float>(), rows, *packed_, b, y.data_ptr<float>(), configured_threads());
  }
  return y;
}

void QuantizableLinearImpl::quantize() {
  const torch::Tensor w = weight.detach().to(torch::kCPU, torch::kFloat).contiguous();
  set_quantized(quant::quantize_weight(w.data_ptr<float>(), w.size(0), w.size(1)));
}

void QuantizableLinearImpl::set_quantized(quant::QuantizedWeight q) {
  TORCH_CHECK(q.out_features == weight.size(0) && q.in_features == weight.size(1), "int8 weight of shape ",
              q.out_features, "x", q.in_features, " for a Linear of shape ", weight.size(0), "x", weight.size(1));
  // The fp32 weight becomes the dequantised one, so the fp32 fallback (CUDA, gradients) computes
  // with the weights the int8 path uses.
  torch::NoGradGuard no_grad;
  auto values = torch::from_blob(q.values.data(), {q.out_features, q.in_features}, torch::kInt8);
  auto scales = torch::from_blob(q.scales.data(), {q.out_features, 1}, torch::kFloat);
  weight.copy_(values.to(torch::kFloat) * scales);
  packed_ = std::make_shared<const quant::PackedWeight>(q);
  quantized_ = std::make_shared<const quant::QuantizedWeight>(std::move(q));
}

QuantizableLinear quantized_copy(const torch::Tensor& weight) {
  QuantizableLinear copy(torch::nn::LinearOptions(weight.size(1), weight.size(0)).bias(false));
  {
    torch::NoGradGuard no_grad;
    copy->weight.copy_(weight);
  }
  copy->quantize();
  copy->eval();
  return copy;
}

}  // namespace nmt::models
