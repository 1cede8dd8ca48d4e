#include "nmt/models/config.h"

#include <fmt/format.h>

#include "nmt/util/error.h"

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
  ModelConfig c;
  auto get = [&](const char* key, auto& field) {
    if (!j.contains(key)) return;
    try {
      j.at(key).get_to(field);
    } catch (const std::exception&) {
      throw RuntimeError(fmt::format("model config: '{}' has the wrong type", key));
    }
  };
  get("type", c.type);
  get("src_vocab", c.src_vocab);
  get("tgt_vocab", c.tgt_vocab);
  get("shared_vocab", c.shared_vocab);
  get("tie_output", c.tie_output);
  get("d_model", c.d_model);
  get("heads", c.heads);
  get("ffn", c.ffn);
  get("encoder_layers", c.encoder_layers);
  get("decoder_layers", c.decoder_layers);
  get("pre_norm", c.pre_norm);
  get("dropout", c.dropout);
  get("attention_dropout", c.attention_dropout);
  get("activation_dropout", c.activation_dropout);
  get("max_positions", c.max_positions);
  get("embedding", c.embedding);
  get("hidden", c.hidden);
  get("rnn_layers", c.rnn_layers);
  get("bidirectional", c.bidirectional);
  if (c.type != "transformer" && c.type != "gru")
    throw RuntimeError(fmt::format("model config: unknown model type '{}'", c.type));
  if (c.src_vocab <= 4 || c.tgt_vocab <= 4) throw RuntimeError("model config: vocabulary sizes must be > 4");
  if (c.type == "transformer" && (c.d_model <= 0 || c.heads <= 0 || c.d_model % c.heads != 0))
    throw RuntimeError(fmt::format("model config: d_model {} must be a positive multiple of heads {}", c.d_model, c.heads));
  if (c.dropout < 0 || c.dropout >= 1) throw RuntimeError("model config: dropout must be in [0, 1)");
  return c;
}

}  // namespace nmt::models
