#pragma once
// The matrix products of the CPU engine: y = x·Wᵀ + b for a Linear weight W [out, in], with the
// weight rearranged once at load for the GEMM library and the original dropped (CTranslate2's
// packed weights), and an optional epilogue fused into the same call.
//
// float32 runs on oneDNN's matmul (Debian's libdnnl-dev). Measured against OpenBLAS's sgemm and
// oneDNN's own packed layouts on a Zen 2, 1 thread (docs/experiments.md, "The CPU engine's
// products"): OpenBLAS packs the weight again on every call, 5-11x slower for one row; oneDNN's
// "any" layout is best for a few rows but 2x slower from 32 rows when out is a multiple of 1024;
// Wᵀ [in][out] with its row stride padded off multiples of 256 floats (4 KiB aliasing) is within
// 10 % of the best at every size, so it is the one layout kept. int8 weights run on nmt's own
// kernels (quant/int8_gemm.h). oneDNN stays out of this header: it is included by one file.
#include <cstdint>
#include <memory>
#include <vector>

#include "nmt/quant/int8_gemm.h"

namespace nmt::engine {

enum class Activation { kNone, kRelu, kSwish, kGelu };

// What happens to x·Wᵀ + b before it is stored.
struct Epilogue {
  Activation activation = Activation::kNone;
  bool accumulate = false;  // y += result (a residual connection), instead of y = result
};

class GemmCache;

class Linear {
 public:
  Linear() = default;
  // Copies and rearranges `weight` (row-major [out][in]); bias [out] or null.
  static Linear float32(const float* weight, const float* bias, int64_t out_features, int64_t in_features);
  // An int8 weight (quantised per output channel), packed for this CPU's kernel.
  static Linear int8(const quant::QuantizedWeight& weight, const float* bias);

  // y [rows][out] from x [rows][in], both row-major and dense. `cache` holds the compiled
  // kernels per shape (one per decoding thread: the Linear itself is shared and read-only).
  void forward(const float* x, int64_t rows, float* y, GemmCache& cache, Epilogue epilogue = {}) const;

  int64_t out_features() const { return out_; }
  int64_t in_features() const { return in_; }
  bool is_int8() const { return int8_ != nullptr; }
  bool empty() const { return out_ == 0; }

 private:
  void execute_float32(const float* x, int64_t rows, float* y, GemmCache& cache, const Epilogue& epilogue) const;
  int64_t out_ = 0, in_ = 0, stride_ = 0;  // stride_: floats per row of Wᵀ
  std::shared_ptr<const std::vector<float>> transposed_;  // Wᵀ [in][stride_]
  std::shared_ptr<const std::vector<float>> bias_;        // [out] or null
  std::shared_ptr<const quant::PackedWeight> int8_;
  uint64_t id_ = 0;  // the cache key's weight part
};

// oneDNN's compiled matmuls by (weight, rows, epilogue), made on first use and kept: creating
// one costs more than running it for a few rows. Not thread-safe: one per decoding thread.
class GemmCache {
 public:
  GemmCache();
  ~GemmCache();
  GemmCache(GemmCache&&) noexcept;
  GemmCache& operator=(GemmCache&&) noexcept;
  struct Impl;
  Impl& impl() { return *impl_; }

 private:
  std::unique_ptr<Impl> impl_;
};

// While it lives, the calling thread's OpenMP regions (oneDNN's products, nmt's int8 kernels and
// the engine's own loops) use `threads` threads (0 = leave the count as it is); the count before
// comes back at its end. Per call, not per process: LibTorch's decoder in the same process keeps
// the OpenMP count its --threads gave it (1 beside OpenBLAS, tensor/threads.cc).
class GemmThreads {
 public:
  explicit GemmThreads(int threads);
  ~GemmThreads();
  GemmThreads(const GemmThreads&) = delete;
  GemmThreads& operator=(const GemmThreads&) = delete;

 private:
  int before_ = 0;
};
// How many float32 products are inside oneDNN right now, in all threads: oneDNN's execute
// allocates its own bookkeeping at every call, which the allocation tests tell apart from nmt's.
int64_t gemm_calls_in_flight();
// "oneDNN 2.6.3 (avx2)": the library and the instruction set its kernels use, for tables.
std::string gemm_library();

}  // namespace nmt::engine
