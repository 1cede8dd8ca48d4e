#include "nmt/decode/cpu_engine.h"

#include <filesystem>
#include <map>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "nmt/decode/beam.h"
#include "nmt/decode/greedy.h"
#include "nmt/engine/gru.h"
#include "nmt/engine/safetensors_weights.h"
#include "nmt/models/weights_file.h"
#include "nmt/engine/transformer.h"
#include "nmt/models/gru_config.h"
#include "nmt/models/quantizable_linear.h"
#include "nmt/models/transformer_config.h"
#include "nmt/tensor/threads.h"
#include "nmt/util/error.h"

namespace nmt::decode {
namespace {

// A LibTorch module's parameters (and int8 weights) as the engine reads them.
class ModuleWeights final : public engine::WeightSource {
 public:
  explicit ModuleWeights(torch::nn::Module& module) {
    for (const auto& p : module.named_parameters()) tensors_.emplace(p.key(), p.value().detach().to(torch::kCPU).contiguous());
    for (const auto& m : module.named_modules()) {
      auto* linear = dynamic_cast<models::QuantizableLinearImpl*>(m.value().get());
      if (linear && linear->quantized()) int8_.emplace(m.key() + ".weight", linear->quantized_weight());
    }
  }
  const float* f32(const std::string& name, const std::vector<int64_t>& shape) const override {
    const auto found = tensors_.find(name);
    if (found == tensors_.end()) throw RuntimeError(fmt::format("{}: no tensor '{}'", description(), name));
    const torch::Tensor& t = found->second;
    if (t.sizes().vec() != shape || t.scalar_type() != torch::kFloat)
      throw RuntimeError(fmt::format("{}: tensor '{}' has shape [{}], expected [{}] float32", description(), name,
                                     fmt::join(t.sizes().vec(), ", "), fmt::join(shape, ", ")));
    return t.data_ptr<float>();
  }
  bool contains(const std::string& name) const override { return tensors_.count(name) > 0; }
  bool int8(const std::string& name, int64_t out, int64_t in, quant::QuantizedWeight& weight) const override {
    const auto found = int8_.find(name);
    if (found == int8_.end()) return false;
    if (found->second->out_features != out || found->second->in_features != in)
      throw RuntimeError(fmt::format("{}: int8 tensor '{}' is [{}, {}], expected [{}, {}]", description(), name,
                                     found->second->out_features, found->second->in_features, out, in));
    weight = *found->second;
    return true;
  }
  std::string description() const override { return "the loaded model"; }

 private:
  std::map<std::string, torch::Tensor> tensors_;
  std::map<std::string, const quant::QuantizedWeight*> int8_;
};

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

std::string engine_cannot_decode(const std::vector<models::LoadedModel>& models) {
  for (const auto& m : models) {
    if (m.model_config.type == "gru") continue;
    if (m.model_config.type != "transformer")
      return fmt::format("the CPU engine does not decode {} models yet", m.model_config.type);
    const std::string& a = m.model_config.get<models::TransformerConfig>().activation;
    if (a != "relu" && a != "swish" && a != "gelu") return fmt::format("the CPU engine has no activation '{}'", a);
  }
  return "";
}

std::string engine_cannot_search(const SearchStrategy& strategy, bool any_positive_constraints) {
  if (any_positive_constraints) return "the CPU engine does not search for phrases to include yet";
  if (dynamic_cast<const BeamSearch*>(&strategy) || dynamic_cast<const GreedySearch*>(&strategy)) return "";
  return "the CPU engine runs greedy and beam search only (not sampling or forced scoring) for now";
}

std::shared_ptr<const engine::Engine> make_cpu_engine(const std::vector<models::LoadedModel>& models) {
  const std::string why = engine_cannot_decode(models);
  if (!why.empty()) throw UsageError(why);
  std::vector<std::shared_ptr<const engine::Model>> members;
  for (const auto& m : models) {
    const bool int8 = m.quantization == "int8";
    const std::string file = m.dir.empty() ? "" : (std::filesystem::path(m.dir) / models::kSafetensorsFile).string();
    if (!file.empty() && std::filesystem::exists(file)) members.push_back(cpu_engine_model(file, m.model_config, int8));
    else members.push_back(cpu_engine_model(*m.model, int8));  // a directory of format 1: model.pt alone
  }
  return std::make_shared<const engine::Engine>(std::move(members));
}

std::shared_ptr<const engine::Model> cpu_engine_model(models::Seq2SeqModelImpl& model, bool int8) {
  torch::NoGradGuard no_grad;
  const ModuleWeights weights(model);
  if (model.config().type == "gru") return std::make_shared<const engine::GruBahdanau>(gru_spec(model.config()), weights, int8);
  return std::make_shared<const engine::Transformer>(transformer_spec(model.config()), weights, int8);
}

std::shared_ptr<const engine::Model> cpu_engine_model(const std::string& safetensors_file,
                                                     const models::ModelConfig& config, bool int8) {
  const safetensors::File file = safetensors::File::open(safetensors_file);
  safetensors::verify_checksum(file);
  const engine::SafetensorsWeights weights(file);
  if (config.type == "gru") return std::make_shared<const engine::GruBahdanau>(gru_spec(config), weights, int8);
  return std::make_shared<const engine::Transformer>(transformer_spec(config), weights, int8);
}

std::vector<SearchResult> engine_search(const engine::Engine& engine, const std::vector<text::TokenIds>& sources,
                                        const DecodeOptions& options, const SearchStrategy& strategy,
                                        const std::vector<text::TokenIds>* prefixes,
                                        const std::vector<text::LineConstraints>* constraints) {
  strategy.validate();
  engine::EngineDecodeOptions e;
  if (const auto* beam = dynamic_cast<const BeamSearch*>(&strategy)) {
    e.search.beam_search = true;
    e.search.beam = beam->options();
  }
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
  return engine.search(sources, e, prefixes, constraints);
}

}  // namespace nmt::decode
