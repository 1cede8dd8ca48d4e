// GRU + Bahdanau attention: masks, padding, incremental decoding, persistence, the CLI.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <fstream>
#include <sstream>
#include <unordered_set>

#include <nlohmann/json.hpp>

#include "nmt/decode/greedy.h"
#include "nmt/models/gru_bahdanau.h"
#include "nmt/models/model_io.h"
#include "test_support.h"

using namespace nmt::models;
using nmt::test::run_command;

namespace {

ModelConfig tiny_config(bool bidirectional, bool layer_norm = false) {
  ModelConfig c;
  c.type = "gru";
  c.src_vocab = c.tgt_vocab = 37;
  GruConfig& gru = c.get<GruConfig>();
  gru.embedding = 12;  // different from hidden, to catch shape mix-ups
  gru.hidden = 16;
  gru.rnn_layers = 2;
  gru.bidirectional = bidirectional;
  gru.rnn_layer_norm = layer_norm;
  c.dropout = 0.0;
  return c;
}

// The gains of a layer-normalised GRU away from their initial 1, so that a path that skipped
// one would differ.
void draw_gains(torch::nn::Module& model) {
  torch::NoGradGuard no_grad;
  for (auto& p : model.named_parameters())
    if (p.key().find(".ln_") != std::string::npos) p.value().uniform_(0.5, 1.5);
}

struct GruInputs {
  torch::Tensor src, src_mask, tgt_in;
};

// Two sources; the second is shorter and padded.
GruInputs gru_inputs() {
  GruInputs in;
  in.src = torch::tensor({5, 6, 7, 8, 3, 9, 10, 3, 0, 0}, torch::kLong).view({2, 5});
  in.src_mask = in.src.ne(0);
  in.tgt_in = torch::tensor({2, 11, 12, 13, 2, 14, 15, 16}, torch::kLong).view({2, 4});
  return in;
}

// Every behaviour below holds with a one- or two-directional encoder, each with and without
// layer normalisation of its GRUs.
class GruTest : public ::testing::TestWithParam<std::tuple<bool, bool>> {
 protected:
  void SetUp() override {
    torch::manual_seed(7);
    model = make(7);
  }
  std::shared_ptr<GruBahdanauImpl> make(uint64_t seed) const {
    torch::manual_seed(seed);
    auto m = std::make_shared<GruBahdanauImpl>(config());
    draw_gains(*m);
    m->eval();
    return m;
  }
  ModelConfig config() const { return tiny_config(std::get<0>(GetParam()), std::get<1>(GetParam())); }
  std::shared_ptr<GruBahdanauImpl> model;
};

INSTANTIATE_TEST_SUITE_P(GruDirections, GruTest, ::testing::Combine(::testing::Bool(), ::testing::Bool()),
                         [](const auto& info) {
                           return std::string(std::get<0>(info.param) ? "Bidirectional" : "Unidirectional") +
                                  (std::get<1>(info.param) ? "LayerNorm" : "");
                         });

TEST_P(GruTest, Shapes) {
  auto in = gru_inputs();
  auto logits = model->forward(in.src, in.src_mask, in.tgt_in);
  EXPECT_EQ(logits.sizes(), (std::vector<int64_t>{2, 4, 37}));
  auto memory = model->encode(in.src, in.src_mask);
  EXPECT_EQ(memory.sizes(), (std::vector<int64_t>{2, 5, 16}));
  auto cache = model->start(memory, in.src_mask);
  EXPECT_EQ(cache.at("attention_keys").sizes(), (std::vector<int64_t>{2, 5, 16}));  // projected keys
  EXPECT_EQ(cache.at("memory").sizes(), (std::vector<int64_t>{2, 5, 16}));
  EXPECT_EQ(cache.at("source_mask").sizes(), (std::vector<int64_t>{2, 5}));      // additive mask
  EXPECT_EQ(cache.at("hidden").sizes(), (std::vector<int64_t>{2, 2, 16}));       // state [B,layers,H]
  EXPECT_EQ(model->step(in.tgt_in.select(1, 0), cache).sizes(), (std::vector<int64_t>{2, 37}));
  EXPECT_EQ(cache.position, 1);
}

TEST_P(GruTest, MemoryIsZeroOnPadding) {
  torch::NoGradGuard guard;
  auto in = gru_inputs();
  auto memory = model->encode(in.src, in.src_mask);
  EXPECT_EQ(memory[1].narrow(0, 3, 2).abs().sum().item<double>(), 0.0);
}

TEST_P(GruTest, AttentionWeightsSumToOneOverRealTokens) {
  torch::NoGradGuard guard;
  auto in = gru_inputs();
  auto cache = model->start(model->encode(in.src, in.src_mask), in.src_mask);
  cache.record_attention = true;
  for (int64_t t = 0; t < in.tgt_in.size(1); ++t) {
    model->step(in.tgt_in.select(1, t), cache);
    ASSERT_TRUE(cache.attention.defined());
    EXPECT_EQ(cache.attention.sizes(), (std::vector<int64_t>{2, 5}));
    EXPECT_NEAR(cache.attention[0].sum().item<double>(), 1.0, 1e-5);
    EXPECT_NEAR(cache.attention[1].narrow(0, 0, 3).sum().item<double>(), 1.0, 1e-5);
    EXPECT_EQ(cache.attention[1].narrow(0, 3, 2).sum().item<double>(), 0.0);
  }
}

TEST_P(GruTest, PaddingNeverChangesOutputs) {
  torch::NoGradGuard guard;
  auto in = gru_inputs();
  auto batch = model->forward(in.src, in.src_mask, in.tgt_in);
  // The short sentence alone (no padding at all) gives the same logits as in the batch.
  auto src1 = in.src[1].narrow(0, 0, 3).unsqueeze(0);
  auto alone = model->forward(src1, src1.ne(0), in.tgt_in[1].unsqueeze(0));
  EXPECT_TRUE(torch::allclose(batch[1], alone[0], 1e-5, 1e-5));
  // What sits in padded positions does not matter.
  auto src2 = in.src.clone();
  src2[1][3] = 20;
  src2[1][4] = 21;
  EXPECT_TRUE(torch::allclose(batch, model->forward(src2, in.src_mask, in.tgt_in), 1e-6, 1e-6));
  // Nor do extra padding columns.
  auto src3 = torch::cat({in.src, torch::zeros({2, 3}, torch::kLong)}, 1);
  EXPECT_TRUE(torch::allclose(batch, model->forward(src3, src3.ne(0), in.tgt_in), 1e-5, 1e-5));
}

TEST_P(GruTest, StepMatchesTeacherForcedForward) {
  torch::NoGradGuard guard;
  auto in = gru_inputs();
  auto full = model->forward(in.src, in.src_mask, in.tgt_in);
  auto cache = model->start(model->encode(in.src, in.src_mask), in.src_mask);
  for (int64_t t = 0; t < in.tgt_in.size(1); ++t) {
    auto logits = model->step(in.tgt_in.select(1, t), cache);
    EXPECT_TRUE(torch::allclose(logits, full.select(1, t), 1e-5, 1e-5)) << "position " << t;
  }
}

TEST_P(GruTest, CacheSelectKeepsRows) {
  torch::NoGradGuard guard;
  auto in = gru_inputs();
  auto full = model->forward(in.src, in.src_mask, in.tgt_in);
  auto cache = model->start(model->encode(in.src, in.src_mask), in.src_mask);
  model->step(in.tgt_in.select(1, 0), cache);
  cache.select(torch::tensor({1}, torch::kLong));  // sentence 0 finished: only row 1 goes on
  auto logits = model->step(in.tgt_in.select(1, 1).narrow(0, 1, 1), cache);
  EXPECT_TRUE(torch::allclose(logits[0], full[1][1], 1e-5, 1e-5));
  // Reordering (beam search) works the same way.
  auto cache2 = model->start(model->encode(in.src, in.src_mask), in.src_mask);
  model->step(in.tgt_in.select(1, 0), cache2);
  cache2.select(torch::tensor({1, 0}, torch::kLong));
  auto swapped = model->step(in.tgt_in.select(1, 1).flip(0), cache2);
  EXPECT_TRUE(torch::allclose(swapped[0], full[1][1], 1e-5, 1e-5));
  EXPECT_TRUE(torch::allclose(swapped[1], full[0][1], 1e-5, 1e-5));
}

TEST_P(GruTest, FullyPaddedSourceGivesNoNaN) {
  torch::NoGradGuard guard;
  auto in = gru_inputs();
  auto src = in.src.clone();
  src[1].fill_(0);  // a source that is all padding
  auto logits = model->forward(src, src.ne(0), in.tgt_in);
  EXPECT_FALSE(torch::isnan(logits).any().item<bool>());
  auto cache = model->start(model->encode(src, src.ne(0)), src.ne(0));
  cache.record_attention = true;
  auto step = model->step(in.tgt_in.select(1, 0), cache);
  EXPECT_FALSE(torch::isnan(step).any().item<bool>());
  EXPECT_FALSE(torch::isnan(cache.attention).any().item<bool>());
  // The real sentence is unaffected by its fully padded neighbour.
  auto full = model->forward(in.src, in.src_mask, in.tgt_in);
  EXPECT_TRUE(torch::allclose(logits[0], full[0], 1e-5, 1e-5));
}

TEST_P(GruTest, SaveLoadRoundTripGivesIdenticalOutputs) {
  nmt::test::TempDir dir;
  const std::string path = dir.file("model.pt");
  save_weights(*model, path);
  auto other = make(99);  // a differently initialised model
  torch::NoGradGuard guard;
  auto in = gru_inputs();
  EXPECT_FALSE(torch::equal(model->forward(in.src, in.src_mask, in.tgt_in), other->forward(in.src, in.src_mask, in.tgt_in)));
  load_weights(*other, path);
  EXPECT_TRUE(torch::equal(model->forward(in.src, in.src_mask, in.tgt_in), other->forward(in.src, in.src_mask, in.tgt_in)));
}

TEST_P(GruTest, GradientsReachEveryParameter) {
  model->train();
  auto in = gru_inputs();
  auto logits = model->forward(in.src, in.src_mask, in.tgt_in);
  logits.logsumexp(-1).sum().backward();
  for (const auto& p : model->named_parameters()) {
    ASSERT_TRUE(p.value().grad().defined()) << p.key();
    EXPECT_GT(p.value().grad().abs().sum().item<double>(), 0.0) << p.key();
  }
}

// What layer normalisation promises: the GRUs' outputs do not depend on the scale of their
// weight matrices (only the normalised gate products reach the cells), where without it they do.
TEST(GruLayerNorm, LayerNormalisedGrusIgnoreTheScaleOfTheirWeights) {
  torch::NoGradGuard guard;
  auto in = gru_inputs();
  for (bool bidirectional : {false, true})
    for (bool layer_norm : {false, true}) {
      torch::manual_seed(5);
      auto model = std::make_shared<GruBahdanauImpl>(tiny_config(bidirectional, layer_norm));
      draw_gains(*model);
      model->eval();
      auto before = model->forward(in.src, in.src_mask, in.tgt_in);
      for (auto& p : model->named_parameters())
        if (p.key().find(".gru.weight_") != std::string::npos) p.value().mul_(4.0);
      auto after = model->forward(in.src, in.src_mask, in.tgt_in);
      // Not exactly: the normalisation's ε (1e-5) weighs a little less against 16 times the variance.
      const bool same = torch::allclose(after, before, 1e-3, 1e-3);
      EXPECT_EQ(same, layer_norm) << (bidirectional ? "bidirectional" : "one direction") << ", largest change "
                                  << (after - before).abs().max().item<double>();
    }
}

TEST_P(GruTest, GreedyTranslationInABatchEqualsAlone) {
  std::vector<nmt::text::TokenIds> sources = {{5, 6, 7, 8, 9, 10, 11}, {12, 13}, {14, 15, 16, 17}, {18}};
  nmt::decode::DecodeOptions options;
  options.record_attention = true;
  auto greedy = [&](const std::vector<nmt::text::TokenIds>& src) {
    std::vector<nmt::decode::Hypothesis> out;
    for (auto& r : nmt::decode::search(*model, src, options, nmt::decode::GreedySearch())) out.push_back(r.front());
    return out;
  };
  auto batch = greedy(sources);
  ASSERT_EQ(batch.size(), sources.size());
  for (size_t i = 0; i < sources.size(); ++i) {
    auto alone = greedy({sources[i]});
    EXPECT_EQ(batch[i].tokens, alone[0].tokens) << "sentence " << i;
    ASSERT_GE(batch[i].attention.size(), batch[i].tokens.size());  // one row per emitted token
    for (const auto& row : batch[i].attention) {
      ASSERT_EQ(row.size(), sources[i].size() + 1);  // real tokens + EOS
      double sum = 0;
      for (float w : row) sum += w;
      EXPECT_NEAR(sum, 1.0, 1e-5);
    }
  }
}

TEST(GruAttention, MaskedSoftmaxIsZeroOnPaddingAndNeverNaN) {
  torch::manual_seed(3);
  AdditiveAttention attention(AdditiveAttentionOptions(6, 5, 4));
  attention->eval();
  auto q = torch::randn({2, 6}), keys = torch::randn({2, 3, 5}), values = torch::randn({2, 3, 7});
  auto mask = torch::tensor({true, true, false, false, false, false}).view({2, 3});
  torch::Tensor weights;
  auto context = attention->forward(q, attention->project_keys(keys), values,
                                    AdditiveAttentionImpl::additive_mask(mask), &weights);
  EXPECT_EQ(context.sizes(), (std::vector<int64_t>{2, 7}));
  EXPECT_EQ(weights.sizes(), (std::vector<int64_t>{2, 3}));
  EXPECT_NEAR(weights[0].sum().item<double>(), 1.0, 1e-6);
  EXPECT_EQ(weights[0][2].item<double>(), 0.0);
  EXPECT_FALSE(torch::isnan(weights).any().item<bool>());  // row 1 is fully masked
  EXPECT_FALSE(torch::isnan(context).any().item<bool>());
  // Without a mask: the plain definition vᵀ tanh(W_q q + W_k k).
  attention->forward(q, attention->project_keys(keys), values, {}, &weights);
  EXPECT_TRUE(torch::allclose(weights.sum(-1), torch::ones({2}), 1e-6, 1e-6));
}

TEST(GruFactory, MakeModelBuildsGruWithSharedEmbeddingOnce) {
  auto config = tiny_config(false);
  auto model = make_model(config);
  ASSERT_NE(dynamic_cast<GruBahdanauImpl*>(model.get()), nullptr);
  std::unordered_set<const void*> seen;
  int64_t total = 0;
  for (const auto& p : model->parameters()) {
    EXPECT_TRUE(seen.insert(p.unsafeGetTensorImpl()).second) << "a parameter is registered twice";
    total += p.numel();
  }
  EXPECT_EQ(count_parameters(*model), total);
  config.tie_output = false;
  config.shared_vocab = false;
  EXPECT_GT(count_parameters(*make_model(config)), total + 2 * 37 * 12 - 1);
}

// ---------------------------------------------------------------------------------------
using nmt::test::fixture;
using nmt::test::slurp;

// A tiny GRU learns a handful of pairs by heart through the real CLI and translates them back.
TEST(GruCli, TinyGruOverfitsThroughTrainAndTranslate) {
  nmt::test::TempDir dir;
  const std::string out = dir.file("model");
  auto r = run_command(nmt::test::nmt_binary() + " train --preset gru-tiny --train " + fixture("tiny") + " --valid " +
                       fixture("tiny") + " --out " + out +
                       " --max-steps 300 --valid-every 100 --log-every 50 --seed 3 --threads 1");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto config = nlohmann::json::parse(slurp(out + "/config.json"));
  EXPECT_NE(config.dump().find("\"gru\""), std::string::npos);
  auto t = run_command(nmt::test::nmt_binary() + " translate -m " + out + " --input " + fixture("tiny.en"));
  ASSERT_EQ(t.exit_code, 0) << t.err;
  EXPECT_EQ(t.out, slurp(fixture("tiny.fr")));
  auto e = run_command(nmt::test::nmt_binary() + " eval -m " + out + " --src " + fixture("tiny.en") + " --ref " +
                       fixture("tiny.fr") + " --json");
  ASSERT_EQ(e.exit_code, 0) << e.err;
  EXPECT_GT(nlohmann::json::parse(e.out)["bleu"]["score"].get<double>(), 99.99);
}

}  // namespace
