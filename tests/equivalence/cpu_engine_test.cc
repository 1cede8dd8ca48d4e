// The CPU engine (engine/engine.h) against the LibTorch path it replaces on the CPU: for every
// Transformer and GRU option and search (phrases to include and avoid too), the same tokens and the same
// log-probabilities (within 1e-4), on random models and random sources. What a user relies on:
// `--engine native` and `--engine torch` translate alike.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <algorithm>
#include <cmath>
#include <iostream>
#include <random>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "nmt/decode/beam.h"
#include "nmt/decode/cpu_engine_modules.h"
#include "nmt/decode/greedy.h"
#include "nmt/decode/search.h"
#include "nmt/decode/strategy.h"
#include "nmt/models/gru_config.h"
#include "nmt/models/model.h"
#include "nmt/models/quantize.h"
#include "nmt/models/transformer_config.h"

using namespace nmt;

namespace {

constexpr int64_t kVocab = 48;

struct Variant {
  std::string name;
  std::function<void(models::ModelConfig&)> set;
};

// Every parameter (LayerNorms included) moved off its initial value, in evaluation mode.
models::Seq2SeqModel perturbed(models::Seq2SeqModel m) {
  torch::NoGradGuard no_grad;
  for (auto& p : m->parameters()) p.add_(torch::randn_like(p) * 0.3);
  m->eval();
  return m;
}

// A random 2+2-layer Transformer; every parameter (LayerNorms included) perturbed so no
// weight keeps its neutral initial value.
models::Seq2SeqModel random_transformer(const Variant& v, uint64_t seed) {
  torch::manual_seed(seed);
  models::ModelConfig c;
  c.type = "transformer";
  c.src_vocab = c.tgt_vocab = kVocab;
  c.dropout = 0.0;
  c.max_positions = 128;
  auto& t = c.get<models::TransformerConfig>();
  t.d_model = 32;
  t.heads = 4;
  t.ffn = 64;
  t.encoder_layers = 2;
  t.decoder_layers = 2;
  v.set(c);
  return perturbed(models::make_model(c));
}

// A random 2-layer GRU with Bahdanau attention, perturbed as random_transformer's.
models::Seq2SeqModel random_gru(const Variant& v, uint64_t seed) {
  torch::manual_seed(seed);
  models::ModelConfig c;
  c.type = "gru";
  c.src_vocab = c.tgt_vocab = kVocab;
  c.dropout = 0.0;
  c.max_positions = 128;
  auto& g = c.get<models::GruConfig>();
  g.embedding = 24;
  g.hidden = 32;
  g.rnn_layers = 2;
  v.set(c);
  return perturbed(models::make_model(c));
}

const std::vector<Variant>& gru_variants() {
  static const std::vector<Variant> v = {
      {"gru, unidirectional, tied", [](models::ModelConfig&) {}},
      {"gru, bidirectional, layer-normalised, untied, separate vocabularies",
       [](models::ModelConfig& c) {
         auto& g = c.get<models::GruConfig>();
         g.bidirectional = true;
         g.rnn_layer_norm = true;
         c.tie_output = false;
         c.shared_vocab = false;
         c.tie_embeddings = false;
         c.src_vocab = kVocab + 5;
       }},
      {"gru, bidirectional, one layer", [](models::ModelConfig& c) {
         auto& g = c.get<models::GruConfig>();
         g.bidirectional = true;
         g.rnn_layers = 1;
       }},
  };
  return v;
}

std::vector<text::TokenIds> random_sources(size_t n, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<text::TokenIds> out(n);
  for (auto& s : out) {
    s.resize(1 + rng() % 24);
    for (auto& id : s) id = static_cast<int32_t>(4 + rng() % (kVocab - 4));
  }
  return out;
}

const std::vector<Variant>& variants() {
  static const std::vector<Variant> v = {
      {"post-norm relu tied", [](models::ModelConfig&) {}},
      {"pre-norm gelu concatenated untied bias",
       [](models::ModelConfig& c) {
         auto& t = c.get<models::TransformerConfig>();
         t.pre_norm = true;
         t.activation = "gelu";
         t.positions = "concatenated";
         t.output_bias = true;
         c.tie_output = false;
       }},
      {"swish unscaled tied bias separate vocabularies",
       [](models::ModelConfig& c) {
         auto& t = c.get<models::TransformerConfig>();
         t.activation = "swish";
         t.scale_embedding = false;
         t.output_bias = true;
         c.shared_vocab = false;
         c.tie_embeddings = false;
         c.src_vocab = kVocab + 5;
       }},
  };
  return v;
}

// How closely the engines must agree. float32: the same tokens, except where two hypotheses
// tie (scores within 5e-5 a token: float rounding in another order picks either), and each
// token's log-probability within 1e-4, a hypothesis's sum within 1e-4 a token (Debian's
// LibTorch, on OpenBLAS, differs from the engine by up to 3.4e-6 a token: 1.3e-4 over 38 tokens). int8: each product quantises its input rows, so a rounding difference upstream
// can move a value by one quantisation step; most outputs must still be the same and their
// log-probabilities close.
struct Tolerance {
  double tie = 5e-5;
  double log_prob = 1e-4;
  double min_same = 1.0;  // share of hypotheses with the same tokens, ties aside
  bool per_token = true;  // tie and log_prob are per token of a hypothesis's sum, else per hypothesis
};
constexpr Tolerance kFloat32{};
constexpr Tolerance kInt8{0.0, 0.5, 0.9, false};

void expect_same(const std::vector<decode::SearchResult>& torch_results,
                 const std::vector<decode::SearchResult>& engine_results, const std::string& what,
                 const Tolerance& tol) {
  ASSERT_EQ(torch_results.size(), engine_results.size());
  int hypotheses = 0, same = 0, ties = 0;
  for (size_t i = 0; i < torch_results.size(); ++i) {
    ASSERT_EQ(torch_results[i].size(), engine_results[i].size()) << what << ", source " << i;
    for (size_t k = 0; k < torch_results[i].size(); ++k) {
      const auto &a = torch_results[i][k], &b = engine_results[i][k];
      ++hypotheses;
      const double tokens = tol.per_token ? static_cast<double>(a.tokens.size() + 1) : 1.0;  // EOS included
      if (a.tokens != b.tokens) {
        if (std::abs(a.score - b.score) <= tol.tie * tokens) {
          ++ties;
        } else if (tol.min_same >= 1.0) {
          ADD_FAILURE() << what << ", source " << i << " hypothesis " << k << ": tokens differ ("
                        << fmt::format("{}", fmt::join(a.tokens, " ")) << " | "
                        << fmt::format("{}", fmt::join(b.tokens, " ")) << "), scores " << a.score << " and " << b.score;
        }
        continue;
      }
      ++same;
      EXPECT_NEAR(a.score, b.score, tol.log_prob * tokens) << what << ", source " << i;
      EXPECT_NEAR(a.log_prob, b.log_prob, tol.log_prob * tokens) << what << ", source " << i;
      ASSERT_EQ(a.token_log_probs.size(), b.token_log_probs.size()) << what;
      for (size_t j = 0; j < a.token_log_probs.size(); ++j) EXPECT_NEAR(a.token_log_probs[j], b.token_log_probs[j], tol.log_prob);
      ASSERT_EQ(a.attention.size(), b.attention.size()) << what;
      for (size_t j = 0; j < a.attention.size(); ++j)
        for (size_t s = 0; s < a.attention[j].size(); ++s) EXPECT_NEAR(a.attention[j][s], b.attention[j][s], 10 * tol.log_prob);
    }
  }
  EXPECT_GE(same + ties, tol.min_same * hypotheses) << what << ": " << same << " of " << hypotheses << " the same";
  if (ties > 0 || same < hypotheses) std::cout << what << ": " << same << " of " << hypotheses << " hypotheses the same, " << ties << " ties\n";
}

struct Case {
  std::string name;
  decode::DecodeOptions options;  // the search as options.search says (make_search_strategy)
};

// Sampling draws the same token from the same generator on both engines unless the draw falls
// within float rounding of a boundary between two candidates (or of the nucleus's edge), which
// then sends the rest of that sentence another way: rare (1 of 150 sentences in these models),
// so nearly all must be the same, and those the same must score alike.
Tolerance tolerance_of(const Case& c, Tolerance tol) {
  if (!c.options.search.sampling.empty()) tol.min_same = std::min(tol.min_same, 0.97);
  return tol;
}

std::vector<Case> cases() {
  std::vector<Case> out;
  auto with = [](decode::DecodeOptions d, auto change) {
    change(d);
    return d;
  };
  decode::DecodeOptions base;
  base.return_token_log_probs = true;
  decode::DecodeOptions beam5 = with(base, [](auto& d) {
    d.search.beam = 5;
    d.search.nbest = 3;
  });
  out.push_back({"greedy", base});
  out.push_back({"greedy, no-repeat 2, attention", with(base, [](auto& d) {
                   d.search.no_repeat_ngram = 2;
                   d.record_attention = true;
                 })});
  out.push_back({"beam 5 nbest 3", beam5});
  out.push_back({"beam 5 shrinking, average penalty, attention of layer 0 head 1", with(beam5, [](auto& d) {
                   d.search.shrink = true;
                   d.search.length_penalty = decode::LengthPenalty::kAverage;
                   d.record_attention = true;
                   d.alignment.layer = 0;
                   d.alignment.head = 1;
                 })});
  out.push_back({"sampling top-k:5 at temperature 0.8, seed 7", with(base, [](auto& d) {
                   d.search.sampling = "top-k:5";
                   d.search.temperature = 0.8;
                   d.search.seed = 7;
                 })});
  out.push_back({"sampling top-p:0.9, no-repeat 2", with(base, [](auto& d) {
                   d.search.sampling = "top-p:0.9";
                   d.search.no_repeat_ngram = 2;
                 })});
  out.push_back({"beam 5, batches of 3, short limit", with(beam5, [](auto& d) {
                   d.search.batch_size = 3;
                   d.search.max_len_a = 0.5;
                   d.search.max_len_b = 2;
                 })});
  return out;
}

std::vector<text::TokenIds> prefixes_for(size_t n) {
  std::vector<text::TokenIds> p(n);
  for (size_t i = 0; i < n; i += 3) p[i] = {static_cast<int32_t>(4 + i % 9), static_cast<int32_t>(5 + i % 7)};
  return p;
}

std::vector<text::LineConstraints> avoided_for(size_t n) {
  std::vector<text::LineConstraints> c(n);
  for (size_t i = 0; i < n; i += 2) c[i].avoid = {{7, 8}, {9}};
  return c;
}

// Phrases to include (two of them, one of two subwords) in two sentences of three, one avoided
// phrase in every third: dynamic beam allocation, EOS banned until they are met, and, with a short
// length limit, hypotheses that end with a phrase unmet.
std::vector<text::LineConstraints> included_for(size_t n) {
  std::vector<text::LineConstraints> c(n);
  for (size_t i = 0; i < n; ++i) {
    if (i % 3 != 2) c[i].include = {{static_cast<int32_t>(10 + i % 5), static_cast<int32_t>(20 + i % 7)}, {30}};
    if (i % 3 == 0) c[i].avoid = {{9}};
  }
  return c;
}

void compare_on(decode::DecodingModel& model, const engine::Engine& engine, const std::string& name,
                const Tolerance& tol = kFloat32, size_t n_sources = 150) {
  const auto sources = random_sources(n_sources, 11);
  const auto prefixes = prefixes_for(sources.size());
  const auto avoided = avoided_for(sources.size());
  const auto included = included_for(sources.size());
  for (const auto& c : cases()) {
    const decode::DecodeOptions& d = c.options;
    const auto strategy = decode::make_search_strategy(d.search);
    expect_same(decode::search(model, sources, d, *strategy), decode::engine_search(engine, sources, d, nullptr, nullptr),
                name + ", " + c.name, tolerance_of(c, tol));
    expect_same(decode::search(model, sources, d, *strategy, &prefixes, &avoided),
                decode::engine_search(engine, sources, d, &prefixes, &avoided),
                name + ", " + c.name + ", prefixes and avoided phrases", tolerance_of(c, tol));
    // Phrases to include need beam search. In int8 the improbable tokens they force make long
    // hypotheses whose sums gather more int8 rounding than kInt8 allows per hypothesis (the same
    // tokens, 0.75 apart over 50): float32 checks the search, int8 only its own kernels.
    if (d.search.beam > 1 && tol.per_token)
      expect_same(decode::search(model, sources, d, *strategy, &prefixes, &included),
                  decode::engine_search(engine, sources, d, &prefixes, &included),
                  name + ", " + c.name + ", prefixes and phrases to include", tolerance_of(c, tol));
  }
}

TEST(CpuEngine, DecodesEveryTransformerOptionAsLibTorchDoes) {
  for (const auto& v : variants()) {
    auto model = random_transformer(v, 3);
    decode::SingleModel single(*model);
    engine::Engine engine({decode::cpu_engine_model(*model, false)});
    compare_on(single, engine, v.name);
  }
}

// Fewer sources for the GRUs: LibTorch decodes them in many small operations per step.
constexpr size_t kGruSources = 60;

TEST(CpuEngine, DecodesEveryGruOptionAsLibTorchDoes) {
  for (const auto& v : gru_variants()) {
    auto model = random_gru(v, 3);
    decode::SingleModel single(*model);
    engine::Engine engine({decode::cpu_engine_model(*model, false)});
    compare_on(single, engine, v.name, kFloat32, kGruSources);
  }
}

TEST(CpuEngine, DecodesInt8GruModelsAsLibTorchDoes) {
  for (const auto& v : gru_variants()) {
    auto model = random_gru(v, 5);
    models::quantize_model(*model);
    decode::SingleModel single(*model);
    engine::Engine engine({decode::cpu_engine_model(*model, true)});
    compare_on(single, engine, v.name + ", int8", kInt8, kGruSources);
  }
}

TEST(CpuEngine, DecodesAnEnsembleOfATransformerAndAGruAsLibTorchDoes) {
  auto a = random_transformer(variants()[0], 3), b = random_gru(gru_variants()[0], 4);
  decode::Ensemble ensemble({a.get(), b.get()});
  engine::Engine engine({decode::cpu_engine_model(*a, false), decode::cpu_engine_model(*b, false)});
  compare_on(ensemble, engine, "ensemble of a Transformer and a GRU", kFloat32, kGruSources);
}

TEST(CpuEngine, DecodesEnsemblesAsLibTorchDoes) {
  auto a = random_transformer(variants()[0], 3), b = random_transformer(variants()[0], 4);
  decode::Ensemble ensemble({a.get(), b.get()});
  engine::Engine engine({decode::cpu_engine_model(*a, false), decode::cpu_engine_model(*b, false)});
  compare_on(ensemble, engine, "ensemble of 2");
}

TEST(CpuEngine, DecodesInt8ModelsAsLibTorchDoes) {
  for (const auto& v : variants()) {
    auto model = random_transformer(v, 5);
    models::quantize_model(*model);
    decode::SingleModel single(*model);
    engine::Engine engine({decode::cpu_engine_model(*model, true)});
    compare_on(single, engine, v.name + ", int8", kInt8);
  }
}

}  // namespace
