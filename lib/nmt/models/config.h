#pragma once
// Architecture hyper-parameters of a model, stored as JSON in every model directory so
// `nmt translate -m DIR` can rebuild the network without any other input.
#include <cstdint>
#include <string>

#include <nlohmann/json.hpp>

namespace nmt::models {

struct ModelConfig {
  std::string type = "transformer";  // "transformer" | "gru"
  int64_t src_vocab = 0;
  int64_t tgt_vocab = 0;
  bool shared_vocab = true;  // joint subword model: tie source/target/output embeddings
  bool tie_output = true;    // output projection shares the target embedding

  // Transformer
  int64_t d_model = 256;
  int64_t heads = 4;
  int64_t ffn = 1024;
  int64_t encoder_layers = 3;
  int64_t decoder_layers = 3;
  bool pre_norm = false;  // post-LN as in the paper by default
  double dropout = 0.1;
  double attention_dropout = 0.0;
  double activation_dropout = 0.0;
  int64_t max_positions = 1024;

  // GRU + Bahdanau attention
  int64_t embedding = 256;
  int64_t hidden = 256;
  int64_t rnn_layers = 2;
  bool bidirectional = false;

  nlohmann::json to_json() const;
  static ModelConfig from_json(const nlohmann::json& j);  // throws RuntimeError on bad values
};

}  // namespace nmt::models
