#include "nmt/engine/linear.h"

#include <atomic>
#include <string>
#include <unordered_map>

#include <oneapi/dnnl/dnnl.hpp>
#include <fmt/format.h>
#include <omp.h>

#include "nmt/util/error.h"
#include "nmt/util/vectorize.h"

namespace nmt::engine {
namespace {

std::atomic<uint64_t> g_next_weight_id{1};

// The row stride of Wᵀ: out rounded up to 16 floats (64 bytes), moved off multiples of 256 floats.
int64_t padded_stride(int64_t out) {
  int64_t stride = (out + 15) / 16 * 16;
  if (stride % 256 == 0) stride += 16;
  return stride;
}

dnnl::algorithm algorithm_of(Activation a) {
  switch (a) {
    case Activation::kRelu: return dnnl::algorithm::eltwise_relu;
    case Activation::kSwish: return dnnl::algorithm::eltwise_swish;
    case Activation::kGelu: return dnnl::algorithm::eltwise_gelu_erf;
    case Activation::kNone: break;
  }
  return dnnl::algorithm::undef;
}

// Applies an epilogue on y = x·Wᵀ + b already computed in `tmp` (the int8 path): one loop per
// case, so that the common ones (none and ReLU, with or without the residual) run in vector lanes.
NMT_AVX2_CLONE void apply_epilogue(const float* tmp, int64_t n, float* y, const Epilogue& e) {
  switch (e.activation) {
    case Activation::kNone:
      if (e.accumulate) {
        for (int64_t i = 0; i < n; ++i) y[i] += tmp[i];
      } else {
        for (int64_t i = 0; i < n; ++i) y[i] = tmp[i];
      }
      return;
    case Activation::kRelu:
      if (e.accumulate) {
        for (int64_t i = 0; i < n; ++i) y[i] += tmp[i] > 0 ? tmp[i] : 0.0f;
      } else {
        for (int64_t i = 0; i < n; ++i) y[i] = tmp[i] > 0 ? tmp[i] : 0.0f;
      }
      return;
    case Activation::kSwish:
    case Activation::kGelu:
      break;
  }
  for (int64_t i = 0; i < n; ++i) {
    const float v = tmp[i];
    const float a = e.activation == Activation::kSwish ? v / (1 + std::exp(-v)) : 0.5f * v * (1 + std::erf(v * 0.70710678118654752f));
    y[i] = e.accumulate ? y[i] + a : a;
  }
}

std::atomic<int64_t> g_gemm_calls_in_flight{0};

// A compiled product with its memory objects and arguments, made once: a call then only points
// the source and destination at its arrays (no allocation in nmt's code per call).
struct CompiledMatmul {
  dnnl::matmul matmul;
  dnnl::memory x, w, y, b;
  std::vector<dnnl_exec_arg_t> args;
};

}  // namespace

struct GemmCache::Impl {
  dnnl::engine engine{dnnl::engine::kind::cpu, 0};
  dnnl::stream stream{engine};
  std::unordered_map<uint64_t, CompiledMatmul> matmuls;
  std::vector<float> int8_out;  // the int8 path's result before its epilogue

  CompiledMatmul& matmul_for(uint64_t key, int64_t rows, int64_t in, int64_t out, int64_t stride, const float* weight,
                             const float* bias, const Epilogue& e) {
    auto found = matmuls.find(key);
    if (found != matmuls.end()) return found->second;
    using dt = dnnl::memory::data_type;
    const dnnl::memory::desc x({rows, in}, dt::f32, dnnl::memory::format_tag::ab);
    const dnnl::memory::desc w({in, out}, dt::f32, dnnl::memory::dims{stride, 1});
    const dnnl::memory::desc y({rows, out}, dt::f32, dnnl::memory::format_tag::ab);
    dnnl::post_ops ops;
    if (e.accumulate) ops.append_sum(1.0f);
    // eltwise's alpha: ReLU's slope below zero (0), swish's β (1); GELU reads none.
    const float alpha = e.activation == Activation::kRelu ? 0.0f : 1.0f;
    if (e.activation != Activation::kNone) ops.append_eltwise(1.0f, algorithm_of(e.activation), alpha, 0.0f);
    dnnl::primitive_attr attr;
    attr.set_post_ops(ops);
    const dnnl::memory::desc b({1, out}, dt::f32, dnnl::memory::format_tag::ab);
    const auto desc = bias ? dnnl::matmul::desc(x, w, b, y) : dnnl::matmul::desc(x, w, y);
    CompiledMatmul c;
    c.matmul = dnnl::matmul(dnnl::matmul::primitive_desc(desc, attr, engine));
    c.x = dnnl::memory(x, engine, DNNL_MEMORY_NONE);
    c.w = dnnl::memory(w, engine, const_cast<float*>(weight));
    c.y = dnnl::memory(y, engine, DNNL_MEMORY_NONE);
    c.args = {{DNNL_ARG_SRC, c.x.get()}, {DNNL_ARG_WEIGHTS, c.w.get()}, {DNNL_ARG_DST, c.y.get()}};
    if (bias) {
      c.b = dnnl::memory(b, engine, const_cast<float*>(bias));
      c.args.push_back({DNNL_ARG_BIAS, c.b.get()});
    }
    return matmuls.emplace(key, std::move(c)).first->second;
  }
};

GemmCache::GemmCache() : impl_(std::make_unique<Impl>()) {}
GemmCache::~GemmCache() = default;
GemmCache::GemmCache(GemmCache&&) noexcept = default;
GemmCache& GemmCache::operator=(GemmCache&&) noexcept = default;

Linear Linear::float32(const float* weight, const float* bias, int64_t out_features, int64_t in_features) {
  Linear l;
  l.out_ = out_features;
  l.in_ = in_features;
  l.stride_ = padded_stride(out_features);
  auto t = std::make_shared<std::vector<float>>(static_cast<size_t>(in_features * l.stride_), 0.0f);
  for (int64_t o = 0; o < out_features; ++o)
    for (int64_t i = 0; i < in_features; ++i) (*t)[static_cast<size_t>(i * l.stride_ + o)] = weight[o * in_features + i];
  l.transposed_ = std::move(t);
  if (bias) l.bias_ = std::make_shared<const std::vector<float>>(bias, bias + out_features);
  l.id_ = g_next_weight_id++;
  return l;
}

Linear Linear::int8(const quant::QuantizedWeight& weight, const float* bias) {
  Linear l;
  l.out_ = weight.out_features;
  l.in_ = weight.in_features;
  l.int8_ = std::make_shared<const quant::PackedWeight>(weight);
  if (bias) l.bias_ = std::make_shared<const std::vector<float>>(bias, bias + l.out_);
  l.id_ = g_next_weight_id++;
  return l;
}

void Linear::forward(const float* x, int64_t rows, float* y, GemmCache& cache, Epilogue epilogue) const {
  if (rows == 0) return;
  GemmCache::Impl& c = cache.impl();
  if (int8_) {
    const bool plain = epilogue.activation == Activation::kNone && !epilogue.accumulate;
    float* out = y;
    if (!plain) {
      c.int8_out.resize(static_cast<size_t>(rows * out_));
      out = c.int8_out.data();
    }
    quant::linear(x, rows, *int8_, bias_ ? bias_->data() : nullptr, out, omp_get_max_threads());
    if (!plain) apply_epilogue(out, rows * out_, y, epilogue);
    return;
  }
  // At most three calls, each of a row count from a small set, so that a compiled product serves
  // many calls: power-of-two pieces of 256 rows or more, then a multiple of 16, then the last
  // 0-15 rows. One compiled product per row count a decoding meets (finished sentences leave
  // every count from the batch size down to 1) held 120 MB of oneDNN's code after one pass over
  // test_2016_flickr; a call per power-of-two piece cost 25 % at 2 threads (docs/experiments.md,
  // "The CPU engine's products").
  int64_t done = 0;
  const auto run = [&](int64_t piece) {
    execute_float32(x + done * in_, piece, y + done * out_, cache, epilogue);
    done += piece;
  };
  while (rows - done >= 256) run(int64_t{1} << (63 - __builtin_clzll(static_cast<unsigned long long>(rows - done))));
  if (rows - done >= 16) run((rows - done) / 16 * 16);
  if (rows > done) run(rows - done);
}

void Linear::execute_float32(const float* x, int64_t rows, float* y, GemmCache& cache, const Epilogue& epilogue) const {
  GemmCache::Impl& c = cache.impl();
  // Key: weight id, rows, epilogue (activation 2 bits, accumulate 1 bit).
  const uint64_t key = (id_ << 32) ^ (static_cast<uint64_t>(rows) << 3) ^ (static_cast<uint64_t>(epilogue.activation) << 1) ^
                       (epilogue.accumulate ? 1u : 0u);
  CompiledMatmul& mm = c.matmul_for(key, rows, in_, out_, stride_, transposed_->data(), bias_ ? bias_->data() : nullptr,
                                    epilogue);
  g_gemm_calls_in_flight.fetch_add(1, std::memory_order_relaxed);
  mm.x.set_data_handle(const_cast<float*>(x));
  mm.y.set_data_handle(y);
  // The C call: the C++ execute() copies its argument map into a new vector at every call.
  const dnnl_status_t status = dnnl_primitive_execute(mm.matmul.get(), c.stream.get(), static_cast<int>(mm.args.size()),
                                                      mm.args.data());
  if (status == dnnl_success) c.stream.wait();
  g_gemm_calls_in_flight.fetch_sub(1, std::memory_order_relaxed);
  if (status != dnnl_success) throw RuntimeError(fmt::format("oneDNN's matmul failed (status {})", static_cast<int>(status)));
}

int64_t gemm_calls_in_flight() { return g_gemm_calls_in_flight.load(std::memory_order_relaxed); }

GemmThreads::GemmThreads(int threads) {
  if (threads < 1) return;
  before_ = omp_get_max_threads();
  omp_set_num_threads(threads);
}

GemmThreads::~GemmThreads() {
  if (before_ > 0) omp_set_num_threads(before_);
}

std::string gemm_library() {
  const dnnl_version_t* v = dnnl_version();
  const char* isa = "";
  switch (dnnl::get_effective_cpu_isa()) {
    case dnnl::cpu_isa::avx512_core_amx: isa = "avx512-amx"; break;
    case dnnl::cpu_isa::avx512_core_bf16: isa = "avx512-bf16"; break;
    case dnnl::cpu_isa::avx512_core_vnni: isa = "avx512-vnni"; break;
    case dnnl::cpu_isa::avx512_core: isa = "avx512"; break;
    case dnnl::cpu_isa::avx2_vnni: isa = "avx2-vnni"; break;
    case dnnl::cpu_isa::avx2: isa = "avx2"; break;
    default: isa = "other"; break;
  }
  return fmt::format("oneDNN {}.{}.{} ({})", v->major, v->minor, v->patch, isa);
}

}  // namespace nmt::engine
