#include "nmt/models/transformer_config.h"

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

}  // namespace nmt::models
