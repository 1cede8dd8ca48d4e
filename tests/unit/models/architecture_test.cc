// The model registry (nmt/models/architecture.h): a third architecture needs its own code and
// one registration, nothing else. This file is that architecture: a bag-of-words baseline (the
// decoder sees the mean of the source embeddings and the previous token), registered here and
// then built, checked, counted and decoded through the same calls as the Transformer and the GRU.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <algorithm>
#include <string>

#include "nmt/decode/beam.h"
#include "nmt/decode/greedy.h"
#include "nmt/models/architecture.h"
#include "nmt/models/flops.h"
#include "nmt/models/gru_config.h"
#include "nmt/models/model.h"
#include "nmt/util/error.h"
#include "torch_test_models.h"

namespace {

using namespace nmt;
using namespace nmt::models;

class BagOfWordsImpl : public Seq2SeqModelImpl {
 public:
  explicit BagOfWordsImpl(const ModelConfig& c) : config_(c) {
    const int64_t embedding = c.get<GruConfig>().embedding;  // the GRU's "embedding" key, reused
    embed_ = register_module("embed", torch::nn::Embedding(c.src_vocab, embedding));
    out_ = register_module("out", torch::nn::Linear(embedding, c.tgt_vocab));
  }
  torch::Tensor encode(const torch::Tensor& src, const torch::Tensor& src_mask) override {
    const auto mask = src_mask.unsqueeze(-1).to(torch::kFloat);
    return (embed_(src) * mask).sum(1, true) / mask.sum(1, true).clamp_min(1);  // [B,1,E]
  }
  torch::Tensor forward(const torch::Tensor& src, const torch::Tensor& src_mask, const torch::Tensor& tgt_in) override {
    return out_(encode(src, src_mask) + embed_(tgt_in));
  }
  DecoderState start(const torch::Tensor& memory, const torch::Tensor& src_mask) override {
    DecoderState state;
    state.add("memory", memory.squeeze(1), DecoderState::Rows::kPerSource);
    return state;
  }
  torch::Tensor step(const torch::Tensor& prev_tokens, DecoderState& state) override {
    auto memory = state.at("memory");
    if (memory.size(0) != prev_tokens.size(0))  // beams folded per source: one memory row per beam
      memory = memory.repeat_interleave(prev_tokens.size(0) / memory.size(0), 0);
    if (state.record_attention) state.attention = torch::ones({prev_tokens.size(0), 1});
    ++state.position;
    return out_(memory + embed_(prev_tokens));
  }
  const ModelConfig& config() const override { return config_; }
  void quantize_tied_output() override {}

 private:
  ModelConfig config_;
  torch::nn::Embedding embed_{nullptr};
  torch::nn::Linear out_{nullptr};
};

Architecture bag_of_words() {
  Architecture a;
  a.name = "test-bag-of-words";
  a.check = [](const ModelConfig& c, const ConfigChecks& checks) {
    const int64_t embedding = c.get<GruConfig>().embedding;
    checks.in_range("embedding", embedding, 1, kMaxWidth);
    return static_cast<double>(c.src_vocab + c.tgt_vocab) * static_cast<double>(embedding);
  };
  a.forward_flops = [](const ModelConfig& c, int64_t batch, int64_t, int64_t tgt_len) {
    return 2.0 * static_cast<double>(batch * tgt_len * c.get<GruConfig>().embedding * c.tgt_vocab);
  };
  a.attention_layers = [](const ModelConfig&) -> int64_t { return 0; };
  a.attention_heads = [](const ModelConfig&) -> int64_t { return 0; };
  a.attention_name = "none";
  a.size_fields = {"embedding"};
  a.make = [](const ModelConfig& c) -> Seq2SeqModel { return std::make_shared<BagOfWordsImpl>(c); };
  return a;
}

ModelConfig bag_of_words_config() {
  ModelConfig c;
  c.type = "test-bag-of-words";
  c.src_vocab = c.tgt_vocab = 12;
  c.get<GruConfig>().embedding = 8;
  return c;
}

TEST(ModelRegistry, AThirdArchitectureIsBuiltCheckedCountedAndDecodedOnceRegistered) {
  EXPECT_THROW(make_model(bag_of_words_config()), RuntimeError);  // unknown until registered
  register_architecture(bag_of_words());
  EXPECT_THROW(register_architecture(bag_of_words()), RuntimeError);  // a name is taken once
  const auto names = architecture_names();
  EXPECT_NE(std::find(names.begin(), names.end(), "test-bag-of-words"), names.end());

  ModelConfig c = bag_of_words_config();
  EXPECT_NO_THROW(c.validate([](const std::string& k) { return k; }));
  c.get<GruConfig>().embedding = 0;
  try {
    c.validate([](const std::string& k) { return "--" + k; });
    ADD_FAILURE() << "embedding 0 accepted";
  } catch (const RuntimeError& e) {
    EXPECT_NE(std::string(e.what()).find("--embedding is 0"), std::string::npos) << e.what();
  }
  c = bag_of_words_config();
  EXPECT_DOUBLE_EQ(forward_matmul_flops(c, 2, 5, 3), 2.0 * 2 * 3 * 8 * 12);

  torch::manual_seed(3);
  auto model = make_model(c);
  model->eval();
  decode::DecodeOptions d;
  d.search.max_len_b = 4;
  const auto greedy = decode::search(*model, test::sources(), d, decode::GreedySearch());
  decode::BeamOptions b;
  b.beam = 3;
  const auto beam = decode::search(*model, test::sources(), d, decode::BeamSearch(b));
  ASSERT_EQ(greedy.size(), test::sources().size());
  ASSERT_EQ(beam.size(), test::sources().size());
  for (size_t i = 0; i < greedy.size(); ++i) EXPECT_FALSE(beam[i].empty()) << "sentence " << i;
}

TEST(ModelRegistry, AnUnknownTypeNamesTheKnownOnes) {
  ModelConfig c = bag_of_words_config();
  c.type = "lstm";
  try {
    c.validate([](const std::string& k) { return "'" + k + "'"; });
    ADD_FAILURE() << "an unknown type was accepted";
  } catch (const RuntimeError& e) {
    EXPECT_NE(std::string(e.what()).find("'type': unknown model type 'lstm' (transformer or gru"), std::string::npos)
        << e.what();
  }
}

}  // namespace
