// The fused training kernels' arithmetic: the GRU's sigmoid and tanh (nmt/kernels/recurrent.h)
// against double precision over the whole useful range, saturation, NaN kept; Adam's update
// (nmt/kernels/adam.h) against the formula in double precision; and every vector kernel against
// the portable one, bit for bit (a run's losses must not depend on the CPU it trained on).
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <vector>

#include "nmt/kernels/adam.h"
#include "nmt/kernels/recurrent.h"

namespace nmt::kernels {
namespace {

std::vector<RecurrentKernel> supported() {
  std::vector<RecurrentKernel> k{RecurrentKernel::portable};
  if (recurrent_kernel_supported(RecurrentKernel::avx2)) k.push_back(RecurrentKernel::avx2);
  return k;
}

// -20 .. 20 in steps of 1/128, 5,121 values (not a multiple of 8: the tail runs too).
std::vector<float> grid() {
  std::vector<float> x;
  for (int i = -2560; i <= 2560; ++i) x.push_back(static_cast<float>(i) / 128.0f);
  return x;
}

TEST(RecurrentKernels, SigmoidAndTanhMatchDoublePrecision) {
  for (RecurrentKernel k : supported()) {
    auto s = grid(), t = grid();
    sigmoid_inplace(s.data(), static_cast<int64_t>(s.size()), k);
    tanh_inplace(t.data(), static_cast<int64_t>(t.size()), k);
    const auto x = grid();
    for (size_t i = 0; i < x.size(); ++i) {
      const double sig = 1.0 / (1.0 + std::exp(-static_cast<double>(x[i])));
      EXPECT_NEAR(s[i], sig, 2e-7 * sig + 1e-30) << "sigmoid(" << x[i] << ")";
      EXPECT_NEAR(t[i], std::tanh(static_cast<double>(x[i])), 2.5e-7) << "tanh(" << x[i] << ")";
    }
  }
}

TEST(RecurrentKernels, SaturateWithoutInfinityAndKeepNaN) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  for (RecurrentKernel k : supported()) {
    std::vector<float> s = {-1e30f, -200, 200, 1e30f, nan, 0, 0, 0, nan};
    std::vector<float> t = s;
    sigmoid_inplace(s.data(), 9, k);
    tanh_inplace(t.data(), 9, k);
    EXPECT_GE(s[0], 0.0f);
    EXPECT_LT(s[0], 1e-38f);  // 1 / (1 + e^88.4): exp's input is clamped to float's range
    EXPECT_LT(s[1], 1e-38f);
    EXPECT_EQ(s[2], 1.0f);
    EXPECT_EQ(s[3], 1.0f);
    EXPECT_TRUE(std::isnan(s[4]));
    EXPECT_TRUE(std::isnan(s[8]));  // in the scalar tail as well
    EXPECT_EQ(t[0], -1.0f);
    EXPECT_EQ(t[3], 1.0f);
    EXPECT_TRUE(std::isnan(t[4]));
    EXPECT_TRUE(std::isnan(t[8]));
    EXPECT_EQ(t[5], 0.0f);
  }
}

TEST(RecurrentKernels, VectorKernelGivesThePortableBits) {
  if (!recurrent_kernel_supported(RecurrentKernel::avx2)) GTEST_SKIP() << "no AVX2 on this CPU";
  constexpr int64_t rows = 3, H = 21, S = 5;
  std::vector<float> gates(rows * 3 * H), hidden(rows * 3 * H), h(rows * H), q(rows * H), keys(rows * S * H), v(H);
  uint32_t state = 12345;
  auto next = [&] { state = state * 1664525u + 1013904223u; return static_cast<float>(state >> 8) / 8388608.0f - 1.0f; };
  for (auto* vec : {&gates, &hidden, &h, &q, &keys, &v})
    for (float& f : *vec) f = 3 * next();
  auto run = [&](RecurrentKernel k) {
    std::vector<float> out(rows * H), saved(rows * 4 * H), scores(rows * S), tanh_saved(rows * S * H);
    gru_cell_forward(gates.data(), hidden.data(), h.data(), nullptr, H, 0, rows, out.data(), saved.data(), k);
    additive_scores_forward(q.data(), keys.data(), v.data(), S, H, 0, rows, scores.data(), tanh_saved.data(), k);
    out.insert(out.end(), saved.begin(), saved.end());
    out.insert(out.end(), scores.begin(), scores.end());
    return out;
  };
  const auto portable = run(RecurrentKernel::portable), avx2 = run(RecurrentKernel::avx2);
  ASSERT_EQ(portable.size(), avx2.size());
  EXPECT_EQ(std::memcmp(portable.data(), avx2.data(), portable.size() * sizeof(float)), 0);
}

struct AdamCase {
  std::vector<float> p, g, m, v;
};

// 1,003 elements (the vector loop and its tail), moments already non-zero, as after some updates.
AdamCase adam_case() {
  AdamCase c;
  for (int i = 0; i < 1003; ++i) {
    const float x = static_cast<float>(i);
    c.p.push_back(std::sin(x));
    c.g.push_back(0.1f * std::cos(3 * x));
    c.m.push_back(0.01f * std::sin(5 * x));
    c.v.push_back(1e-4f * (1.0f + std::cos(7 * x)));
  }
  return c;
}

TEST(AdamKernel, UpdateFollowsAdamsFormulaWithWeightDecay) {
  const double lr = 1e-3, b1 = 0.9, b2 = 0.98, eps = 1e-9, wd = 0.01;
  const int64_t t = 7;
  const auto c = adam_coefficients(lr, b1, b2, eps, wd, t);
  for (AdamKernel k : {AdamKernel::portable, AdamKernel::avx2}) {
    if (!adam_kernel_supported(k)) continue;
    AdamCase x = adam_case();
    const AdamCase before = x;
    adam_update(x.p.data(), x.g.data(), x.m.data(), x.v.data(), 0, 1003, c, k);
    for (size_t i = 0; i < x.p.size(); ++i) {
      const double g = before.g[i] + wd * before.p[i];
      const double m = b1 * before.m[i] + (1 - b1) * g, v = b2 * before.v[i] + (1 - b2) * g * g;
      const double step = lr / (1 - std::pow(b1, t)) * m / (std::sqrt(v / (1 - std::pow(b2, t))) + eps);
      const double p = before.p[i] - step;
      // Float rounding relative to the terms added (a sum of opposite signs cancels).
      EXPECT_NEAR(x.m[i], m, 1e-6 * (b1 * std::abs(before.m[i]) + (1 - b1) * std::abs(g))) << i;
      EXPECT_NEAR(x.v[i], v, 1e-6 * v) << i;
      EXPECT_NEAR(x.p[i], p, 1e-6 * (std::abs(before.p[i]) + std::abs(step))) << i;
    }
  }
}

TEST(AdamKernel, VectorKernelGivesThePortableBits) {
  if (!adam_kernel_supported(AdamKernel::avx2)) GTEST_SKIP() << "no AVX2 on this CPU";
  const auto c = adam_coefficients(5e-3, 0.9, 0.999, 1e-8, 0.0, 3);
  AdamCase a = adam_case(), b = adam_case();
  adam_update(a.p.data(), a.g.data(), a.m.data(), a.v.data(), 0, 1003, c, AdamKernel::portable);
  adam_update(b.p.data(), b.g.data(), b.m.data(), b.v.data(), 0, 1003, c, AdamKernel::avx2);
  for (auto [x, y] : {std::pair{&a.p, &b.p}, std::pair{&a.m, &b.m}, std::pair{&a.v, &b.v}})
    EXPECT_EQ(std::memcmp(x->data(), y->data(), x->size() * sizeof(float)), 0);
}

}  // namespace
}  // namespace nmt::kernels
