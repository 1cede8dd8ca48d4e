// The CPU engine without LibTorch (engine/engine.h): models read from a safetensors file decode
// as the same models built from the same weights elsewhere, int8 copies in the file are used as
// they are, a file missing a tensor is refused in one line naming it, and a warm decoding step
// allocates nothing in nmt's code (this executable counts every operator new; oneDNN's execute
// allocates its own bookkeeping at each float32 product, counted apart and printed).
// Its equivalence with LibTorch's decoder is tests/equivalence/cpu_engine_test.cc's.
#include <gtest/gtest.h>

#include <atomic>
#include <iostream>
#include <cmath>
#include <cstdlib>
#include <map>
#include <memory>
#include <new>
#include <random>
#include <string>
#include <vector>

#include "nmt/engine/engine.h"
#include "nmt/engine/gru.h"
#include "nmt/engine/linear.h"
#include "nmt/engine/safetensors_weights.h"
#include "nmt/engine/transformer.h"
#include "nmt/util/error.h"
#include "nmt/util/safetensors.h"

// Every allocation of this process is counted while `g_counting` is set: those made while a
// float32 product is inside oneDNN apart.
namespace {
std::atomic<bool> g_counting{false};
std::atomic<int64_t> g_allocations{0}, g_gemm_library_allocations{0};
void* counted(std::size_t n) {
  if (g_counting.load(std::memory_order_relaxed))
    (nmt::engine::gemm_calls_in_flight() > 0 ? g_gemm_library_allocations : g_allocations).fetch_add(1, std::memory_order_relaxed);
  if (void* p = std::malloc(n == 0 ? 1 : n)) return p;
  throw std::bad_alloc();
}
}  // namespace
void* operator new(std::size_t n) { return counted(n); }
void* operator new[](std::size_t n) { return counted(n); }
void* operator new(std::size_t n, const std::nothrow_t&) noexcept {
  try {
    return counted(n);
  } catch (...) {
    return nullptr;
  }
}
void* operator new[](std::size_t n, const std::nothrow_t& t) noexcept { return operator new(n, t); }
void operator delete(void* p) noexcept { std::free(p); }
void operator delete[](void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }
void operator delete[](void* p, std::size_t) noexcept { std::free(p); }

using namespace nmt;

namespace {

constexpr int64_t kVocab = 40;

// Random float32 weights for whatever a model asks for, remembered so they can be written to a
// safetensors file: LayerNorm gains near 1, everything else N(0, 0.3²).
class RandomWeights final : public engine::WeightSource {
 public:
  const float* f32(const std::string& name, const std::vector<int64_t>& shape) const override {
    auto found = tensors_.find(name);
    if (found != tensors_.end()) return found->second.values.data();
    int64_t n = 1;
    for (int64_t s : shape) n *= s;
    std::mt19937 rng(static_cast<uint32_t>(std::hash<std::string>{}(name)));
    std::normal_distribution<float> normal(0.0f, 0.3f);
    const bool gain = name.find("norm") != std::string::npos && name.find(".weight") != std::string::npos;
    Tensor t{shape, std::vector<float>(static_cast<size_t>(n))};
    for (float& v : t.values) v = (gain ? 1.0f : 0.0f) + normal(rng);
    return tensors_.emplace(name, std::move(t)).first->second.values.data();
  }
  bool contains(const std::string& name) const override { return tensors_.count(name) > 0; }
  std::string description() const override { return "random weights"; }

  // The tensors asked for so far as a safetensors file, less `leave_out`; with `int8`, each
  // Linear weight named there also as NAME.int8 and NAME.scales.
  safetensors::File file(const std::string& leave_out = "", const std::vector<std::string>& int8 = {}) const {
    std::vector<safetensors::TensorToWrite> out;
    std::vector<quant::QuantizedWeight> quantized;
    quantized.reserve(int8.size());
    for (const std::string& name : int8) {
      const Tensor& t = tensors_.at(name);
      quantized.push_back(quant::quantize_weight(t.values.data(), t.shape[0], t.shape[1]));
      out.push_back({name + ".int8", safetensors::DType::kI8, t.shape, quantized.back().values.data()});
      out.push_back({name + ".scales", safetensors::DType::kF32, {t.shape[0]}, quantized.back().scales.data()});
    }
    for (const auto& [name, t] : tensors_)
      if (name != leave_out) out.push_back({name, safetensors::DType::kF32, t.shape, t.values.data()});
    return safetensors::File::from_bytes(safetensors::serialize(out), "model.safetensors");
  }

 private:
  struct Tensor {
    std::vector<int64_t> shape;
    std::vector<float> values;
  };
  mutable std::map<std::string, Tensor> tensors_;
};

engine::TransformerSpec small_transformer() {
  engine::TransformerSpec s;
  s.d_model = 32;
  s.heads = 4;
  s.ffn = 64;
  s.encoder_layers = s.decoder_layers = 2;
  s.src_vocab = s.tgt_vocab = kVocab;
  s.max_positions = 64;
  return s;
}

engine::GruSpec small_gru() {
  engine::GruSpec s;
  s.embedding = 24;
  s.hidden = 32;
  s.layers = 2;
  s.bidirectional = true;
  s.layer_norm = true;
  s.src_vocab = s.tgt_vocab = kVocab;
  s.max_positions = 64;
  return s;
}

std::vector<text::TokenIds> sources(size_t n) {
  std::mt19937 rng(7);
  std::vector<text::TokenIds> out(n);
  for (auto& s : out) {
    s.resize(1 + rng() % 12);
    for (auto& id : s) id = static_cast<int32_t>(4 + rng() % (kVocab - 4));
  }
  return out;
}

std::vector<decode::SearchResult> beam_search(const engine::Engine& e) {
  engine::EngineDecodeOptions o;
  o.search.beam_search = true;
  o.search.beam.beam = 4;
  o.search.beam.nbest = 2;
  o.search.token_log_probs = true;
  return e.search(sources(20), o);
}

void expect_same(const std::vector<decode::SearchResult>& a, const std::vector<decode::SearchResult>& b) {
  ASSERT_EQ(a.size(), b.size());
  for (size_t i = 0; i < a.size(); ++i) {
    ASSERT_EQ(a[i].size(), b[i].size());
    for (size_t k = 0; k < a[i].size(); ++k) {
      EXPECT_EQ(a[i][k].tokens, b[i][k].tokens) << "source " << i;
      EXPECT_EQ(a[i][k].score, b[i][k].score) << "source " << i;
    }
  }
}

template <typename M, typename Spec>
std::shared_ptr<const engine::Model> make(const Spec& spec, const engine::WeightSource& w, bool int8 = false) {
  return std::make_shared<const M>(spec, w, int8);
}

TEST(EngineWithoutLibTorch, DecodesModelsReadFromASafetensorsFile) {
  RandomWeights random_transformer, random_gru;
  auto transformer = make<engine::Transformer>(small_transformer(), random_transformer);
  auto gru = make<engine::GruBahdanau>(small_gru(), random_gru);
  const safetensors::File transformer_file = random_transformer.file(), gru_file = random_gru.file();
  expect_same(beam_search(engine::Engine({transformer})),
              beam_search(engine::Engine({make<engine::Transformer>(small_transformer(),
                                                                     engine::SafetensorsWeights(transformer_file))})));
  expect_same(beam_search(engine::Engine({gru})),
              beam_search(engine::Engine({make<engine::GruBahdanau>(small_gru(), engine::SafetensorsWeights(gru_file))})));
  const auto results = beam_search(engine::Engine({transformer, gru}));
  for (const auto& r : results) {
    ASSERT_EQ(r.size(), 2u);
    EXPECT_GE(r[0].score, r[1].score);
    for (int32_t t : r[0].tokens) EXPECT_TRUE(t >= 0 && t < kVocab);
  }
}

TEST(EngineWithoutLibTorch, UsesTheInt8CopiesAFileHolds) {
  RandomWeights random;
  auto quantised_on_load = make<engine::Transformer>(small_transformer(), random, /*int8=*/true);
  std::vector<std::string> linears;
  for (const char* name : {"ffn.fc1", "ffn.fc2", "self_attn.qkv_proj", "self_attn.out_proj"})
    for (int layer = 0; layer < 2; ++layer) linears.push_back("encoder.layers." + std::to_string(layer) + "." + name + ".weight");
  for (const char* name : {"ffn.fc1", "ffn.fc2", "self_attn.qkv_proj", "self_attn.out_proj", "cross_attn.q_proj",
                           "cross_attn.kv_proj", "cross_attn.out_proj"})
    for (int layer = 0; layer < 2; ++layer) linears.push_back("decoder.layers." + std::to_string(layer) + "." + name + ".weight");
  const safetensors::File file = random.file("", linears);
  const engine::SafetensorsWeights from_file(file);
  // The file's int8 copies, read as they are (int8 = false), decode as quantising on load does.
  expect_same(beam_search(engine::Engine({quantised_on_load})),
              beam_search(engine::Engine({make<engine::Transformer>(small_transformer(), from_file, /*int8=*/true)})));
}

TEST(EngineWithoutLibTorch, AFileMissingATensorIsRefusedNamingIt) {
  RandomWeights random;
  make<engine::GruBahdanau>(small_gru(), random);
  const safetensors::File file = random.file("decoder.bridge.weight");
  const engine::SafetensorsWeights from_file(file);
  try {
    make<engine::GruBahdanau>(small_gru(), from_file);
    FAIL() << "a file without decoder.bridge.weight loaded";
  } catch (const RuntimeError& e) {
    EXPECT_NE(std::string(e.what()).find("model.safetensors"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("decoder.bridge.weight"), std::string::npos) << e.what();
  }
  engine::GruSpec wider = small_gru();
  wider.hidden = 48;
  const safetensors::File whole = random.file();
  EXPECT_THROW(make<engine::GruBahdanau>(wider, engine::SafetensorsWeights(whole)), RuntimeError);
}

// Steps a run as a beam search would: one row per source, then 4 per source reordered each step.
int64_t allocations_in_steps(engine::ModelRun& run, const std::vector<text::TokenIds>& srcs, int steps) {
  std::vector<const text::TokenIds*> ptrs;
  for (const auto& s : srcs) ptrs.push_back(&s);
  run.start(ptrs);
  // The caller's buffers, sized as a search keeps them from step to step: only the run's count.
  const size_t most_rows = srcs.size() * 4;
  std::vector<int32_t> tokens(srcs.size(), 1);
  std::vector<float> logits, attention;
  std::vector<int64_t> rows;
  tokens.reserve(most_rows);
  rows.reserve(most_rows);
  logits.reserve(most_rows * kVocab);
  attention.reserve(most_rows * 64);
  const int64_t before = g_allocations.load();
  g_counting = true;
  for (int t = 0; t < steps; ++t) {
    run.step(tokens, logits, &attention, -1, -1);
    const size_t n = srcs.size() * 4;
    rows.resize(n);
    for (size_t i = 0; i < n; ++i) rows[i] = static_cast<int64_t>(t == 0 ? i / 4 : (i * 7 + static_cast<size_t>(t)) % n);
    run.select(rows);
    tokens.resize(n);
    for (size_t i = 0; i < n; ++i) tokens[i] = static_cast<int32_t>(4 + (i + static_cast<size_t>(t)) % (kVocab - 4));
  }
  g_counting = false;
  return g_allocations.load() - before;
}

TEST(EngineWithoutLibTorch, AWarmDecodingStepAllocatesNothing) {
  RandomWeights random_transformer, random_gru;
  const auto srcs = sources(8);
  const std::vector<std::pair<std::string, std::shared_ptr<const engine::Model>>> models = {
      {"Transformer", make<engine::Transformer>(small_transformer(), random_transformer)},
      {"int8 Transformer", make<engine::Transformer>(small_transformer(), random_transformer, /*int8=*/true)},
      {"GRU", make<engine::GruBahdanau>(small_gru(), random_gru)}};
  for (const auto& [name, model] : models) {
    auto run = model->new_run();
    allocations_in_steps(*run, srcs, 12);  // warm: buffers grown, products compiled
    const int64_t library_before = g_gemm_library_allocations.load();
    EXPECT_EQ(allocations_in_steps(*run, srcs, 12), 0) << name << ": nmt's code allocated in warm steps";
    const int64_t library = g_gemm_library_allocations.load() - library_before;
    std::cout << name << ": 12 warm steps, " << library << " allocations inside oneDNN's execute\n";
    if (name == "int8 Transformer") {
      EXPECT_EQ(library, 0) << "an int8 Transformer makes no float32 product";
    }
  }
}

}  // namespace
