#include "nmt/models/transformer_config.h"
#include "nmt/models/architecture.h"

#include <algorithm>
#include <vector>

#include <fmt/format.h>

#include "nmt/models/config_options.h"
#include "nmt/util/error.h"

namespace nmt::models {
namespace {

// In --help's order. Ranges are checked by check_transformer_config, with the shared fields.
std::vector<OptionSpec<TransformerConfig>> transformer_rows() {
  using T = TransformerConfig;
  const char* g = "Model";
  return {
      option("d_model", "--d-model", g, "Transformer width", &T::d_model),
      option("heads", "--heads", g, "Attention heads", &T::heads),
      option("ffn", "--ffn", g, "Feed-forward inner size", &T::ffn),
      option("encoder_layers", "--encoder-layers", g, "Encoder layers", &T::encoder_layers),
      option("decoder_layers", "--decoder-layers", g, "Decoder layers", &T::decoder_layers),
      option("pre_norm", "--pre-norm", g, "LayerNorm before each block (true) or after (false, the paper)", &T::pre_norm),
      option("activation_dropout", "--activation-dropout", g, "Dropout inside the feed-forward block",
             &T::activation_dropout),
      option("activation", "--activation", g, "Transformer feed-forward activation: relu, swish (SiLU) or gelu",
             &T::activation)
          .one_of({"relu", "swish", "gelu"}),
      option("positions", "--positions", g,
             "Sinusoidal positions: interleaved (sin and cos alternate, nmt's) or concatenated (all sines, then all "
             "cosines: Marian's and fairseq's layout)",
             &T::positions)
          .one_of({"interleaved", "concatenated"}),
      option("scale_embedding", "--scale-embedding", g, "Transformer: token embeddings multiplied by the square root of "
             "--d-model (true/false)",
             &T::scale_embedding),
      option("output_bias", "--output-bias", g, "Transformer: a learned bias on the output logits (true/false)",
             &T::output_bias),
  };
}

}  // namespace

ConfigGroup transformer_config_group() { return config_group<TransformerConfig>(transformer_rows); }

double check_transformer_config(const ModelConfig& c, const ConfigChecks& checks) {
  const TransformerConfig& t = c.get<TransformerConfig>();
  checks.in_range("d_model", t.d_model, 1, kMaxWidth);
  checks.in_range("heads", t.heads, 1, t.d_model);
  if (t.d_model % t.heads != 0)
    throw RuntimeError(fmt::format("{} {} must be a multiple of {} {}", checks.name("d_model"), t.d_model,
                                   checks.name("heads"), t.heads));
  checks.in_range("ffn", t.ffn, 1, kMaxFfn);
  checks.in_range("encoder_layers", t.encoder_layers, 1, kMaxLayers);
  checks.in_range("decoder_layers", t.decoder_layers, 1, kMaxLayers);
  checks.in_range("max_positions", c.max_positions, 2, kMaxPositions);
  checks.probability("attention_dropout", c.attention_dropout);
  checks.probability("activation_dropout", t.activation_dropout);
  const double vocab = static_cast<double>(std::max(c.src_vocab, c.tgt_vocab)) * 2;
  const double d = static_cast<double>(t.d_model);
  return vocab * d + static_cast<double>(c.max_positions) * d +
         static_cast<double>(t.encoder_layers + 2 * t.decoder_layers) * (4 * d * d + 2 * d * static_cast<double>(t.ffn));
}

// The Transformer as the registry knows it (nmt/models/architecture.h).

Architecture transformer_architecture() {
  Architecture a;
  a.name = "transformer";
  a.config_group = transformer_config_group();
  a.check = check_transformer_config;
  a.forward_flops = [](const ModelConfig& c, int64_t batch, int64_t src_len, int64_t tgt_len) {
    const double B = static_cast<double>(batch), S = static_cast<double>(src_len), T = static_cast<double>(tgt_len);
    const TransformerConfig& t = c.get<TransformerConfig>();
    const double V = static_cast<double>(c.tgt_vocab);
    const double d = static_cast<double>(t.d_model), f = static_cast<double>(t.ffn);
    // Self-attention: fused QKV, QKᵀ, weights·V, output projection; feed-forward: two layers.
    const double enc_layer = 2 * B * S * d * 3 * d + 2 * 2 * B * S * S * d + 2 * B * S * d * d + 2 * 2 * B * S * d * f;
    const double dec_layer = 2 * B * T * d * 3 * d + 2 * 2 * B * T * T * d + 2 * B * T * d * d  // self-attention
                             + 2 * B * T * d * d + 2 * B * S * d * 2 * d + 2 * 2 * B * T * S * d +
                             2 * B * T * d * d                                                   // cross-attention
                             + 2 * 2 * B * T * d * f;                                            // feed-forward
    return t.encoder_layers * enc_layer + t.decoder_layers * dec_layer + 2 * B * T * d * V;
  };
  a.attention_layers = [](const ModelConfig& c) { return c.get<TransformerConfig>().decoder_layers; };
  a.attention_heads = [](const ModelConfig& c) { return c.get<TransformerConfig>().heads; };
  a.attention_name = "cross-attention";
  a.size_fields = {"d_model", "heads", "ffn", "encoder_layers", "decoder_layers"};
  a.make = make_transformer_module;
  return a;
}

}  // namespace nmt::models
