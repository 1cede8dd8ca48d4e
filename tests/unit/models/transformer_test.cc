// Transformer behaviour users rely on: masks, causality, incremental decoding, persistence.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include "nmt/models/model_io.h"
#include "nmt/models/small_query_attention.h"
#include "nmt/models/transformer.h"
#include "nmt/util/error.h"
#include "test_support.h"

using namespace nmt::models;

namespace {

// Variants: nmt's post-norm and pre-norm, and the options imported Marian models use.
enum Variant { kPostNorm, kPreNorm, kMarian };

ModelConfig tiny_config(int variant = kPostNorm) {
  const bool pre_norm = variant == kPreNorm;
  ModelConfig c;
  c.type = "transformer";
  c.src_vocab = c.tgt_vocab = 37;
  TransformerConfig& t = c.get<TransformerConfig>();
  t.d_model = 16;
  t.heads = 4;
  t.ffn = 32;
  t.encoder_layers = 2;
  t.decoder_layers = 2;
  c.dropout = 0.0;
  t.pre_norm = pre_norm;
  c.max_positions = 64;
  if (variant == kMarian) {
    t.activation = "swish";
    t.positions = "concatenated";
    t.scale_embedding = false;
    t.output_bias = true;
    c.shared_vocab = false;
    c.tie_embeddings = true;
  }
  return c;
}

// A batch of two sources; the second is shorter and padded.
struct Inputs {
  torch::Tensor src, src_mask, tgt_in;
};

Inputs inputs() {
  Inputs in;
  in.src = torch::tensor({5, 6, 7, 8, 3, 9, 10, 3, 0, 0}, torch::kLong).view({2, 5});
  in.src_mask = in.src.ne(0);
  in.tgt_in = torch::tensor({2, 11, 12, 13, 2, 14, 15, 16}, torch::kLong).view({2, 4});
  return in;
}

class TransformerTest : public ::testing::TestWithParam<int> {
 protected:
  void SetUp() override {
    torch::manual_seed(7);
    model = std::make_shared<TransformerImpl>(tiny_config(GetParam()));
    model->eval();
  }
  std::shared_ptr<TransformerImpl> model;
};

TEST_P(TransformerTest, ForwardShapes) {
  auto in = inputs();
  auto logits = model->forward(in.src, in.src_mask, in.tgt_in);
  EXPECT_EQ(logits.sizes(), (std::vector<int64_t>{2, 4, 37}));
  auto memory = model->encode(in.src, in.src_mask);
  EXPECT_EQ(memory.sizes(), (std::vector<int64_t>{2, 5, 16}));
}

TEST_P(TransformerTest, PaddingNeverChangesOtherPositions) {
  torch::NoGradGuard guard;
  auto in = inputs();
  auto before = model->forward(in.src, in.src_mask, in.tgt_in);
  // Change what sits in the padded positions (still masked): outputs must not move.
  auto src2 = in.src.clone();
  src2[1][3] = 20;
  src2[1][4] = 21;
  auto after = model->forward(src2, in.src_mask, in.tgt_in);
  EXPECT_TRUE(torch::allclose(before, after, 1e-6, 1e-6));
  // And adding extra padding columns to the batch does not change anything either.
  auto src3 = torch::cat({in.src, torch::zeros({2, 3}, torch::kLong)}, 1);
  auto wider = model->forward(src3, src3.ne(0), in.tgt_in);
  EXPECT_TRUE(torch::allclose(before, wider, 1e-5, 1e-5));
}

TEST_P(TransformerTest, DecoderIsCausal) {
  torch::NoGradGuard guard;
  auto in = inputs();
  auto before = model->forward(in.src, in.src_mask, in.tgt_in);
  auto tgt2 = in.tgt_in.clone();
  tgt2[0][3] = 30;  // change the last target token
  auto after = model->forward(in.src, in.src_mask, tgt2);
  using torch::indexing::Slice;
  EXPECT_TRUE(torch::allclose(before.index({Slice(), Slice(0, 3)}), after.index({Slice(), Slice(0, 3)}), 1e-6, 1e-6));
  EXPECT_FALSE(torch::allclose(before.index({0, 3}), after.index({0, 3})));
}

TEST_P(TransformerTest, FullyMaskedRowsGiveNoNaN) {
  torch::NoGradGuard guard;
  auto in = inputs();
  auto mask = in.src_mask.clone();
  mask[1].fill_(false);  // a source that is all padding
  auto logits = model->forward(in.src, mask, in.tgt_in);
  EXPECT_FALSE(torch::isnan(logits).any().item<bool>());
  ScaledDotProductAttention attention;
  auto q = torch::randn({1, 1, 2, 4}), k = torch::randn({1, 1, 3, 4}), v = torch::randn({1, 1, 3, 4});
  auto all_masked = torch::full({1, 1, 1, 3}, -1e9);
  torch::Tensor weights;
  auto out = attention->forward(q, k, v, all_masked, &weights);
  EXPECT_FALSE(torch::isnan(out).any().item<bool>());
  EXPECT_FALSE(torch::isnan(weights).any().item<bool>());
}

TEST_P(TransformerTest, IncrementalStepMatchesFullForward) {
  auto in = inputs();
  // The reference runs LibTorch's ops (gradients on); the steps run the decoding kernels.
  auto full = model->forward(in.src, in.src_mask, in.tgt_in).detach();
  torch::NoGradGuard guard;
  auto cache = model->start(model->encode(in.src, in.src_mask), in.src_mask);
  for (int64_t t = 0; t < in.tgt_in.size(1); ++t) {
    auto logits = model->step(in.tgt_in.select(1, t), cache);
    EXPECT_TRUE(torch::allclose(logits, full.select(1, t), 1e-5, 1e-5)) << "position " << t;
  }
}

TEST_P(TransformerTest, CacheSelectKeepsRows) {
  torch::NoGradGuard guard;
  auto in = inputs();
  auto full = model->forward(in.src, in.src_mask, in.tgt_in);
  auto cache = model->start(model->encode(in.src, in.src_mask), in.src_mask);
  model->step(in.tgt_in.select(1, 0), cache);
  cache.select(torch::tensor({1}, torch::kLong));  // sentence 0 finished: only row 1 goes on
  auto logits = model->step(in.tgt_in.select(1, 1).narrow(0, 1, 1), cache);
  EXPECT_TRUE(torch::allclose(logits[0], full[1][1], 1e-5, 1e-5));
}

// Beam search reorders and duplicates rows between steps; each row must then go on exactly as
// its origin's sentence would, with the decoding kernels and with LibTorch's ops alike.
TEST_P(TransformerTest, ReorderedAndDuplicatedRowsContinueTheirOrigin) {
  auto in = inputs();
  auto full = model->forward(in.src, in.src_mask, in.tgt_in).detach();
  for (const bool kernels : {true, false}) {
    torch::AutoGradMode grad_mode(!kernels);  // gradients on: LibTorch's ops
    auto cache = model->start(model->encode(in.src, in.src_mask), in.src_mask);
    model->step(in.tgt_in.select(1, 0), cache);
    model->step(in.tgt_in.select(1, 1), cache);
    const auto order = torch::tensor({1, 0, 1}, torch::kLong);
    cache.select(order);
    for (int64_t t = 2; t < in.tgt_in.size(1); ++t) {
      auto logits = model->step(in.tgt_in.select(1, t).index_select(0, order), cache);
      for (int64_t r = 0; r < 3; ++r)
        EXPECT_TRUE(torch::allclose(logits[r], full[order[r].item<int64_t>()][t], 1e-5, 1e-5))
            << (kernels ? "kernels" : "LibTorch ops") << ", row " << r << ", position " << t;
    }
  }
}

TEST_P(TransformerTest, AttentionWeightsSumToOneOverRealTokens) {
  torch::NoGradGuard guard;
  auto in = inputs();
  auto cache = model->start(model->encode(in.src, in.src_mask), in.src_mask);
  cache.record_attention = true;
  model->step(in.tgt_in.select(1, 0), cache);
  ASSERT_TRUE(cache.attention.defined());
  EXPECT_EQ(cache.attention.sizes(), (std::vector<int64_t>{2, 5}));
  EXPECT_NEAR(cache.attention[0].sum().item<double>(), 1.0, 1e-5);
  EXPECT_NEAR(cache.attention[1].narrow(0, 0, 3).sum().item<double>(), 1.0, 1e-5);
  EXPECT_LT(cache.attention[1].narrow(0, 3, 2).sum().item<double>(), 1e-6);
}

TEST_P(TransformerTest, SaveLoadRoundTripGivesIdenticalOutputs) {
  nmt::test::TempDir dir;
  const std::string path = dir.file("model.pt");
  save_weights(*model, path);
  torch::manual_seed(99);  // a differently initialised model
  auto other = std::make_shared<TransformerImpl>(tiny_config(GetParam()));
  other->eval();
  load_weights(*other, path);
  torch::NoGradGuard guard;
  auto in = inputs();
  EXPECT_TRUE(torch::equal(model->forward(in.src, in.src_mask, in.tgt_in), other->forward(in.src, in.src_mask, in.tgt_in)));
}

INSTANTIATE_TEST_SUITE_P(PostAndPreNormAndMarian, TransformerTest, ::testing::Values(kPostNorm, kPreNorm, kMarian),
                         [](const auto& info) {
                           return std::string(info.param == kPreNorm ? "PreNorm" : info.param == kMarian ? "Marian" : "PostNorm");
                         });

// Imported Marian models (nmt import) put all sines first, then all cosines, with the angles
// of transformers' MarianSinusoidalPositionalEmbedding: pos / 10000^(2⌊j/2⌋/d).
TEST(PositionalEncoding, ConcatenatedLayoutIsMariansSinesThenCosines) {
  const int64_t d = 6, n = 50;
  PositionalEncoding concatenated(PositionalEncodingOptions(d, n).concatenated(true));
  PositionalEncoding interleaved(PositionalEncodingOptions(d, n));
  const auto table = concatenated->forward(n).to(torch::kDouble);
  for (int64_t pos : {0, 1, 7, 49})
    for (int64_t j = 0; j < d; ++j) {
      const int64_t k = j < d / 2 ? 2 * j : 2 * (j - d / 2) + 1;  // the angle's index in the interleaved layout
      const double angle = static_cast<double>(pos) / std::pow(10000.0, 2.0 * static_cast<double>(k / 2) / d);
      EXPECT_NEAR(table[pos][j].item<double>(), j < d / 2 ? std::sin(angle) : std::cos(angle), 1e-7) << pos << " " << j;
      EXPECT_NEAR(interleaved->forward(n)[pos][k].item<double>(), table[pos][j].item<double>(), 1e-5);
    }
}

TEST(FeedForward, ActivationsAreTheNamedFunctions) {
  torch::manual_seed(3);
  auto x = torch::randn({2, 3, 8});
  for (const char* name : {"relu", "swish", "gelu"}) {
    FeedForward ffn(FeedForwardOptions(8, 16).activation(name));
    torch::NoGradGuard no_grad;
    auto params = ffn->named_parameters();
    auto h = torch::nn::functional::linear(x, params["fc1.weight"], params["fc1.bias"]);
    const std::string n = name;
    h = n == "relu" ? h.clamp_min(0) : n == "swish" ? h * torch::sigmoid(h) : 0.5 * h * (1 + torch::erf(h / std::sqrt(2.0)));
    auto expected = torch::nn::functional::linear(h, params["fc2.weight"], params["fc2.bias"]);
    EXPECT_TRUE(torch::allclose(ffn->forward(x), expected, 1e-5, 1e-6)) << name;
  }
  EXPECT_THROW(FeedForward(FeedForwardOptions(8, 16).activation("tanh")), c10::Error);
}

// The decoding kernel computes what the matmul/softmax formula computes, for the layouts the
// model passes it: q a strided view, a mask broadcast over heads and queries, several
// queries per (row, head) as in beam search's folded cross-attention, odd sizes.
TEST(SmallQueryAttention, MatchesTheMatmulSoftmaxFormula) {
  torch::manual_seed(11);
  for (const auto& [B, H, T, S, dk] : std::vector<std::array<int64_t, 5>>{{3, 4, 1, 9, 64}, {2, 2, 5, 13, 19}, {1, 1, 16, 1, 3}}) {
    auto q = torch::randn({B, T, H, dk}).transpose(1, 2);                  // as split_heads makes it
    auto kv = torch::randn({B, S, 2, H, dk}).permute({2, 0, 3, 1, 4});  // as project_memory makes it
    auto k = kv[0].contiguous(), v = kv[1];
    auto mask = torch::zeros({B, 1, 1, S});
    mask.index_put_({B - 1, 0, 0, torch::indexing::Slice(S / 2 + 1)}, -1e9);
    const double scale = 1.0 / std::sqrt(static_cast<double>(dk));
    auto expected_weights = torch::softmax(torch::matmul(q, k.transpose(-2, -1)) * scale + mask, -1);
    auto expected = torch::matmul(expected_weights, v);
    torch::NoGradGuard no_grad;
    ASSERT_TRUE(small_query_attention_applies(q, k, v, mask));
    torch::Tensor weights;
    auto out = small_query_attention(q, k, v, mask, scale, &weights);
    EXPECT_EQ(out.sizes(), expected.sizes());
    EXPECT_TRUE(torch::allclose(out, expected, 1e-5, 1e-5)) << B << "x" << H << "x" << T << "x" << S;
    EXPECT_TRUE(torch::allclose(weights, expected_weights, 1e-6, 1e-6));
    EXPECT_TRUE(torch::allclose(small_query_attention(q, k, v, {}, scale, nullptr),
                                torch::matmul(torch::softmax(torch::matmul(q, k.transpose(-2, -1)) * scale, -1), v),
                                1e-5, 1e-5));
  }
  // Training (gradients recorded) and long queries keep LibTorch's ops.
  auto q = torch::randn({1, 1, 17, 4}), k = torch::randn({1, 1, 5, 4});
  EXPECT_FALSE(small_query_attention_applies(q.narrow(2, 0, 1), k, k, {}));  // grad mode on
  torch::NoGradGuard no_grad;
  EXPECT_FALSE(small_query_attention_applies(q, k, k, {}));
  EXPECT_FALSE(small_query_attention_applies(q.narrow(2, 0, 1).to(torch::kDouble), k, k, {}));
}

TEST(TransformerConfig, TiedEmbeddingsAreOneParameter) {
  for (int variant : {kPostNorm, kMarian}) {  // a joint vocabulary; separate ones tied (imported Marian)
    auto model = std::make_shared<TransformerImpl>(tiny_config(variant));
    int64_t tables = 0;
    for (const auto& p : model->named_parameters())
      if (p.value().sizes() == std::vector<int64_t>{37, 16}) ++tables;
    EXPECT_EQ(tables, 1);  // source, target and output share one matrix, registered once
  }
  auto untied = tiny_config(kMarian);
  untied.tie_embeddings = false;
  int64_t tables = 0;
  for (const auto& p : std::make_shared<TransformerImpl>(untied)->named_parameters())
    if (p.value().sizes() == std::vector<int64_t>{37, 16}) ++tables;
  EXPECT_EQ(tables, 2);
}

TEST(TransformerConfig, LoadingWeightsOfAnotherShapeIsAClearError) {
  nmt::test::TempDir dir;
  auto model = std::make_shared<TransformerImpl>(tiny_config());
  save_weights(*model, dir.file("model.pt"));
  auto c = tiny_config();
  c.get<TransformerConfig>().d_model = 32;
  auto other = std::make_shared<TransformerImpl>(c);
  try {
    load_weights(*other, dir.file("model.pt"));
    FAIL() << "expected an error";
  } catch (const nmt::RuntimeError& e) {
    EXPECT_NE(std::string(e.what()).find("model.pt"), std::string::npos) << e.what();
  }
}

}  // namespace
