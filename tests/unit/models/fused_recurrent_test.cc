// The GRU model's fused training kernels (nmt/models/fused_recurrent.h) compute what ATen's
// operators compute, value and gradient: the cell against torch::gru_cell, the attention scores
// against tanh/Linear, and a whole model's loss and every parameter's gradient (the padded
// bidirectional encoder against the packed GRU, the decoder against its step loop) against the
// unfused path, dropout included (the two draw the same masks).
#include <gtest/gtest.h>
#include <torch/torch.h>

#include "nmt/kernels/fused_switch.h"
#include "nmt/models/fused_recurrent.h"
#include "nmt/models/gru_bahdanau.h"

using namespace nmt::models;

namespace {

// Restores the fused path when a test ends, whatever it set.
struct FusedSwitch {
  ~FusedSwitch() { nmt::kernels::set_fused_training_kernels(true); }
};

torch::Tensor leaf(torch::IntArrayRef sizes, double scale = 1.0) {
  return (torch::randn(sizes) * scale).requires_grad_(true);
}

TEST(FusedRecurrent, GruCellMatchesLibTorchsCellInValueAndGradient) {
  torch::manual_seed(3);
  const int64_t rows = 19, in = 11, H = 13;  // neither a multiple of the 8 lanes
  auto x = leaf({rows, in}), h = leaf({rows, H});
  auto w_ih = leaf({3 * H, in}, 0.5), w_hh = leaf({3 * H, H}, 0.5), b_ih = leaf({3 * H}), b_hh = leaf({3 * H});
  auto ref = torch::gru_cell(x, h, w_ih, w_hh, b_ih, b_hh);
  auto upstream = torch::randn({rows, H});
  auto ref_grads = torch::autograd::grad({ref}, {x, h, w_ih, w_hh, b_ih, b_hh}, {upstream});
  auto fused = fused_gru_cell(torch::nn::functional::linear(x, w_ih, b_ih), torch::nn::functional::linear(h, w_hh, b_hh), h);
  auto fused_grads = torch::autograd::grad({fused}, {x, h, w_ih, w_hh, b_ih, b_hh}, {upstream});
  EXPECT_TRUE(torch::allclose(fused, ref, 1e-5, 1e-6)) << (fused - ref).abs().max();
  const char* names[] = {"x", "h", "w_ih", "w_hh", "b_ih", "b_hh"};
  for (size_t i = 0; i < fused_grads.size(); ++i)
    EXPECT_TRUE(torch::allclose(fused_grads[i], ref_grads[i], 1e-4, 1e-5))
        << names[i] << ": " << (fused_grads[i] - ref_grads[i]).abs().max();
}

TEST(FusedRecurrent, AdditiveScoresMatchTanhAndLinearInValueAndGradient) {
  torch::manual_seed(5);
  const int64_t rows = 6, S = 9, H = 21;
  auto q = leaf({rows, H}), k = leaf({rows, S, H}), v = leaf({1, H});
  auto ref = torch::nn::functional::linear(torch::tanh(q.unsqueeze(1) + k), v).squeeze(-1);
  auto upstream = torch::randn({rows, S});
  auto ref_grads = torch::autograd::grad({ref}, {q, k, v}, {upstream});
  auto fused = fused_additive_scores(q, k, v);
  auto fused_grads = torch::autograd::grad({fused}, {q, k, v}, {upstream});
  EXPECT_TRUE(torch::allclose(fused, ref, 1e-5, 1e-6)) << (fused - ref).abs().max();
  const char* names[] = {"q", "k", "v"};
  for (size_t i = 0; i < 3; ++i)
    EXPECT_TRUE(torch::allclose(fused_grads[i], ref_grads[i], 1e-4, 1e-5))
        << names[i] << ": " << (fused_grads[i] - ref_grads[i]).abs().max();
}

ModelConfig gru_config(int64_t layers, double dropout, bool bidirectional, bool layer_norm = false) {
  ModelConfig c;
  c.type = "gru";
  c.src_vocab = c.tgt_vocab = 41;
  GruConfig& gru = c.get<GruConfig>();
  gru.embedding = 12;
  gru.hidden = 16;
  gru.rnn_layers = layers;
  gru.bidirectional = bidirectional;
  c.dropout = dropout;
  c.attention_dropout = dropout;
  gru.rnn_layer_norm = layer_norm;
  return c;
}

struct LossAndGrads {
  double loss;
  std::vector<torch::Tensor> grads;
};

// One training step's loss and gradients of a model built from seed 11, its dropout drawn from seed 12.
LossAndGrads train_step(const ModelConfig& config, bool fused) {
  nmt::kernels::set_fused_training_kernels(fused);
  torch::manual_seed(11);
  auto model = std::make_shared<GruBahdanauImpl>(config);
  {
    torch::NoGradGuard no_grad;  // layer-normalisation gains away from 1: a path that skipped one would differ
    for (auto& p : model->named_parameters())
      if (p.key().find(".ln_") != std::string::npos) p.value().uniform_(0.5, 1.5);
  }
  model->train();
  // Sources of 5, 3, 2 and 3 tokens (two of the same length: the packed order's ties).
  auto src = torch::tensor({5, 6, 7, 8, 3, 9, 10, 3, 0, 0, 4, 3, 0, 0, 0, 17, 18, 3, 0, 0}, torch::kLong).view({4, 5});
  auto tgt_in = torch::tensor({2, 11, 12, 13, 2, 14, 15, 0, 2, 16, 0, 0, 2, 19, 0, 0}, torch::kLong).view({4, 4});
  auto tgt_out = torch::tensor({11, 12, 13, 3, 14, 15, 3, 0, 16, 3, 0, 0, 19, 3, 0, 0}, torch::kLong).view({4, 4});
  torch::manual_seed(12);
  auto logits = model->forward(src, src.ne(0), tgt_in);
  auto loss = torch::nn::functional::cross_entropy(
      logits.view({-1, config.tgt_vocab}), tgt_out.view({-1}),
      torch::nn::functional::CrossEntropyFuncOptions().ignore_index(0));
  loss.backward();
  LossAndGrads out{loss.item<double>(), {}};
  for (const auto& p : model->parameters()) out.grads.push_back(p.grad().clone());
  return out;
}

// Layer-normalised GRUs too: there the unfused path is nmt's own stepwise one in ATen's operators.
TEST(FusedRecurrent, GruModelTrainsAsTheUnfusedPathWithAndWithoutDropout) {
  FusedSwitch restore;
  for (bool layer_norm : {false, true}) {
    for (bool bidirectional : {true, false}) {
      for (int64_t layers : {1, 2}) {
        for (double dropout : {0.0, 0.3}) {
          const auto config = gru_config(layers, dropout, bidirectional, layer_norm);
          const std::string which = std::to_string(layers) + " layers, dropout " + std::to_string(dropout) +
                                    (bidirectional ? ", bidirectional" : ", one direction") +
                                    (layer_norm ? ", layer-normalised" : "");
          auto fused = train_step(config, true), plain = train_step(config, false);
          EXPECT_NEAR(fused.loss, plain.loss, 1e-5) << which;
          ASSERT_EQ(fused.grads.size(), plain.grads.size());
          for (size_t i = 0; i < fused.grads.size(); ++i)
            EXPECT_TRUE(torch::allclose(fused.grads[i], plain.grads[i], 1e-4, 1e-6))
                << "parameter " << i << ", " << which << ": " << (fused.grads[i] - plain.grads[i]).abs().max();
        }
      }
    }
  }
}

// Decoding records no gradient: it keeps ATen's operators, whatever the switch says.
TEST(FusedRecurrent, AppliesOnlyWhereAGradientIsRecordedOnTheCpuInFloat32) {
  auto x = torch::zeros({2, 2});
  EXPECT_TRUE(fused_recurrence_applies(x));
  EXPECT_FALSE(fused_recurrence_applies(x.to(torch::kDouble)));
  {
    torch::NoGradGuard no_grad;
    EXPECT_FALSE(fused_recurrence_applies(x));
  }
  FusedSwitch restore;
  nmt::kernels::set_fused_training_kernels(false);
  EXPECT_FALSE(fused_recurrence_applies(x));
}

}  // namespace
