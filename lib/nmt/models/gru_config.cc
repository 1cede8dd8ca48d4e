#include "nmt/models/gru_config.h"

#include <algorithm>
#include <vector>

#include "nmt/models/config_options.h"

namespace nmt::models {
namespace {

// In --help's order. Ranges are checked by check_gru_config, with the shared fields.
std::vector<OptionSpec<GruConfig>> gru_rows() {
  using G = GruConfig;
  const char* g = "Model";
  return {
      option("embedding", "--embedding", g, "GRU: embedding size", &G::embedding),
      option("hidden", "--hidden", g, "GRU: hidden size", &G::hidden),
      option("rnn_layers", "--rnn-layers", g, "GRU: layers", &G::rnn_layers),
      option("bidirectional", "--bidirectional", g, "GRU: bidirectional encoder (true/false)", &G::bidirectional),
      option("rnn_layer_norm", "--rnn-layer-norm", g,
             "GRU: layer normalisation of each GRU's input and recurrent gate products (true/false)",
             &G::rnn_layer_norm),
  };
}

}  // namespace

ConfigGroup gru_config_group() { return config_group<GruConfig>(gru_rows); }

double check_gru_config(const ModelConfig& c, const ConfigChecks& checks) {
  const GruConfig& r = c.get<GruConfig>();
  checks.in_range("embedding", r.embedding, 1, kMaxWidth);
  checks.in_range("hidden", r.hidden, 1, kMaxWidth);
  checks.in_range("rnn_layers", r.rnn_layers, 1, kMaxLayers);
  checks.in_range("max_positions", c.max_positions, 2, kMaxPositions);
  const double vocab = static_cast<double>(std::max(c.src_vocab, c.tgt_vocab)) * 2;
  const double h = static_cast<double>(r.hidden), e = static_cast<double>(r.embedding);
  return vocab * e + static_cast<double>(r.rnn_layers) * 2 * 3 * (h + e + h) * h * 2;
}

}  // namespace nmt::models
