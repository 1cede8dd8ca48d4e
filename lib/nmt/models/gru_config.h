#pragma once
// The GRU + Bahdanau attention model's own hyper-parameters: its group of config.json's "model"
// keys, reached as config.get<GruConfig>() (the fields every architecture reads, dropout
// included, are ModelConfig's).
#include <cstdint>
#include <memory>

#include "nmt/models/config.h"

namespace nmt::models {

struct ConfigGroup;

struct GruConfig {
  int64_t embedding = 256;
  int64_t hidden = 256;
  int64_t rnn_layers = 2;
  bool bidirectional = false;
  // Layer normalisation of every GRU's two gate products (input and recurrent), each over its
  // 3·hidden gates, as Ba et al. (2016) and Marian's --layer-normalization do.
  bool rnn_layer_norm = false;
};

// Its rows of the option table, for the registry (Architecture::config_group).
ConfigGroup gru_config_group();
// The sizes the GRU model reads, shared ones included (RuntimeError naming the key), and its
// approximate number of weights (Architecture::check).
double check_gru_config(const ModelConfig& config, const ConfigChecks& checks);

// The module of this configuration (defined beside it, in gru_bahdanau.cc; a build without LibTorch
// has none and says so).
class Seq2SeqModelImpl;
std::shared_ptr<Seq2SeqModelImpl> make_gru_module(const ModelConfig& config);

}  // namespace nmt::models
