// Training's loss (nmt/train/loss.h): the fused CPU node gives what LibTorch's own operators give,
// value and gradient, with padding ignored, with and without label smoothing. And the update
// (nmt/train/step.h): the fused Adam kernel a GPU uses moves the weights as torch::optim::Adam.
#include <gtest/gtest.h>

#include <torch/torch.h>

#include "nmt/train/loss.h"
#include "nmt/train/step.h"

namespace {

using nmt::train::label_smoothed_loss;
using nmt::train::label_smoothed_loss_masked;
using nmt::train::label_smoothed_loss_reference;

struct Case {
  torch::Tensor logits, target;
};

// [3, 7, 1001] logits, a quarter of the targets padding (id 0), the rest anywhere in 1..1000.
Case make_case(uint64_t seed) {
  torch::manual_seed(seed);
  Case c;
  c.logits = (torch::randn({3, 7, 1001}) * 3).requires_grad_(true);
  c.target = torch::randint(1, 1001, {3, 7}, torch::kLong);
  c.target.masked_fill_(torch::rand({3, 7}) < 0.25, 0);
  c.target[0][0] = 1000;
  return c;
}

TEST(Loss, FusedEqualsLibTorchOperatorsInValueAndGradient) {
  for (double epsilon : {0.0, 0.1, 0.3}) {
    Case a = make_case(7);
    auto fused = label_smoothed_loss(a.logits, a.target, epsilon);
    fused.loss.backward();
    Case b = make_case(7);
    auto ref = label_smoothed_loss_reference(b.logits, b.target, epsilon);
    ref.loss.backward();
    EXPECT_NEAR(fused.loss.item<double>(), ref.loss.item<double>(), 1e-4 * ref.loss.item<double>()) << epsilon;
    EXPECT_NEAR(fused.nll.item<double>(), ref.nll.item<double>(), 1e-4 * ref.nll.item<double>()) << epsilon;
    EXPECT_TRUE(torch::allclose(a.logits.grad(), b.logits.grad(), 1e-4, 1e-6)) << "ε " << epsilon;
    // Padding positions get no gradient at all.
    auto pad_rows = a.target.reshape({-1}).eq(0);
    EXPECT_EQ(a.logits.grad().reshape({-1, 1001}).index({pad_rows}).abs().sum().item<float>(), 0.0f);
  }
}

// The form a GPU runs (no host read mid-step) is the same loss, gradient included.
TEST(Loss, MaskedPaddingEqualsRemovedPaddingInValueAndGradient) {
  for (double epsilon : {0.0, 0.1}) {
    Case a = make_case(11);
    auto masked = label_smoothed_loss_masked(a.logits, a.target, epsilon);
    masked.loss.backward();
    Case b = make_case(11);
    auto ref = label_smoothed_loss_reference(b.logits, b.target, epsilon);
    ref.loss.backward();
    EXPECT_NEAR(masked.loss.item<double>(), ref.loss.item<double>(), 1e-5 * ref.loss.item<double>()) << epsilon;
    EXPECT_NEAR(masked.nll.item<double>(), ref.nll.item<double>(), 1e-5 * ref.nll.item<double>()) << epsilon;
    EXPECT_TRUE(torch::allclose(a.logits.grad(), b.logits.grad(), 1e-5, 1e-7)) << "ε " << epsilon;
    auto pad_rows = a.target.reshape({-1}).eq(0);
    EXPECT_EQ(a.logits.grad().reshape({-1, 1001}).index({pad_rows}).abs().sum().item<float>(), 0.0f);
  }
}

TEST(Loss, WithoutGradientItIsTheSameNumber) {
  Case a = make_case(3);
  const double with_graph = label_smoothed_loss(a.logits, a.target, 0.1).loss.item<double>();
  torch::NoGradGuard no_grad;
  EXPECT_EQ(label_smoothed_loss(a.logits, a.target, 0.1).loss.item<double>(), with_graph);
}

TEST(Loss, AllPaddingIsZero) {
  auto logits = torch::randn({2, 3, 50}).requires_grad_(true);
  auto sums = label_smoothed_loss(logits, torch::zeros({2, 3}, torch::kLong), 0.1);
  EXPECT_EQ(sums.loss.item<float>(), 0.0f);
  sums.loss.backward();
  EXPECT_EQ(logits.grad().abs().sum().item<float>(), 0.0f);
}

TEST(Loss, TargetOutsideTheVocabularyIsAnErrorNotARead) {
  auto logits = torch::randn({1, 2, 50});
  auto target = torch::tensor({{3, 50}}, torch::kLong);
  EXPECT_THROW(label_smoothed_loss(logits, target, 0.1), c10::Error);
}

// Three updates of the fused kernel after a first of torch::optim::Adam (which makes the state)
// leave the weights and the step count where three more of torch::optim::Adam do,
// to float rounding, weight decay included. On the CPU that is nmt's own kernel (a 7×4001
// parameter: the vector loop, its tail and several threads' shares); Cuda.TrainingStepMatchesTheCpu
// covers LibTorch's on a GPU.
TEST(FusedAdam, MovesTheWeightsAsTorchAdam) {
  torch::manual_seed(4);
  std::vector<torch::Tensor> a = {torch::randn({7, 4001}).requires_grad_(true), torch::randn({4001}).requires_grad_(true)};
  std::vector<torch::Tensor> b;
  for (const auto& t : a) b.push_back(t.detach().clone().requires_grad_(true));
  const auto options = torch::optim::AdamOptions(0.01).betas({0.9, 0.98}).eps(1e-9).weight_decay(0.01);
  torch::optim::Adam fused(a, options), plain(b, options);
  auto update = [](std::vector<torch::Tensor>& params, torch::optim::Adam& opt, bool use_fused, int seed) {
    opt.zero_grad();
    torch::manual_seed(seed);
    auto x = torch::randn({3, 7});
    (torch::tanh(torch::matmul(x, params[0]) + params[1]).pow(2).sum()).backward();
    return use_fused ? nmt::train::fused_adam_step(opt) : (opt.step(), true);
  };
  EXPECT_FALSE(update(a, fused, true, 1)) << "no Adam state yet: the fused kernel must decline";
  update(a, fused, false, 1);
  update(b, plain, false, 1);
  for (int seed = 2; seed <= 4; ++seed) {
    EXPECT_TRUE(update(a, fused, true, seed)) << "the fused kernel declined update " << seed;
    update(b, plain, false, seed);
  }
  for (size_t i = 0; i < a.size(); ++i) {
    EXPECT_TRUE(torch::allclose(a[i], b[i], 1e-5, 1e-7)) << "parameter " << i;
  }
  auto state_of = [](torch::optim::Adam& opt) {
    std::vector<torch::optim::AdamParamState*> s;
    for (auto& [key, value] : opt.state()) s.push_back(static_cast<torch::optim::AdamParamState*>(value.get()));
    return s;
  };
  const auto fs = state_of(fused);
  ASSERT_EQ(fs.size(), a.size());
  for (auto* s : fs) EXPECT_EQ(s->step(), 4) << "a checkpoint must record the updates the kernel made";
}

}  // namespace
