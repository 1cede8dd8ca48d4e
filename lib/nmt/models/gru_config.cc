#include "nmt/models/gru_config.h"
#include "nmt/models/architecture.h"

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

// The GRU baseline as the registry knows it (nmt/models/architecture.h).

Architecture gru_architecture() {
  Architecture a;
  a.name = "gru";
  a.config_group = gru_config_group();
  a.check = check_gru_config;
  // GRU encoder + Bahdanau decoder: 3 gates of input and recurrent products.
  a.forward_flops = [](const ModelConfig& c, int64_t batch, int64_t src_len, int64_t tgt_len) {
    const double B = static_cast<double>(batch), S = static_cast<double>(src_len), T = static_cast<double>(tgt_len);
    const GruConfig& sizes = c.get<GruConfig>();
    const double V = static_cast<double>(c.tgt_vocab);
    const double E = static_cast<double>(sizes.embedding), H = static_cast<double>(sizes.hidden);
    const double D = sizes.bidirectional ? 2 : 1;
    const double L = static_cast<double>(sizes.rnn_layers);
    double enc = B * S * D * 2 * 3 * H * (E + H);
    if (L > 1) enc += (L - 1) * B * S * D * 2 * 3 * H * (D * H + H);
    const double keys = 2 * B * S * D * H * H;
    const double per_step = 2 * B * H * H                      // query projection
                            + 2 * B * S * H + 2 * B * S * D * H  // scores (v·tanh) and context
                            + 2 * B * 3 * H * (E + H + H)        // first decoder GRU layer
                            + (L - 1) * 2 * B * 3 * H * 2 * H    // further layers
                            + 2 * B * (2 * H + E) * E            // deep output
                            + 2 * B * E * V;                     // vocabulary projection
    return enc + keys + T * per_step;
  };
  a.attention_layers = [](const ModelConfig&) -> int64_t { return 0; };  // one attention
  a.attention_heads = [](const ModelConfig&) -> int64_t { return 0; };
  a.attention_name = "additive attention";
  a.size_fields = {"embedding", "hidden", "rnn_layers"};
  a.make = make_gru_module;
  return a;
}

}  // namespace nmt::models
