// The fused cross-entropy kernels behind training's loss (nmt/kernels/softmax_xent.h): row
// statistics and gradients against a double-precision computation, padding rows, extreme logits,
// and the vector kernel against the portable one, bit for bit.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>
#include <vector>

#include "nmt/kernels/softmax_xent.h"

namespace nmt::kernels {
namespace {

std::vector<float> gaussian(size_t n, uint32_t seed, float stddev) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> normal(0.0f, stddev);
  std::vector<float> v(n);
  for (float& f : v) f = normal(rng);
  return v;
}

std::vector<XentKernel> supported_xent_kernels() {
  std::vector<XentKernel> k{XentKernel::portable};
  if (xent_kernel_supported(XentKernel::avx2)) k.push_back(XentKernel::avx2);
  return k;
}

// 8,003 columns: not a multiple of the 8 lanes, so the tail is exercised.
constexpr int64_t kRows = 5, kVocab = 8003, kPad = 0;

TEST(SoftmaxXent, RowStatisticsMatchDoublePrecision) {
  auto x = gaussian(kRows * kVocab, 1, 4.0f);
  std::vector<int64_t> target = {7, 0, 8002, 123, 4000};  // row 1 is padding
  for (XentKernel k : supported_xent_kernels()) {
    std::vector<XentRowStats> stats(kRows);
    xent_forward(x.data(), kVocab, target.data(), kPad, 0, kRows, stats.data(), k);
    for (int64_t r = 0; r < kRows; ++r) {
      if (target[r] == kPad) {
        EXPECT_EQ(stats[r].log_sum_exp, 0.0f);
        continue;
      }
      double m = -INFINITY, sum = 0, sum_exp = 0;
      for (int64_t v = 0; v < kVocab; ++v) m = std::max(m, double(x[r * kVocab + v]));
      for (int64_t v = 0; v < kVocab; ++v) sum += x[r * kVocab + v], sum_exp += std::exp(x[r * kVocab + v] - m);
      EXPECT_NEAR(stats[r].log_sum_exp, m + std::log(sum_exp), 1e-5 * std::abs(m + std::log(sum_exp)));
      EXPECT_NEAR(stats[r].sum_logits, sum, 1e-3);
      EXPECT_EQ(stats[r].target_logit, x[r * kVocab + target[r]]);
    }
  }
}

TEST(SoftmaxXent, GradientIsSoftmaxMinusSmoothedTarget) {
  auto x = gaussian(kRows * kVocab, 2, 3.0f);
  std::vector<int64_t> target = {5, 9, 0, 8000, 1};
  const float eps = 0.1f, e = eps / (kVocab - 1), c = 1 - eps - e, scale = 0.5f;
  for (XentKernel k : supported_xent_kernels()) {
    std::vector<XentRowStats> stats(kRows);
    xent_forward(x.data(), kVocab, target.data(), kPad, 0, kRows, stats.data(), k);
    std::vector<float> grad(kRows * kVocab, 42.0f);
    xent_backward(x.data(), kVocab, target.data(), kPad, stats.data(), scale, c, e, 0, kRows, grad.data(), k);
    for (int64_t r = 0; r < kRows; ++r) {
      double row_sum = 0;
      for (int64_t v = 0; v < kVocab; ++v) {
        const float g = grad[r * kVocab + v];
        row_sum += g;
        if (target[r] == kPad) {
          ASSERT_EQ(g, 0.0f) << "padding row " << r;
          continue;
        }
        const double p = std::exp(double(x[r * kVocab + v]) - stats[r].log_sum_exp);
        const double expected = scale * (p - e - (v == target[r] ? c : 0.0));
        ASSERT_NEAR(g, expected, 2e-6 * scale + 1e-6 * std::abs(expected)) << "row " << r << " column " << v;
      }
      EXPECT_NEAR(row_sum, 0.0, 1e-4) << "a row's gradient sums to 0 (c + e·V = 1)";
    }
  }
}

// Logits far from 0 (a diverging run) stay finite: the row maximum is taken out before exp.
TEST(SoftmaxXent, LargeLogitsStayFinite) {
  std::vector<float> x(kVocab, -1e4f);
  x[3] = 1e4f;
  x[4] = 9990.0f;
  const int64_t target = 4;
  for (XentKernel k : supported_xent_kernels()) {
    XentRowStats s;
    xent_forward(x.data(), kVocab, &target, kPad, 0, 1, &s, k);
    EXPECT_FLOAT_EQ(s.log_sum_exp, 1e4f);
    EXPECT_NEAR(s.log_sum_exp - s.target_logit, 10.0f, 1e-3f);
    std::vector<float> g(kVocab);
    xent_backward(x.data(), kVocab, &target, kPad, &s, 1.0f, 1.0f, 0.0f, 0, 1, g.data(), k);
    for (float v : g) ASSERT_TRUE(std::isfinite(v));
    EXPECT_NEAR(g[3], 1.0f, 1e-4f);
    EXPECT_NEAR(g[4], -1.0f, 1e-4f);
  }
}

// A run's losses and gradients must not depend on the CPU it trained on.
TEST(SoftmaxXent, VectorKernelEqualsPortableBitForBit) {
  if (!xent_kernel_supported(XentKernel::avx2)) GTEST_SKIP() << "no AVX2 on this CPU";
  auto x = gaussian(kRows * kVocab, 3, 6.0f);
  std::vector<int64_t> target = {1, 2, 3, 0, 8002};
  std::vector<XentRowStats> a(kRows), b(kRows);
  xent_forward(x.data(), kVocab, target.data(), kPad, 0, kRows, a.data(), XentKernel::portable);
  xent_forward(x.data(), kVocab, target.data(), kPad, 0, kRows, b.data(), XentKernel::avx2);
  EXPECT_EQ(std::memcmp(a.data(), b.data(), sizeof(XentRowStats) * kRows), 0);
  std::vector<float> ga(kRows * kVocab), gb(kRows * kVocab);
  xent_backward(x.data(), kVocab, target.data(), kPad, a.data(), 0.25f, 0.9f, 1e-5f, 0, kRows, ga.data(),
                XentKernel::portable);
  xent_backward(x.data(), kVocab, target.data(), kPad, a.data(), 0.25f, 0.9f, 1e-5f, 0, kRows, gb.data(),
                XentKernel::avx2);
  EXPECT_EQ(std::memcmp(ga.data(), gb.data(), sizeof(float) * ga.size()), 0);
}

}  // namespace
}  // namespace nmt::kernels
