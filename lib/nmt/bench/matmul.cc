// `nmt bench matmul`: the machine's matrix-product peaks, float32 and int8.
#include <torch/torch.h>

#include <algorithm>
#include <memory>
#include <string>
#include <utility>

#include "nmt/bench/bench.h"
#include "nmt/bench/measure.h"
#include "nmt/quant/int8_gemm.h"
#include "nmt/tensor/threads.h"
#include "nmt/util/blas.h"

namespace nmt::bench {

namespace {

// The best achieved GFLOP/s of `product(n)`, an n x n by n x n matrix product (2n³ operations),
// over square sizes 256..2048: each size warmed up twice, then repeated for about 2^31 operations.
template <class Product>
std::pair<double, nlohmann::json> best_square_product_speed(Product&& product) {
  nlohmann::json sizes = nlohmann::json::object();
  double best = 0;
  for (int64_t n : {256, 512, 1024, 2048}) {
    for (int i = 0; i < 2; ++i) product(n);
    const int reps = static_cast<int>(std::max<int64_t>(3, (int64_t{1} << 31) / (n * n * n)));
    const auto t0 = BenchClock::now();
    for (int i = 0; i < reps; ++i) product(n);
    const double gflops = 2.0 * n * n * n * reps / seconds_since(t0) / 1e9;
    sizes[std::to_string(n)] = gflops;
    best = std::max(best, gflops);
  }
  return {best, sizes};
}

// nmt's int8 product as quantised decoding runs it (quant::linear: the activations quantised per
// row at each call, the weights packed once), on the operands of the size at hand.
class Int8SquareProduct {
 public:
  explicit Int8SquareProduct(int threads) : threads_(threads) {}
  void operator()(int64_t n) {
    if (n != n_) {
      auto w = torch::randn({n, n});
      weight_ = std::make_unique<quant::PackedWeight>(quant::quantize_weight(w.data_ptr<float>(), n, n));
      x_ = torch::randn({n, n});
      y_ = torch::empty({n, n});
      n_ = n;
    }
    quant::linear(x_.data_ptr<float>(), n, *weight_, nullptr, y_.data_ptr<float>(), threads_);
  }

 private:
  int threads_;
  int64_t n_ = 0;
  std::unique_ptr<quant::PackedWeight> weight_;
  torch::Tensor x_, y_;
};

}  // namespace

nlohmann::json measure_matmul(const RuntimeOptions& runtime) {
  set_threads(runtime.threads);
  torch::NoGradGuard guard;
  torch::Tensor a, b;
  const auto [fp32_peak, fp32_sizes] = best_square_product_speed([&](int64_t n) {
    if (!a.defined() || a.size(0) != n) a = torch::randn({n, n}), b = torch::randn({n, n});
    (void)torch::mm(a, b);
  });
  // The int8 rows of a decoding benchmark divide by this peak as the float32 rows divide by
  // peak_gflops: both count a multiply-add as 2 operations.
  // --threads 0 (the libraries' default) is one thread per core here, as in quantised decoding.
  const auto [int8_peak, int8_sizes] = best_square_product_speed(Int8SquareProduct(configured_threads()));
  return {{"peak_gflops", fp32_peak},      {"by_size", fp32_sizes},
          {"int8_peak_gflops", int8_peak}, {"int8_by_size", int8_sizes},
          {"int8_kernel", quant::kernel_name()}, {"threads", runtime.threads},
          {"blas_core", select_blas_kernels()}};
}

}  // namespace nmt::bench
