#include "nmt/decode/cpu_engine.h"

#include <filesystem>

#include <fmt/format.h>

#include "nmt/decode/sampling_draw.h"
#include "nmt/engine/safetensors_weights.h"
#include "nmt/models/gru_config.h"
#include "nmt/models/transformer_config.h"
#include "nmt/util/error.h"
#include "nmt/util/thread_count.h"

namespace nmt::decode {
namespace {

engine::Activation activation_of(const std::string& name) {
  if (name == "relu") return engine::Activation::kRelu;
  if (name == "swish") return engine::Activation::kSwish;
  if (name == "gelu") return engine::Activation::kGelu;
  throw RuntimeError(fmt::format("the CPU engine has no activation '{}'", name));
}

}  // namespace

engine::TransformerSpec transformer_spec(const models::ModelConfig& c) {
  const models::TransformerConfig& t = c.get<models::TransformerConfig>();
  engine::TransformerSpec s;
  s.d_model = t.d_model;
  s.heads = t.heads;
  s.ffn = t.ffn;
  s.encoder_layers = t.encoder_layers;
  s.decoder_layers = t.decoder_layers;
  s.src_vocab = c.src_vocab;
  s.tgt_vocab = c.tgt_vocab;
  s.max_positions = c.max_positions;
  s.pre_norm = t.pre_norm;
  s.activation = activation_of(t.activation);
  s.concatenated_positions = t.positions == "concatenated";
  s.scale_embedding = t.scale_embedding;
  s.output_bias = t.output_bias;
  s.tie_output = c.tie_output;
  s.shared_embeddings = (c.shared_vocab || c.tie_embeddings) && c.src_vocab == c.tgt_vocab;
  return s;
}

engine::GruSpec gru_spec(const models::ModelConfig& c) {
  const auto& g = c.get<models::GruConfig>();
  engine::GruSpec s;
  s.embedding = g.embedding;
  s.hidden = g.hidden;
  s.layers = g.rnn_layers;
  s.bidirectional = g.bidirectional;
  s.layer_norm = g.rnn_layer_norm;
  s.src_vocab = c.src_vocab;
  s.tgt_vocab = c.tgt_vocab;
  s.max_positions = c.max_positions;
  s.tie_output = c.tie_output;
  s.shared_embeddings = (c.shared_vocab || c.tie_embeddings) && c.src_vocab == c.tgt_vocab;
  return s;
}

std::string engine_cannot_decode(const models::ModelConfig& config) {
  if (config.type == "gru") return "";
  if (config.type != "transformer") return fmt::format("the CPU engine does not decode {} models yet", config.type);
  const std::string& a = config.get<models::TransformerConfig>().activation;
  if (a != "relu" && a != "swish" && a != "gelu") return fmt::format("the CPU engine has no activation '{}'", a);
  return "";
}

std::string engine_cannot_search(SearchKind kind, bool any_positive_constraints) {
  (void)kind, (void)any_positive_constraints;  // greedy, beam (phrases to include too), sampling
  return "";
}

std::string safetensors_file_of(const std::string& dir) {
  const std::string file = (std::filesystem::path(dir) / models::kSafetensorsFile).string();
  if (!std::filesystem::exists(file))
    throw RuntimeError(fmt::format("{}: does not exist: {} was written by nmt before model format 2 (model.pt alone); "
                                   "`nmt upgrade {}` adds it once, with a LibTorch build of nmt",
                                   file, dir, dir));
  return file;
}

std::shared_ptr<const engine::Model> cpu_engine_model(const std::string& safetensors_file,
                                                     const models::ModelConfig& config, bool int8) {
  const safetensors::File file = safetensors::File::open(safetensors_file);
  safetensors::verify_checksum(file);
  const engine::SafetensorsWeights weights(file);
  if (config.type == "gru") return std::make_shared<const engine::GruBahdanau>(gru_spec(config), weights, int8);
  return std::make_shared<const engine::Transformer>(transformer_spec(config), weights, int8);
}

namespace {
// The engine's options for a call with these decoding options.
engine::EngineDecodeOptions engine_options(const DecodeOptions& options) {
  engine::EngineDecodeOptions e;
  e.search.no_repeat_ngram = options.search.no_repeat_ngram;
  e.search.token_log_probs = options.return_token_log_probs;
  e.search.record_attention = options.record_attention;
  e.batch_size = options.search.batch_size;
  e.max_tokens = options.max_tokens;
  e.max_source_len = options.max_source_len;
  e.max_len_a = options.search.max_len_a;
  e.max_len_b = options.search.max_len_b;
  e.attention_layer = options.alignment.layer;
  e.attention_head = options.alignment.head;
  e.on_batch_done = options.on_batch_done;
  e.threads = configured_threads();
  return e;
}
}  // namespace

std::vector<SearchResult> engine_search(const engine::Engine& engine, const std::vector<text::TokenIds>& sources,
                                        const DecodeOptions& options, const std::vector<text::TokenIds>* prefixes,
                                        const std::vector<text::LineConstraints>* constraints) {
  bool any_include = false;
  if (constraints)
    for (const auto& c : *constraints) any_include |= !c.include.empty();
  const SearchKind kind = search_kind(options.search, options.constrained);
  if (const std::string why = engine_cannot_search(kind, any_include); !why.empty()) throw UsageError(why);
  engine::EngineDecodeOptions e = engine_options(options);
  if (kind == SearchKind::kSampling) {
    e.search.sampling = true;
    e.search.sample = options.search.sampling_options();
    check_sampling_options(e.search.sample);
  }
  if (kind == SearchKind::kBeam) {
    e.search.beam_search = true;
    e.search.beam = beam_options(options.search);
    if (e.search.beam.beam < 1) throw UsageError("--beam must be at least 1");
    if (e.search.beam.nbest < 1 || e.search.beam.nbest > e.search.beam.beam)
      throw UsageError("--nbest must be between 1 and --beam");
  }
  return engine.search(sources, e, prefixes, constraints);
}

std::vector<SearchResult> engine_score(const engine::Engine& engine, const std::vector<text::TokenIds>& sources,
                                       const std::vector<text::TokenIds>& targets, const DecodeOptions& options) {
  engine::EngineDecodeOptions e = engine_options(options);
  e.search.forced = true;
  e.search.no_repeat_ngram = 0;
  return engine.search(sources, e, &targets, nullptr);
}

EngineDecoder::EngineDecoder(std::shared_ptr<const engine::Engine> engine, std::string refusal)
    : engine_(std::move(engine)), refusal_(std::move(refusal)) {}

std::vector<SearchResult> EngineDecoder::search(const std::vector<text::TokenIds>& sources, const DecodeOptions& options,
                                                const std::vector<text::TokenIds>* prefixes,
                                                const std::vector<text::LineConstraints>* constraints) {
  try {
    return engine_search(*engine_, sources, options, prefixes, constraints);
  } catch (const UsageError& e) {
    const std::string why = e.what();
    if (why.rfind("the CPU engine", 0) != 0) throw;
    throw UsageError(fmt::format(fmt::runtime(refusal_), why));
  }
}

std::vector<SearchResult> EngineDecoder::score(const std::vector<text::TokenIds>& sources,
                                               const std::vector<text::TokenIds>& targets, const DecodeOptions& options) {
  return engine_score(*engine_, sources, targets, options);
}

Translator load_engine_translator(const std::vector<std::string>& model_dirs, const RuntimeOptions& runtime,
                                  const std::string& refusal) {
  std::vector<models::ModelInfo> infos;
  for (const auto& dir : model_dirs) infos.push_back(models::load_model_info(dir));
  std::vector<const models::ModelInfo*> checked;
  for (const auto& m : infos) checked.push_back(&m);
  check_ensemble(checked);  // before an engine is built of them
  std::vector<std::shared_ptr<const engine::Model>> members;
  for (auto& m : infos) {
    if (const std::string why = engine_cannot_decode(m.model_config); !why.empty())
      throw UsageError(fmt::format(fmt::runtime(refusal), why));
    if (runtime.int8) m.quantization = "int8";  // quantised on load: what it decodes with (as torch_decoder.cc says)
    members.push_back(cpu_engine_model(safetensors_file_of(m.dir), m.model_config, m.quantization == "int8"));
  }
  auto engine = std::make_shared<const engine::Engine>(std::move(members));
  return Translator(std::move(infos), std::make_unique<EngineDecoder>(std::move(engine), refusal));
}

}  // namespace nmt::decode
