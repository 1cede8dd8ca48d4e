#pragma once
// The Transformer's own hyper-parameters: its group of config.json's "model" keys, reached as
// config.get<TransformerConfig>() (the fields every architecture reads are ModelConfig's).
#include <cstdint>
#include <memory>
#include <string>

#include "nmt/models/config.h"

namespace nmt::models {

struct ConfigGroup;

struct TransformerConfig {
  int64_t d_model = 256;
  int64_t heads = 4;
  int64_t ffn = 1024;
  int64_t encoder_layers = 3;
  int64_t decoder_layers = 3;
  bool pre_norm = false;  // post-LN as in the paper by default
  double activation_dropout = 0.0;
  // What imported models (nmt import) need; the defaults are nmt's own Transformer.
  std::string activation = "relu";  // feed-forward: "relu", "swish" (SiLU) or "gelu" (erf)
  // Sinusoids: "interleaved" sin/cos, or "concatenated" (all sines, then cosines: Marian, fairseq).
  std::string positions = "interleaved";
  bool scale_embedding = true;            // token embeddings × √d_model
  bool output_bias = false;               // a bias on the output logits (Marian's final_logits_bias)
};

// Its rows of the option table, for the registry (Architecture::config_group).
ConfigGroup transformer_config_group();
// The sizes the Transformer reads, shared ones included (RuntimeError naming the key), and its
// approximate number of weights (Architecture::check).
double check_transformer_config(const ModelConfig& config, const ConfigChecks& checks);

// The module of this configuration (defined beside it, in transformer.cc; a build without LibTorch
// has none and says so).
class Seq2SeqModelImpl;
std::shared_ptr<Seq2SeqModelImpl> make_transformer_module(const ModelConfig& config);

}  // namespace nmt::models
