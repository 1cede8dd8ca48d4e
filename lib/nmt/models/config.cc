#include "nmt/models/config.h"
#include "nmt/models/config_options.h"

#include <algorithm>
#include <limits>

#include <fmt/format.h>

#include "nmt/util/error.h"
#include "nmt/util/json_read.h"

namespace nmt::models {

namespace {
// Ranges are checked by validate(): which sizes matter depends on the architecture.
std::vector<OptionSpec<ModelConfig>> make_specs() {
  using M = ModelConfig;
  const char* g = "Model";
  return {
      option("type", "--model", g, "Architecture", &M::type).one_of({"transformer", "gru"}),
      option("src_vocab", "", g, "Source vocabulary size (from the subword model)", &M::src_vocab),
      option("tgt_vocab", "", g, "Target vocabulary size (from the subword model)", &M::tgt_vocab),
      option("shared_vocab", "", g,
             "One joint subword model (spm.model): source and target embeddings tied; false: spm.src.model for the "
             "source, its own embedding",
             &M::shared_vocab),
      option("tie_output", "", g, "Output projection shares the target embedding", &M::tie_output),
      option("d_model", "--d-model", g, "Transformer width", &M::d_model),
      option("heads", "--heads", g, "Attention heads", &M::heads),
      option("ffn", "--ffn", g, "Feed-forward inner size", &M::ffn),
      option("encoder_layers", "--encoder-layers", g, "Encoder layers", &M::encoder_layers),
      option("decoder_layers", "--decoder-layers", g, "Decoder layers", &M::decoder_layers),
      option("pre_norm", "--pre-norm", g, "LayerNorm before each block (true) or after (false, the paper)", &M::pre_norm),
      option("dropout", "--dropout", g, "Dropout", &M::dropout),
      option("attention_dropout", "--attention-dropout", g, "Dropout on attention weights", &M::attention_dropout),
      option("activation_dropout", "--activation-dropout", g, "Dropout inside the feed-forward block",
             &M::activation_dropout),
      option("max_positions", "--max-positions", g, "Longest sequence in subwords", &M::max_positions),
      option("embedding", "--embedding", g, "GRU: embedding size", &M::embedding),
      option("hidden", "--hidden", g, "GRU: hidden size", &M::hidden),
      option("rnn_layers", "--rnn-layers", g, "GRU: layers", &M::rnn_layers),
      option("bidirectional", "--bidirectional", g, "GRU: bidirectional encoder (true/false)", &M::bidirectional),
  };
}
}  // namespace

const std::vector<OptionSpec<ModelConfig>>& model_option_specs() {
  static const std::vector<OptionSpec<ModelConfig>> specs = make_specs();
  return specs;
}

nlohmann::json ModelConfig::to_json() const { return options_to_json(*this, model_option_specs()); }

ModelConfig ModelConfig::from_json(const nlohmann::json& j) {
  if (!j.is_object()) throw RuntimeError(fmt::format("model config: a {}, expected an object", j.type_name()));
  ModelConfig c;
  options_from_json(c, j, model_option_specs());  // missing keys keep their defaults
  c.validate([](const std::string& key) { return fmt::format("'{}'", key); });
  return c;
}

void ModelConfig::validate(const std::function<std::string(const std::string&)>& name, bool check_vocab) const {
  auto in_range = [&](const char* key, int64_t value, int64_t lo, int64_t hi) {
    if (value < lo || value > hi)
      throw RuntimeError(fmt::format("{} is {}, must be between {} and {}", name(key), value, lo, hi));
  };
  auto probability = [&](const char* key, double value) {
    if (!(value >= 0 && value < 1)) throw RuntimeError(fmt::format("{} is {}, must be in [0, 1)", name(key), value));
  };
  if (type != "transformer" && type != "gru")
    throw RuntimeError(fmt::format("{}: unknown model type '{}' (transformer or gru)", name("type"), type));
  if (check_vocab) {
    in_range("src_vocab", src_vocab, 5, kMaxVocab);
    in_range("tgt_vocab", tgt_vocab, 5, kMaxVocab);
    // One joint subword model has one size; the models would quietly untie otherwise.
    if (shared_vocab && src_vocab != tgt_vocab)
      throw RuntimeError(fmt::format("{} is true but {} ({}) and {} ({}) differ", name("shared_vocab"), name("src_vocab"),
                                     src_vocab, name("tgt_vocab"), tgt_vocab));
  }
  probability("dropout", dropout);
  // Rough weight count (embeddings + layers + tables), so sizes each within bounds cannot
  // multiply into a network no machine holds (a bare std::bad_alloc otherwise).
  double weights = 0;
  const double vocab = static_cast<double>(std::max(src_vocab, tgt_vocab)) * 2;
  if (type == "transformer") {
    in_range("d_model", d_model, 1, kMaxWidth);
    in_range("heads", heads, 1, d_model);
    if (d_model % heads != 0)
      throw RuntimeError(fmt::format("{} {} must be a multiple of {} {}", name("d_model"), d_model, name("heads"), heads));
    in_range("ffn", ffn, 1, kMaxFfn);
    in_range("encoder_layers", encoder_layers, 1, kMaxLayers);
    in_range("decoder_layers", decoder_layers, 1, kMaxLayers);
    in_range("max_positions", max_positions, 2, kMaxPositions);
    probability("attention_dropout", attention_dropout);
    probability("activation_dropout", activation_dropout);
    const double d = static_cast<double>(d_model);
    weights = vocab * d + static_cast<double>(max_positions) * d +
              static_cast<double>(encoder_layers + 2 * decoder_layers) * (4 * d * d + 2 * d * static_cast<double>(ffn));
  } else {
    in_range("embedding", embedding, 1, kMaxWidth);
    in_range("hidden", hidden, 1, kMaxWidth);
    in_range("rnn_layers", rnn_layers, 1, kMaxLayers);
    in_range("max_positions", max_positions, 2, kMaxPositions);
    const double h = static_cast<double>(hidden), e = static_cast<double>(embedding);
    weights = vocab * e + static_cast<double>(rnn_layers) * 2 * 3 * (h + e + h) * h * 2;
  }
  if (weights > static_cast<double>(kMaxWeights))
    throw RuntimeError(fmt::format("the model would have about {:.3g} weights, more than the {:.3g} nmt allows", weights,
                                   static_cast<double>(kMaxWeights)));
}

}  // namespace nmt::models
