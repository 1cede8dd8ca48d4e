// Training's loss (nmt/train/loss.h): the fused CPU node gives what LibTorch's own operators give,
// value and gradient, with padding ignored, with and without label smoothing.
#include <gtest/gtest.h>

#include <torch/torch.h>

#include "nmt/train/loss.h"

namespace {

using nmt::train::label_smoothed_loss;
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

}  // namespace
