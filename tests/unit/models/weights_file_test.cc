// model.safetensors (models/weights_file.h): a model directory's weights as the CPU engine and
// nmt without LibTorch read them. Round trips, int8 copies, and each way a file can be wrong.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <filesystem>
#include <limits>

#include "nmt/decode/cpu_engine_modules.h"
#include "nmt/models/quantizable_linear.h"
#include "nmt/models/quantize.h"
#include "nmt/models/weights_file.h"
#include "nmt/util/error.h"
#include "nmt/util/safetensors.h"
#include "test_support.h"
#include "torch_test_models.h"

namespace {

using nmt::test::random_model;

std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const nmt::RuntimeError& e) {
    return e.what();
  }
  return "(no error)";
}

void expect_same_parameters(torch::nn::Module& a, torch::nn::Module& b) {
  auto pa = a.named_parameters(), pb = b.named_parameters();
  ASSERT_EQ(pa.size(), pb.size());
  for (const auto& p : pa) EXPECT_TRUE(torch::equal(p.value(), pb[p.key()])) << p.key();
}

class WeightsFile : public ::testing::TestWithParam<std::string> {
 protected:
  nmt::test::TempDir dir_;
  std::string path_ = dir_.file("model.safetensors");
};

// What is saved is what is loaded, every parameter bit for bit, into a model built from the same
// configuration with other initial values; the file names each tensor as the state dict does.
TEST_P(WeightsFile, RoundTripsEveryParameter) {
  auto saved = random_model(GetParam(), 1);
  nmt::models::save_safetensors_weights(*saved, path_);
  auto loaded = random_model(GetParam(), 2);
  nmt::models::load_safetensors_weights(*loaded, path_);
  expect_same_parameters(*saved, *loaded);
  const auto file = nmt::safetensors::File::open(path_);
  for (const auto& p : saved->named_parameters()) EXPECT_NE(file.find(p.key()), nullptr) << p.key();
  EXPECT_EQ(file.metadata().count("nmt_quantization"), 0u);
}

// An int8 copy holds each quantised Linear as NAME.int8 and NAME.scales, not its float32 weight,
// and loads back quantised with the same int8 values.
TEST_P(WeightsFile, Int8CopiesKeepTheirInt8Values) {
  auto saved = random_model(GetParam(), 1);
  ASSERT_GT(nmt::models::quantize_model(*saved), 0);
  nmt::models::save_safetensors_weights(*saved, path_);
  const auto file = nmt::safetensors::File::open(path_);
  EXPECT_EQ(file.metadata().at("nmt_quantization"), "int8");
  auto loaded = random_model(GetParam(), 2);
  nmt::models::load_safetensors_weights(*loaded, path_);
  auto saved_modules = saved->named_modules(), loaded_modules = loaded->named_modules();
  int64_t linears = 0;
  for (const auto& m : saved_modules) {
    const auto* a = dynamic_cast<const nmt::models::QuantizableLinearImpl*>(m.value().get());
    if (!a || !a->quantized()) continue;
    const auto* b = dynamic_cast<const nmt::models::QuantizableLinearImpl*>(loaded_modules[m.key()].get());
    ASSERT_TRUE(b && b->quantized()) << m.key();
    EXPECT_EQ(a->quantized_weight()->values, b->quantized_weight()->values) << m.key();
    EXPECT_EQ(a->quantized_weight()->scales, b->quantized_weight()->scales) << m.key();
    EXPECT_EQ(file.find(m.key() + ".weight"), nullptr) << m.key();
    EXPECT_NE(file.find(m.key() + ".weight.int8"), nullptr) << m.key();
    ++linears;
  }
  EXPECT_GT(linears, 0);
}

// The engine decodes the file as it decodes the module it was written from: the same tokens and
// log-probabilities (the same float32 arithmetic on the same values).
TEST_P(WeightsFile, TheEngineDecodesTheFileAsTheModule) {
  auto model = random_model(GetParam(), 1);
  nmt::models::save_safetensors_weights(*model, path_);
  const nmt::engine::Engine from_module({nmt::decode::cpu_engine_model(*model, false)});
  const nmt::engine::Engine from_file({nmt::decode::cpu_engine_model(path_, model->config(), false)});
  nmt::engine::EngineDecodeOptions options;
  options.search.beam_search = true;
  options.search.beam.beam = 3;
  options.search.token_log_probs = true;
  const auto a = from_module.search(nmt::test::sources(), options), b = from_file.search(nmt::test::sources(), options);
  ASSERT_EQ(a.size(), b.size());
  for (size_t i = 0; i < a.size(); ++i) {
    ASSERT_EQ(a[i].size(), b[i].size());
    for (size_t k = 0; k < a[i].size(); ++k) {
      EXPECT_EQ(a[i][k].tokens, b[i][k].tokens);
      EXPECT_EQ(a[i][k].log_prob, b[i][k].log_prob);
    }
  }
}

// One changed byte anywhere in the weights is a checksum mismatch naming the file.
TEST_P(WeightsFile, ACorruptedByteIsAChecksumMismatch) {
  auto model = random_model(GetParam(), 1);
  nmt::models::save_safetensors_weights(*model, path_);
  std::string bytes = nmt::test::slurp(path_);
  bytes[bytes.size() - 4] ^= 0x01;  // the lowest mantissa bits of the last float: still finite
  nmt::test::write_bytes(path_, bytes);
  EXPECT_EQ(error_of([&] { nmt::models::load_safetensors_weights(*model, path_); }),
            path_ + ": checksum mismatch: the weights are corrupted");
  EXPECT_EQ(error_of([&] { nmt::decode::cpu_engine_model(path_, model->config(), false); }),
            path_ + ": checksum mismatch: the weights are corrupted");
}

INSTANTIATE_TEST_SUITE_P(Models, WeightsFile, ::testing::Values("transformer", "gru"));

// Weights of another model are refused naming the file and a tensor, never loaded half-right.
TEST(WeightsFileErrors, AnotherModelsWeightsAreRefusedNamingATensor) {
  nmt::test::TempDir dir;
  const std::string path = dir.file("model.safetensors");
  auto gru = random_model("gru", 1);
  nmt::models::save_safetensors_weights(*gru, path);
  auto transformer = random_model("transformer", 1);
  const std::string e = error_of([&] { nmt::models::load_safetensors_weights(*transformer, path); });
  EXPECT_EQ(e.rfind(path + ": no tensor '", 0), 0u) << e;
  // A file with every tensor of the model and one more: not this model's either.
  auto t2 = random_model("transformer", 1);
  torch::NoGradGuard no_grad;
  t2->register_parameter("extra", torch::zeros({2}));
  nmt::models::save_safetensors_weights(*t2, path);
  EXPECT_EQ(error_of([&] { nmt::models::load_safetensors_weights(*transformer, path); }),
            path + ": tensor 'extra' is not part of this model (weights of another model?)");
}

// Diverged weights are never saved: the file is not written, the error names the tensor.
TEST(WeightsFileErrors, NonFiniteWeightsAreNotSaved) {
  nmt::test::TempDir dir;
  const std::string path = dir.file("model.safetensors");
  auto model = random_model("transformer", 1);
  {
    torch::NoGradGuard no_grad;
    model->parameters().front()[0].fill_(std::numeric_limits<float>::quiet_NaN());
  }
  const std::string e = error_of([&] { nmt::models::save_safetensors_weights(*model, path); });
  EXPECT_NE(e.find("refusing to save the weights"), std::string::npos) << e;
  EXPECT_FALSE(std::filesystem::exists(path));
}

}  // namespace
