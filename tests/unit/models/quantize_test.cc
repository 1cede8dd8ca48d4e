// int8 decoding in-process: quantised Linears and int8 weights files (`nmt quantize` and int8
// model directories end to end: tests/cli/quantize_test.cc).
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <nlohmann/json.hpp>

#include "nmt/models/gru_config.h"
#include "nmt/models/model_io.h"
#include "nmt/models/quantizable_linear.h"
#include "nmt/models/quantize.h"
#include "nmt/models/transformer_config.h"
#include "nmt/quant/int8_gemm.h"
#include "nmt/util/error.h"
#include "test_support.h"
#include "torch_test_models.h"

namespace fs = std::filesystem;
using nmt::test::fixture;
using nmt::test::nmt_binary;
using nmt::test::run_command;
using nmt::test::slurp;

namespace {

// ---------------------------------------------------------------------------------------
// QuantizableLinear

// It is torch::nn::Linear for everything but decoding: same parameter names, same values from
// the same seed, and the same fp32 output bit for bit, so model.pt files, checkpoints and
// training are unchanged.
TEST(QuantizableLinear, IsTorchLinearBitForBitUntilQuantised) {
  torch::manual_seed(3);
  torch::nn::Linear reference(24, 10);
  torch::manual_seed(3);
  nmt::models::QuantizableLinear linear(24, 10);
  std::vector<std::string> names, reference_names;
  for (const auto& p : linear->named_parameters()) names.push_back(p.key());
  for (const auto& p : reference->named_parameters()) reference_names.push_back(p.key());
  EXPECT_EQ(names, reference_names);
  EXPECT_TRUE(torch::equal(linear->weight, reference->weight));
  EXPECT_TRUE(torch::equal(linear->bias, reference->bias));
  auto x = torch::randn({3, 7, 24});
  EXPECT_TRUE(torch::equal(linear(x), reference(x)));
  linear->eval();
  torch::InferenceMode inference;
  EXPECT_TRUE(torch::equal(linear(x), reference(x)));
}

// The int8 product y = x·Wᵀ + b, both sides quantised symmetrically (W per output channel with
// scale s_w, x per row with scale s_x), errs by at most half a step of each:
//   |Δy| ≤ s_w/2·Σ|x| + s_x/2·Σ|w| + n·s_x·s_w/4.
// Each output is checked against that bound, and the whole output within 1% (relative norm).
TEST(QuantizableLinear, Int8OutputIsWithinTheRoundingBoundOfFp32) {
  torch::manual_seed(11);
  const int64_t in = 96, out = 40;
  nmt::models::QuantizableLinear linear(in, out);
  auto x = torch::randn({2, 9, in});
  x[0][3].mul_(20);            // one row with outliers: per-row scales keep the others precise
  torch::NoGradGuard no_grad;  // as in decoding
  const auto fp32 = linear(x);
  linear->quantize();
  linear->eval();
  const auto int8 = linear(x);
  ASSERT_EQ(int8.sizes(), fp32.sizes());
  const auto w = linear->weight;                                          // now the dequantised weight
  const auto s_w = std::get<0>(w.abs().max(1)) / 127;                     // [out]
  const auto s_x = std::get<0>(x.abs().max(-1, /*keepdim=*/true)) / 127;  // [2,9,1]
  const auto bound = s_w * x.abs().sum(-1, true) / 2 + s_x * w.abs().sum(1) / 2 + in * s_x * s_w / 4;
  const auto exact = torch::nn::functional::linear(x, w, linear->bias);  // dequantised W, exact x
  EXPECT_TRUE((int8 - exact).abs().le(bound * 1.001 + 1e-5).all().item<bool>())
      << "worst excess: " << ((int8 - exact).abs() - bound).max().item<float>();
  const double relative = ((int8 - fp32).norm() / fp32.norm()).item<double>();
  EXPECT_LT(relative, 0.01);
  EXPECT_GT(relative, 0.0);  // it did run in int8
}

// Training (or anything needing gradients) stays fp32 even after quantising: the dequantised
// weight, differentiable.
TEST(QuantizableLinear, TrainingModeAndGradientsUseTheFp32Path) {
  torch::manual_seed(5);
  nmt::models::QuantizableLinear linear(16, 8);
  linear->quantize();
  auto x = torch::randn({4, 16});
  auto y = linear(x);  // training mode, gradients on
  EXPECT_TRUE(torch::equal(y, torch::nn::functional::linear(x, linear->weight, linear->bias)));
  y.sum().backward();
  EXPECT_TRUE(linear->weight.grad().defined());
}

// ---------------------------------------------------------------------------------------
// Quantised models in memory and int8 weights files

double relative_difference(const torch::Tensor& a, const torch::Tensor& b) {
  return ((a - b).norm() / b.norm()).item<double>();
}

// Logits of one teacher-forced pass through step() (the decoding path).
torch::Tensor step_logits(nmt::models::Seq2SeqModelImpl& model) {
  torch::InferenceMode inference;
  auto src = torch::tensor({4, 5, 6, 7, 8, 9, 3}, torch::kLong).view({1, 7});
  auto mask = src.ne(0);
  auto state = model.start(model.encode(src, mask), mask);
  std::vector<torch::Tensor> logits;
  for (int64_t token : {2, 10, 11, 4}) logits.push_back(model.step(torch::tensor({token}, torch::kLong), state));
  return torch::stack(logits);
}

class QuantizedModel : public ::testing::TestWithParam<std::string> {};

// Quantising changes a model's decoding logits by little (a random model: within 5%).
TEST_P(QuantizedModel, LogitsStayCloseToFp32) {
  auto model = nmt::test::random_model(GetParam());
  const auto fp32 = step_logits(*model);
  const int64_t linears = nmt::models::quantize_model(*model);
  // Transformer: every Linear of 2 encoder layers (4 each) and 2 decoder layers (7 each);
  // GRU: attention query and key, bridge, deep output (the score vector v stays fp32).
  EXPECT_EQ(linears, GetParam() == "transformer" ? 2 * 4 + 2 * 7 : 4);
  const auto int8 = step_logits(*model);
  const double difference = relative_difference(int8, fp32);
  EXPECT_GT(difference, 0.0);
  EXPECT_LT(difference, 0.05);
}

// An int8 weights file holds exactly the quantised model: loaded into a fresh model of the same
// configuration, it decodes bit for bit like the model it was written from.
TEST_P(QuantizedModel, Int8FileDecodesExactlyLikeTheQuantisedModel) {
  nmt::test::TempDir dir;
  auto model = nmt::test::random_model(GetParam());
  nmt::models::quantize_model(*model);
  nmt::models::save_int8_weights(*model, dir.file("model.int8.pt"));
  auto loaded = nmt::test::random_model(GetParam(), /*seed=*/99);
  nmt::models::load_int8_weights(*loaded, dir.file("model.int8.pt"));
  EXPECT_TRUE(torch::equal(step_logits(*loaded), step_logits(*model)));
}

// The file refuses what is not int8 weights of this configuration, in one line naming it.
TEST_P(QuantizedModel, Int8FileRefusesFp32WeightsAndOtherConfigurations) {
  nmt::test::TempDir dir;
  auto model = nmt::test::random_model(GetParam());
  nmt::models::save_weights(*model, dir.file("model.pt"));
  nmt::test::expect_error<nmt::RuntimeError>([&] { nmt::models::load_int8_weights(*model, dir.file("model.pt")); },
                                             {dir.file("model.pt"), "not an int8 weights file"});
  nmt::models::quantize_model(*model);
  nmt::models::save_int8_weights(*model, dir.file("model.int8.pt"));
  nmt::test::expect_error<nmt::RuntimeError>(
      [&] { nmt::models::load_weights(*nmt::test::random_model(GetParam()), dir.file("model.int8.pt")); },
      {dir.file("model.int8.pt"), "int8 weights"});
  nmt::models::ModelConfig wider = model->config();
  wider.get<nmt::models::TransformerConfig>().d_model = 24;
  wider.get<nmt::models::TransformerConfig>().heads = 2;
  wider.get<nmt::models::GruConfig>().embedding = wider.get<nmt::models::GruConfig>().hidden = 24;
  nmt::test::expect_error<nmt::RuntimeError>(
      [&] { nmt::models::load_int8_weights(*nmt::models::make_model(wider), dir.file("model.int8.pt")); },
      {dir.file("model.int8.pt"), "expected"});
}

INSTANTIATE_TEST_SUITE_P(Models, QuantizedModel, ::testing::Values("transformer", "gru"));

}  // namespace
