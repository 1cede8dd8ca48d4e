// int8 matrix products (nmt quantize): weight quantisation, the exact integer product, the error
// against fp32, and every kernel this CPU has against the portable one, bit for bit.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "nmt/quant/int8_gemm.h"
#include "nmt/quant/int8_kernels.h"
#include "nmt/util/error.h"
#include "test_support.h"

namespace nmt::quant {
namespace {

using detail::Kernel;
using nmt::RuntimeError;

constexpr Kernel kAllKernels[] = {Kernel::portable, Kernel::avx2, Kernel::avx_vnni, Kernel::avx512_vnni};

std::vector<Kernel> supported_kernels() {
  std::vector<Kernel> kernels;
  for (Kernel k : kAllKernels)
    if (detail::kernel_supported(k)) kernels.push_back(k);
  return kernels;
}

std::vector<float> gaussian(size_t n, uint32_t seed, float stddev = 1.0f) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> normal(0.0f, stddev);
  std::vector<float> v(n);
  for (float& f : v) f = normal(rng);
  return v;
}

// y from a given kernel, starting from a sentinel so unwritten outputs show.
std::vector<float> run(Kernel kernel, const std::vector<float>& x, int64_t rows, const PackedWeight& w,
                       const float* bias, int threads) {
  std::vector<float> y(static_cast<size_t>(rows * w.out_features()), -12345.0f);
  detail::linear_with(kernel, x.data(), rows, w, bias, y.data(), threads);
  return y;
}

bool bitwise_equal(const std::vector<float>& a, const std::vector<float>& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0;
}

// ---------------------------------------------------------------------------------------
// Weight quantisation

TEST(Int8QuantizeWeight, EachValueIsWithinHalfItsRowsScale) {
  const int64_t out = 7, in = 33;
  std::vector<float> w = gaussian(out * in, 1);
  w[5] = 40.0f;  // an outlier costs only its own row precision
  const QuantizedWeight q = quantize_weight(w.data(), out, in);
  ASSERT_EQ(q.values.size(), size_t(out * in));
  ASSERT_EQ(q.scales.size(), size_t(out));
  EXPECT_FLOAT_EQ(q.scales[0], 40.0f / 127);
  for (int64_t o = 0; o < out; ++o) {
    float max_abs = 0;
    for (int64_t i = 0; i < in; ++i) max_abs = std::max(max_abs, std::fabs(w[o * in + i]));
    EXPECT_FLOAT_EQ(q.scales[o], max_abs / 127) << "row " << o;
    for (int64_t i = 0; i < in; ++i) {
      const int v = q.values[o * in + i];
      EXPECT_LE(std::abs(v), 127);
      EXPECT_LE(std::fabs(w[o * in + i] - v * q.scales[o]), q.scales[o] * 0.5f * (1 + 1e-5f))
          << "row " << o << " input " << i;
    }
  }
}

TEST(Int8QuantizeWeight, ARowOfZerosStaysZeroWithAUnitScale) {
  const std::vector<float> w(2 * 3, 0.0f);
  const QuantizedWeight q = quantize_weight(w.data(), 2, 3);
  for (int8_t v : q.values) EXPECT_EQ(v, 0);
  for (float s : q.scales) EXPECT_EQ(s, 1.0f);
}

// A QuantizedWeight read from a file is checked before packing.
TEST(Int8PackedWeight, RefusesMismatchedSizesAndValuesOutsideTheSymmetricRange) {
  QuantizedWeight q = quantize_weight(gaussian(6, 15).data(), 2, 3);
  QuantizedWeight short_values = q;
  short_values.values.pop_back();
  test::expect_error<RuntimeError>([&] { PackedWeight p(short_values); }, {"2 x 3", "5 values", "2 scales"});
  QuantizedWeight missing_scale = q;
  missing_scale.scales.pop_back();
  test::expect_error<RuntimeError>([&] { PackedWeight p(missing_scale); }, {"6 values", "1 scales"});
  QuantizedWeight minus_128 = q;
  minus_128.values[4] = -128;
  test::expect_error<RuntimeError>([&] { PackedWeight p(minus_128); }, {"-128", "[-127, 127]"});
  QuantizedWeight too_wide;
  too_wide.out_features = 0, too_wide.in_features = 200000;
  test::expect_error<RuntimeError>([&] { PackedWeight p(too_wide); }, {"200000", "[0, 133144]"});
}

// ---------------------------------------------------------------------------------------
// The product

// At the largest in_features accepted, the VNNI kernels' partial sums (which start at
// -128 Σ w) pass 2^31 and wrap; the final sum 127 · 127 · in still fits and must come out exact.
TEST(Int8Linear, TheLargestInputWidthStillGivesTheExactSumOnEveryKernel) {
  const int64_t in = 133144, out = 2;
  std::vector<float> x(in, 127.0f), w(out * in, 127.0f);
  for (int64_t i = 0; i < in; ++i) w[in + i] = -127.0f;
  const PackedWeight packed(quantize_weight(w.data(), out, in));
  for (Kernel kernel : supported_kernels()) {
    const std::vector<float> y = run(kernel, x, 1, packed, nullptr, 1);
    EXPECT_EQ(y[0], static_cast<float>(int64_t{127} * 127 * in)) << detail::kernel_label(kernel);
    EXPECT_EQ(y[1], -static_cast<float>(int64_t{127} * 127 * in)) << detail::kernel_label(kernel);
  }
}

// Integer inputs whose rows reach ±127 have scale 1, so y must be the exact integer product.
TEST(Int8Linear, UnitScalesGiveTheExactIntegerProductOnEveryKernel) {
  const int64_t rows = 5, in = 37, out = 19;
  std::mt19937 rng(2);
  std::uniform_int_distribution<int> small(-30, 30);
  std::vector<float> x(rows * in), w(out * in), bias(out);
  for (float& v : x) v = static_cast<float>(small(rng));
  for (float& v : w) v = static_cast<float>(small(rng));
  for (float& v : bias) v = static_cast<float>(small(rng));
  for (int64_t m = 0; m < rows; ++m) x[m * in + m] = (m % 2 ? -127.0f : 127.0f);
  for (int64_t o = 0; o < out; ++o) w[o * in + o] = (o % 3 ? 127.0f : -127.0f);
  const PackedWeight packed(quantize_weight(w.data(), out, in));
  for (Kernel kernel : supported_kernels()) {
    const std::vector<float> y = run(kernel, x, rows, packed, bias.data(), 1);
    for (int64_t m = 0; m < rows; ++m)
      for (int64_t o = 0; o < out; ++o) {
        int64_t exact = static_cast<int64_t>(bias[o]);
        for (int64_t i = 0; i < in; ++i)
          exact += static_cast<int64_t>(x[m * in + i]) * static_cast<int64_t>(w[o * in + i]);
        ASSERT_EQ(y[m * out + o], static_cast<float>(exact))
            << detail::kernel_label(kernel) << " row " << m << " column " << o;
      }
  }
}

// Activations are rounded half to even, in the SIMD quantiser (values 0-31) as in its scalar
// tail (32-39): with unit scales and an identity weight of 127s, y[o] = 127 · round(x[o]).
TEST(Int8Linear, ActivationsRoundHalfToEvenOnEveryKernel) {
  const int64_t in = 40;
  std::vector<float> x(in), w(in * in, 0.0f);
  for (int64_t i = 0; i < in; ++i) x[i] = (i % 2 ? -1.0f : 1.0f) * (static_cast<float>(i % 8) + 0.5f);
  x[7] = 127.0f;  // the row's scale: 1
  for (int64_t o = 0; o < in; ++o) w[o * in + o] = 127.0f;
  const PackedWeight packed(quantize_weight(w.data(), in, in));
  for (Kernel kernel : supported_kernels()) {
    const std::vector<float> y = run(kernel, x, 1, packed, nullptr, 1);
    for (int64_t o = 0; o < in; ++o)
      ASSERT_EQ(y[o], 127.0f * std::nearbyint(x[o])) << detail::kernel_label(kernel) << " x = " << x[o];
  }
}

// The largest magnitudes: 255 · 127 per product on the VNNI kernels, and the AVX2 kernel's int16
// pair sums at their limit (2 · 127 · 127) — a saturating scheme would fail here.
TEST(Int8Linear, ExtremeValuesDoNotSaturateOnAnyKernel) {
  const int64_t rows = 2, in = 64, out = 16;
  std::vector<float> x(rows * in), w(out * in, 127.0f);
  for (int64_t i = 0; i < in; ++i) x[i] = 127.0f, x[in + i] = -127.0f;
  for (int64_t i = 0; i < in; i += 2) w[3 * in + i] = -127.0f;  // a row of alternating signs
  const PackedWeight packed(quantize_weight(w.data(), out, in));
  for (Kernel kernel : supported_kernels()) {
    const std::vector<float> y = run(kernel, x, rows, packed, nullptr, 1);
    EXPECT_EQ(y[0], 127.0f * 127 * in) << detail::kernel_label(kernel);
    EXPECT_EQ(y[out], -127.0f * 127 * in) << detail::kernel_label(kernel);
    EXPECT_EQ(y[3], 0.0f) << detail::kernel_label(kernel);
  }
}

// |x·w − x̂·ŵ| ≤ Σ_i |x_i|·s_w/2 + |w_i|·s_x/2 + s_x·s_w/4 for quantisation steps s_x, s_w (each
// value is within half a step); plus fp32 rounding of the reference. On Gaussian data the
// measured error is ~1% of |y|'s typical size.
TEST(Int8Linear, ErrorAgainstFp32IsWithinTheQuantisationBound) {
  const int64_t rows = 9, in = 512, out = 40;
  const std::vector<float> x = gaussian(rows * in, 3), w = gaussian(out * in, 4, 0.05f);
  const std::vector<float> bias = gaussian(out, 5);
  const QuantizedWeight q = quantize_weight(w.data(), out, in);
  const PackedWeight packed(q);
  const std::vector<float> y = run(detail::best_kernel(), x, rows, packed, bias.data(), 1);
  double worst_relative = 0, mean_abs_y = 0;
  for (int64_t m = 0; m < rows; ++m) {
    float x_max = 0;
    for (int64_t i = 0; i < in; ++i) x_max = std::max(x_max, std::fabs(x[m * in + i]));
    const double sx = x_max / 127.0;
    for (int64_t o = 0; o < out; ++o) {
      const double sw = q.scales[o];
      double exact = bias[o], bound = 0;
      for (int64_t i = 0; i < in; ++i) {
        exact += double{x[m * in + i]} * w[o * in + i];
        bound += std::fabs(x[m * in + i]) * sw / 2 + std::fabs(w[o * in + i]) * sx / 2 + sx * sw / 4;
      }
      const double error = std::fabs(y[m * out + o] - exact);
      EXPECT_LE(error, bound + 1e-5 * std::fabs(exact) + 1e-6) << "row " << m << " column " << o;
      worst_relative = std::max(worst_relative, error / bound);
      mean_abs_y += std::fabs(exact) / (rows * out);
    }
  }
  EXPECT_LT(worst_relative, 0.5) << "the bound is loose by design, but not by this little";
  EXPECT_GT(mean_abs_y, 0.5);  // the data exercise the product
}

// Odd shapes: partial blocks of 16 columns, inputs not a multiple of 4, row counts beyond and
// below the micro-tiles; the 8000-column products are large enough to be split over 2 threads.
TEST(Int8Linear, EveryKernelMatchesThePortableOneBitForBit) {
  const std::vector<Kernel> kernels = supported_kernels();
  uint32_t seed = 10;
  for (int64_t in : {4, 5, 511, 2048})
    for (int64_t out : {1, 15, 17, 8000}) {
      const std::vector<float> w = gaussian(out * in, ++seed, 0.1f), bias = gaussian(out, ++seed);
      const PackedWeight packed(quantize_weight(w.data(), out, in));
      for (int64_t rows : {1, 3, 17}) {
        const std::vector<float> x = gaussian(rows * in, ++seed);
        for (const float* b : {static_cast<const float*>(nullptr), bias.data()}) {
          const std::vector<float> reference = run(Kernel::portable, x, rows, packed, b, 1);
          for (Kernel kernel : kernels)
            for (int threads : {1, 2})
              ASSERT_TRUE(bitwise_equal(run(kernel, x, rows, packed, b, threads), reference))
                  << detail::kernel_label(kernel) << " rows " << rows << " in " << in << " out " << out
                  << (b ? " with" : " without") << " bias, threads " << threads;
        }
      }
    }
}

// The portable kernel itself against the definition (quantise the row, integer dot product,
// rescale): the reference the bitwise comparison above relies on.
TEST(Int8Linear, PortableKernelComputesTheDefinition) {
  const int64_t rows = 3, in = 13, out = 18;
  const std::vector<float> x = gaussian(rows * in, 6), w = gaussian(out * in, 7), bias = gaussian(out, 8);
  const QuantizedWeight q = quantize_weight(w.data(), out, in);
  const std::vector<float> y = run(Kernel::portable, x, rows, PackedWeight(q), bias.data(), 1);
  for (int64_t m = 0; m < rows; ++m) {
    float x_max = 0;
    for (int64_t i = 0; i < in; ++i) x_max = std::max(x_max, std::fabs(x[m * in + i]));
    for (int64_t o = 0; o < out; ++o) {
      int64_t acc = 0;
      for (int64_t i = 0; i < in; ++i)
        acc += static_cast<int64_t>(std::nearbyint(x[m * in + i] * (127 / x_max))) * q.values[o * in + i];
      const double expected = double(acc) * (x_max / 127) * q.scales[o] + bias[o];
      EXPECT_NEAR(y[m * out + o], expected, 1e-5 * (1 + std::fabs(expected)));
    }
  }
}

TEST(Int8Linear, ZeroActivationsOrWeightsGiveTheBias) {
  const int64_t rows = 4, in = 21, out = 33;
  const std::vector<float> zeros_x(rows * in, 0.0f), x = gaussian(rows * in, 9);
  const std::vector<float> zeros_w(out * in, 0.0f), w = gaussian(out * in, 10);
  const std::vector<float> bias = gaussian(out, 11);
  const PackedWeight zero_weight(quantize_weight(zeros_w.data(), out, in));
  const PackedWeight weight(quantize_weight(w.data(), out, in));
  for (Kernel kernel : supported_kernels())
    for (const auto& [xs, packed] : {std::pair{&zeros_x, &weight}, std::pair{&x, &zero_weight}}) {
      const std::vector<float> y = run(kernel, *xs, rows, *packed, bias.data(), 1);
      for (int64_t m = 0; m < rows; ++m)
        for (int64_t o = 0; o < out; ++o) ASSERT_EQ(y[m * out + o], bias[o]) << detail::kernel_label(kernel);
    }
}

TEST(Int8Linear, NoInputFeaturesGiveTheBiasAndNoRowsWriteNothing) {
  const std::vector<float> bias = gaussian(5, 12);
  const PackedWeight empty_inputs(quantize_weight(nullptr, 5, 0));
  for (Kernel kernel : supported_kernels()) {
    const std::vector<float> y = run(kernel, {}, 2, empty_inputs, bias.data(), 1);
    for (int64_t o = 0; o < 10; ++o) EXPECT_EQ(y[o], bias[o % 5]) << detail::kernel_label(kernel);
    float untouched = 7.0f;
    detail::linear_with(kernel, nullptr, 0, empty_inputs, bias.data(), &untouched, 2);
    EXPECT_EQ(untouched, 7.0f);
  }
}

// Tiny but nonzero rows are quantised as zeros rather than through an infinite 127 / max_abs.
TEST(Int8Linear, ARowOfDenormalsGivesTheBiasOnEveryKernel) {
  const int64_t in = 40, out = 16;
  const std::vector<float> x(in, std::numeric_limits<float>::denorm_min()), w = gaussian(out * in, 13);
  const std::vector<float> bias = gaussian(out, 14);
  const PackedWeight packed(quantize_weight(w.data(), out, in));
  for (Kernel kernel : supported_kernels())
    EXPECT_TRUE(bitwise_equal(run(kernel, x, 1, packed, bias.data(), 1), bias)) << detail::kernel_label(kernel);
}

// On x86, the kernel chosen follows the CPU flags Linux reports, read independently of cpuid.
TEST(Int8Linear, KernelNameFollowsTheCpuFlags) {
#if !defined(__x86_64__) && !defined(__i386__)
  GTEST_SKIP() << "only the portable kernel exists here; kernel_name(): " << kernel_name();
#endif
  std::ifstream cpuinfo("/proc/cpuinfo");
  std::string line, flags;
  while (std::getline(cpuinfo, line))
    if (line.rfind("flags", 0) == 0) {
      flags = line + " ";
      break;
    }
  if (flags.empty()) GTEST_SKIP() << "no x86 flags in /proc/cpuinfo";
  auto has = [&](const char* flag) { return flags.find(std::string(" ") + flag + " ") != std::string::npos; };
  const std::string expected = has("avx512_vnni") && has("avx512bw") ? "avx512-vnni"
                               : has("avx_vnni")                     ? "avx-vnni"
                               : has("avx2")                         ? "avx2"
                                                                     : "portable";
  EXPECT_EQ(detail::kernel_label(detail::fastest_kernel()), expected);
  if (std::getenv("NMT_INT8_KERNEL") == nullptr) {
    EXPECT_EQ(kernel_name(), expected);
  }
  EXPECT_TRUE(detail::kernel_supported(detail::best_kernel()));
}

}  // namespace
}  // namespace nmt::quant
