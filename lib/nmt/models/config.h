#pragma once
// Architecture hyper-parameters of a model, stored as JSON in every model directory so
// `nmt translate -m DIR` can rebuild the network without any other input.
#include <cstdint>
#include <functional>
#include <string>

#include <nlohmann/json.hpp>

namespace nmt::models {

struct ModelConfig {
  std::string type = "transformer";  // "transformer" | "gru"
  int64_t src_vocab = 0;
  int64_t tgt_vocab = 0;
  bool shared_vocab = true;  // joint subword model: tie source/target/output embeddings
  bool tie_output = true;    // output projection shares the target embedding
  // Separate subword models (shared_vocab false) whose ids mean the same pieces, as imported
  // Marian models have (source.spm and target.spm over one vocab.json): one embedding table.
  bool tie_embeddings = false;

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
  // What imported models (nmt import) need; the defaults are nmt's own Transformer.
  std::string activation = "relu";         // feed-forward: "relu", "swish" (SiLU) or "gelu" (erf)
  std::string positions = "interleaved";    // sinusoids: "interleaved" sin/cos, or "concatenated" (all sines, then cosines: Marian, fairseq)
  bool scale_embedding = true;              // token embeddings × √d_model
  bool output_bias = false;                 // a bias on the output logits (Marian's final_logits_bias)

  // GRU + Bahdanau attention
  int64_t embedding = 256;
  int64_t hidden = 256;
  int64_t rnn_layers = 2;
  bool bidirectional = false;
  // Layer normalisation of every GRU's two gate products (input and recurrent), each over its
  // 3·hidden gates, as Ba et al. (2016) and Marian's --layer-normalization do.
  bool rnn_layer_norm = false;

  nlohmann::json to_json() const;
  // Reads the "model" object of config.json; a wrong type or a value outside the bounds of
  // validate() → RuntimeError naming the key ("'ffn' is 0, must be between 1 and 131072").
  static ModelConfig from_json(const nlohmann::json& j);

  // Bounds on every size, so that a hostile or mistyped value is refused in one line instead
  // of building an empty, NaN-producing or impossibly large network. `name` turns a config key
  // into what the user typed ("ffn" → "--ffn" for the command line); vocabulary sizes are
  // checked only when known (they come from the subword model). Throws RuntimeError.
  void validate(const std::function<std::string(const std::string&)>& name, bool check_vocab = true) const;
};

// Limits used by validate() (and the command line's bounds).
inline constexpr int64_t kMaxVocab = 1'000'000;
inline constexpr int64_t kMaxWidth = 16'384;         // d_model, embedding, hidden
inline constexpr int64_t kMaxFfn = 131'072;
inline constexpr int64_t kMaxLayers = 256;
inline constexpr int64_t kMaxPositions = 65'536;
inline constexpr int64_t kMaxWeights = int64_t{1} << 32;  // elements: 16 GiB of float32

}  // namespace nmt::models
