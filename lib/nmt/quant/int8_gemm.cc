#include "nmt/quant/int8_gemm.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <functional>
#include <system_error>
#include <thread>
#include <vector>

#include "nmt/quant/int8_kernels.h"
#include "nmt/util/error.h"

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#define NMT_QUANT_X86 1
#endif

namespace nmt::quant {
namespace {

using detail::kBlockColumns;
using detail::Kernel;
using detail::kGroupInputs;
using detail::round_to_int8;

int64_t round_up(int64_t n, int64_t multiple) { return (n + multiple - 1) / multiple * multiple; }

// The int32 accumulators wrap (vpdpbusd, vpaddd), so only the final Σ x·w must fit:
// 127 · 127 · in_features < 2^31.
constexpr int64_t kMaxInFeatures = (int64_t{1} << 31) / (127 * 127);

// A QuantizedWeight may come from a file: its sizes and values are checked before packing
// (-128 would break the symmetric range the AVX2 kernel's sign trick relies on).
void check_quantized(const QuantizedWeight& w) {
  if (w.out_features < 0 || w.in_features < 0 || w.in_features > kMaxInFeatures)
    throw RuntimeError("int8 weight of " + std::to_string(w.out_features) + " x " + std::to_string(w.in_features) +
                       ": in_features must be in [0, " + std::to_string(kMaxInFeatures) + "]");
  if (w.values.size() != static_cast<size_t>(w.out_features * w.in_features) ||
      w.scales.size() != static_cast<size_t>(w.out_features))
    throw RuntimeError("int8 weight of " + std::to_string(w.out_features) + " x " + std::to_string(w.in_features) +
                       " has " + std::to_string(w.values.size()) + " values and " + std::to_string(w.scales.size()) +
                       " scales");
  if (std::find(w.values.begin(), w.values.end(), int8_t{-128}) != w.values.end())
    throw RuntimeError("int8 weight holds -128: values must be in [-127, 127]");
}

}  // namespace

QuantizedWeight quantize_weight(const float* weight, int64_t out_features, int64_t in_features) {
  QuantizedWeight q;
  q.out_features = out_features;
  q.in_features = in_features;
  q.values.resize(static_cast<size_t>(out_features * in_features));
  q.scales.resize(static_cast<size_t>(out_features));
  for (int64_t o = 0; o < out_features; ++o) {
    const float* row = weight + o * in_features;
    float max_abs = 0;
    for (int64_t i = 0; i < in_features; ++i) max_abs = std::max(max_abs, std::fabs(row[i]));
    const float scale = max_abs > 0 ? max_abs / 127.0f : 1.0f;
    q.scales[o] = scale;
    for (int64_t i = 0; i < in_features; ++i) q.values[o * in_features + i] = round_to_int8(row[i] / scale);
  }
  return q;
}

PackedWeight::PackedWeight(const QuantizedWeight& weight)
    : out_features_(weight.out_features), in_features_(weight.in_features) {
  check_quantized(weight);
  detail::best_kernel();  // a bad NMT_INT8_KERNEL is refused as the model loads, before any input is read
  const int64_t blocks = round_up(out_features_, kBlockColumns) / kBlockColumns;
  const int64_t groups = round_up(in_features_, kGroupInputs) / kGroupInputs;
  packed_.assign(static_cast<size_t>(blocks * groups), detail::PackedGroup{});
  scales_.assign(static_cast<size_t>(blocks * kBlockColumns), 0.0f);
  compensation_.assign(static_cast<size_t>(blocks * kBlockColumns), 0);
  for (int64_t o = 0; o < out_features_; ++o) {
    const int8_t* row = weight.values.data() + o * in_features_;
    detail::PackedGroup* block = packed_.data() + o / kBlockColumns * groups;
    const int64_t lane = o % kBlockColumns * kGroupInputs;
    int32_t sum = 0;
    for (int64_t i = 0; i < in_features_; ++i) {
      block[i / kGroupInputs].values[lane + i % kGroupInputs] = row[i];
      sum += row[i];
    }
    scales_[o] = weight.scales[o];
    // Wraps like the accumulators it starts (in_features near the limit passes -2^31).
    compensation_[o] = static_cast<int32_t>(static_cast<uint32_t>(-128 * int64_t{sum}));
  }
}

namespace detail {

void quantize_rows_portable(const float* x, int64_t rows, int64_t in, int64_t stride, bool offset, uint8_t* out,
                            float* scales) {
  const int bias = offset ? 128 : 0;
  for (int64_t m = 0; m < rows; ++m) {
    const float* row = x + m * in;
    uint8_t* q = out + m * stride;
    float max_abs = 0;
    for (int64_t i = 0; i < in; ++i) max_abs = std::max(max_abs, std::fabs(row[i]));
    const RowScale s = row_scale(max_abs);
    scales[m] = s.scale;
    for (int64_t i = 0; i < in; ++i) q[i] = static_cast<uint8_t>(round_to_int8(row[i] * s.inverse) + bias);
    std::fill(q + in, q + stride, static_cast<uint8_t>(bias));
  }
}

// Plain loops over the packed layout; GCC vectorises the 16 × 4 inner loops somewhat. The
// fallback for CPUs without AVX2 and for other architectures.
void gemm_portable(const Operands& op, int64_t block_begin, int64_t block_end) {
  for (int64_t b = block_begin; b < block_end; ++b) {
    const PackedGroup* w = op.w + b * op.groups;
    const int64_t columns = std::min(kBlockColumns, op.out - b * kBlockColumns);
    for (int64_t m = 0; m < op.rows; ++m) {
      const int8_t* x = reinterpret_cast<const int8_t*>(op.x + m * op.x_stride);
      int32_t acc[kBlockColumns] = {};
      for (int64_t g = 0; g < op.groups; ++g)
        for (int64_t c = 0; c < kBlockColumns; ++c)
          for (int64_t j = 0; j < kGroupInputs; ++j)
            acc[c] += int32_t{x[g * kGroupInputs + j]} * w[g].values[c * kGroupInputs + j];
      for (int64_t c = 0; c < columns; ++c) {
        const int64_t o = b * kBlockColumns + c;
        op.y[m * op.out + o] = dequantise(acc[c], op.x_scales[m], op.w_scales[o], op.bias ? op.bias[o] : 0.0f);
      }
    }
  }
}

namespace {

#ifdef NMT_QUANT_X86
struct CpuFeatures {
  bool avx2 = false, avx_vnni = false, avx512_vnni = false;
};

// cpuid rather than __builtin_cpu_supports: Clang 14 does not know "avxvnni" there. The
// extended states (ymm, zmm) must also be enabled by the OS (XGETBV), or the instructions fault.
CpuFeatures detect_cpu() {
  CpuFeatures f;
  unsigned a, b, c, d;
  if (!__get_cpuid(1, &a, &b, &c, &d)) return f;
  const bool osxsave = c & (1u << 27), avx = c & (1u << 28);
  if (!osxsave || !avx) return f;
  unsigned xcr0_low, xcr0_high;
  __asm__("xgetbv" : "=a"(xcr0_low), "=d"(xcr0_high) : "c"(0));
  const bool ymm_state = (xcr0_low & 0x6) == 0x6;
  const bool zmm_state = (xcr0_low & 0xe6) == 0xe6;
  if (!ymm_state || !__get_cpuid_count(7, 0, &a, &b, &c, &d)) return f;
  const bool avx2 = b & (1u << 5), avx512f = b & (1u << 16), avx512bw = b & (1u << 30);
  const bool avx512vnni = c & (1u << 11);
  f.avx2 = avx2;
  f.avx512_vnni = zmm_state && avx512f && avx512bw && avx512vnni;
  if (__get_cpuid_count(7, 1, &a, &b, &c, &d)) f.avx_vnni = avx2 && (a & (1u << 4));
  return f;
}
#endif

}  // namespace

bool kernel_supported(Kernel kernel) {
#ifdef NMT_QUANT_X86
  static const CpuFeatures cpu = detect_cpu();
  switch (kernel) {
    case Kernel::portable: return true;
    case Kernel::avx2: return cpu.avx2;
    case Kernel::avx_vnni: return cpu.avx_vnni;
    case Kernel::avx512_vnni: return cpu.avx512_vnni;
  }
  return false;
#else
  return kernel == Kernel::portable;
#endif
}

namespace {

// NMT_INT8_KERNEL=avx2 (or another label) runs that kernel instead of the fastest one, as
// CTranslate2's CT2_FORCE_CPU_ISA and MKL's MKL_ENABLE_INSTRUCTIONS do: to measure on an AVX-512
// machine what an AVX2-only CPU would run, or to rule a kernel out when looking for a fault.
constexpr Kernel kKernelsFastestFirst[] = {Kernel::avx512_vnni, Kernel::avx_vnni, Kernel::avx2, Kernel::portable};

Kernel forced_kernel(const char* label) {
  std::string names;  // the error's list, from the labels themselves
  for (Kernel k : kKernelsFastestFirst) {
    names += (names.empty() ? "" : ", ") + std::string(kernel_label(k));
    if (std::string(label) != kernel_label(k)) continue;
    if (!kernel_supported(k))
      throw UsageError("NMT_INT8_KERNEL=" + std::string(label) + ": this CPU (or this build) cannot run that kernel; " +
                       "its fastest is " + kernel_label(fastest_kernel()));
    return k;
  }
  throw UsageError("NMT_INT8_KERNEL=" + std::string(label) + ": not one of " + names);
}

}  // namespace

Kernel fastest_kernel() {
  static const Kernel fastest = [] {
    for (Kernel k : kKernelsFastestFirst)
      if (kernel_supported(k)) return k;
    return Kernel::portable;  // not reached: portable is always supported
  }();
  return fastest;
}

Kernel best_kernel() {
  static const Kernel chosen = [] {
    const char* forced = std::getenv("NMT_INT8_KERNEL");
    return forced && *forced ? forced_kernel(forced) : fastest_kernel();
  }();
  return chosen;
}

const char* kernel_label(Kernel kernel) {
  switch (kernel) {
    case Kernel::portable: return "portable";
    case Kernel::avx2: return "avx2";
    case Kernel::avx_vnni: return "avx-vnni";
    case Kernel::avx512_vnni: return "avx512-vnni";
  }
  return "?";
}

namespace {

GemmFunction gemm_function(Kernel kernel) {
  switch (kernel) {
#ifdef NMT_QUANT_X86
    case Kernel::avx2: return gemm_avx2;
    case Kernel::avx_vnni: return gemm_avx_vnni;
    case Kernel::avx512_vnni: return gemm_avx512_vnni;
#endif
    default: return gemm_portable;
  }
}

// Column blocks a kernel's micro-tile spans: thread boundaries fall on whole tiles.
int64_t blocks_per_tile(Kernel kernel) { return kernel == Kernel::avx512_vnni ? detail::kAvx512TileBlocks : 1; }

// A helper std::thread costs ~16 µs to start and join here (best of 2000; 70-110 µs on average
// with the 2 cores shared), while the AVX-512 kernel does ~250 GMAC/s per core, so a thread pays
// only for ≥ 2^23 multiply-adds (~35 µs) of its own. Of a decoding step's products (rows ≈ 5 for a
// beam of 5) that is only the vocabulary projection (5 × 512 × 8000 = 20M); a per-layer product
// (5 × 512 × 2048 = 5M) runs on the caller's thread alone. Threads are started per call rather
// than kept in a pool: nothing then spins or sleeps between calls on a shared machine.
constexpr int64_t kMinMacsPerThread = int64_t{1} << 23;

// Splits the column tiles over `threads` threads (the caller's thread takes the first share):
// each thread then streams its own slice of the weight once, whatever the rows.
void run_split(GemmFunction gemm, const Operands& op, int64_t tile_blocks, int threads) {
  const int64_t blocks = (op.out + kBlockColumns - 1) / kBlockColumns;
  const int64_t tiles = (blocks + tile_blocks - 1) / tile_blocks;
  const int64_t macs = op.rows * op.x_stride * blocks * kBlockColumns;
  const int64_t useful = std::max<int64_t>(1, macs / kMinMacsPerThread);
  const int64_t parts = std::min<int64_t>({threads, tiles, useful});
  auto share = [&](int64_t part) { return std::min(blocks, tiles * part / parts * tile_blocks); };
  std::vector<std::thread> helpers;
  int64_t part = 1;
  try {
    for (; part < parts; ++part) helpers.emplace_back(gemm, std::cref(op), share(part), share(part + 1));
  } catch (const std::system_error&) {  // no thread to be had: the caller's thread does the rest
    gemm(op, share(part), share(parts));
  }
  gemm(op, share(0), share(1));
  for (std::thread& t : helpers) t.join();
}

}  // namespace

void linear_with(Kernel kernel, const float* x, int64_t rows, const PackedWeight& weight, const float* bias, float* y,
                 int threads) {
  Operands op = PackedAccess::operands(weight);
  if (rows <= 0 || op.out <= 0) return;
  const int64_t in = PackedAccess::in_features(weight);
  // Quantised once, on the caller's thread, for all the threads: 17 µs for 320 × 512 (AVX2), ~5 %
  // of the 320 × 512 × 512 product. Reused across calls: decoding makes thousands of them.
  thread_local std::vector<uint8_t> x_quantised;
  thread_local std::vector<float> x_scales;
  x_quantised.resize(static_cast<size_t>(rows * op.x_stride));
  x_scales.resize(static_cast<size_t>(rows));
  const bool offset = kernel == Kernel::avx_vnni || kernel == Kernel::avx512_vnni;
#ifdef NMT_QUANT_X86
  if (kernel != Kernel::portable)
    quantize_rows_avx2(x, rows, in, op.x_stride, offset, x_quantised.data(), x_scales.data());
  else
#endif
    quantize_rows_portable(x, rows, in, op.x_stride, offset, x_quantised.data(), x_scales.data());
  op.x = x_quantised.data();
  op.x_scales = x_scales.data();
  op.rows = rows;
  op.bias = bias;
  op.y = y;
  run_split(gemm_function(kernel), op, blocks_per_tile(kernel), std::max(threads, 1));
}

}  // namespace detail

void linear(const float* x, int64_t rows, const PackedWeight& weight, const float* bias, float* y, int threads) {
  detail::linear_with(detail::best_kernel(), x, rows, weight, bias, y, threads);
}

std::string kernel_name() { return detail::kernel_label(detail::best_kernel()); }

}  // namespace nmt::quant
