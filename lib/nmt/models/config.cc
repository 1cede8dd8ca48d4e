#include "nmt/models/config.h"

#include <algorithm>
#include <limits>

#include <fmt/format.h>

#include "nmt/util/error.h"
#include "nmt/util/json_read.h"

namespace nmt::models {

nlohmann::json ModelConfig::to_json() const {
  return {{"type", type},
          {"src_vocab", src_vocab},
          {"tgt_vocab", tgt_vocab},
          {"shared_vocab", shared_vocab},
          {"tie_output", tie_output},
          {"d_model", d_model},
          {"heads", heads},
          {"ffn", ffn},
          {"encoder_layers", encoder_layers},
          {"decoder_layers", decoder_layers},
          {"pre_norm", pre_norm},
          {"dropout", dropout},
          {"attention_dropout", attention_dropout},
          {"activation_dropout", activation_dropout},
          {"max_positions", max_positions},
          {"embedding", embedding},
          {"hidden", hidden},
          {"rnn_layers", rnn_layers},
          {"bidirectional", bidirectional}};
}

ModelConfig ModelConfig::from_json(const nlohmann::json& j) {
  if (!j.is_object()) throw RuntimeError(fmt::format("model config: a {}, expected an object", j.type_name()));
  ModelConfig c;
  // Missing keys keep their defaults (config.json files from before a key existed).
  auto has = [&](const char* key) { return j.contains(key); };
  auto integer = [&](const char* key, int64_t& field) {
    if (has(key)) field = json_read::integer(j, key, std::numeric_limits<int64_t>::min(), std::numeric_limits<int64_t>::max());
  };
  auto number = [&](const char* key, double& field) {
    if (has(key)) field = json_read::number(j, key);
  };
  auto boolean = [&](const char* key, bool& field) {
    if (has(key)) field = json_read::boolean(j, key);
  };
  if (has("type")) c.type = json_read::string(j, "type");
  integer("src_vocab", c.src_vocab);
  integer("tgt_vocab", c.tgt_vocab);
  boolean("shared_vocab", c.shared_vocab);
  boolean("tie_output", c.tie_output);
  integer("d_model", c.d_model);
  integer("heads", c.heads);
  integer("ffn", c.ffn);
  integer("encoder_layers", c.encoder_layers);
  integer("decoder_layers", c.decoder_layers);
  boolean("pre_norm", c.pre_norm);
  number("dropout", c.dropout);
  number("attention_dropout", c.attention_dropout);
  number("activation_dropout", c.activation_dropout);
  integer("max_positions", c.max_positions);
  integer("embedding", c.embedding);
  integer("hidden", c.hidden);
  integer("rnn_layers", c.rnn_layers);
  boolean("bidirectional", c.bidirectional);
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
