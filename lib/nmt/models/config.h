#pragma once
// Architecture hyper-parameters of a model, stored as JSON in every model directory so
// `nmt translate -m DIR` can rebuild the network without any other input.
//
// ModelConfig holds what every architecture shares; each architecture's own sizes are a group
// of its own (TransformerConfig in transformer_config.h, GruConfig in gru_config.h), which its
// files declare, read, write and check, registered with the architecture (architecture.h). A
// ModelConfig holds one of every registered group, type-erased, reached as
// config.get<TransformerConfig>(): adding an architecture edits no shared struct, and config.json
// stays one flat "model" object with every architecture's keys.
#include <any>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

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
  // What every architecture reads: its dropout, the dropout on its attention weights, and the
  // longest sequence it takes (training and decoding cut to max_positions - 1 subwords).
  double dropout = 0.1;
  double attention_dropout = 0.0;
  int64_t max_positions = 1024;

  ModelConfig();  // every registered architecture's group at its defaults

  // Architecture group G's fields. An architecture registered after this config was made
  // (a test's) reads G's defaults, and its first write adds the group, which moves the others:
  // hold no reference from get() across a get() of a group the config may lack.
  template <class G>
  const G& get() const;
  template <class G>
  G& get();

  nlohmann::json to_json() const;
  // Reads the "model" object of config.json; a wrong type or a value outside the bounds of
  // validate() → RuntimeError naming the key ("'ffn' is 0, must be between 1 and 131072").
  static ModelConfig from_json(const nlohmann::json& j);

  // Bounds on every size, so that a hostile or mistyped value is refused in one line instead
  // of building an empty, NaN-producing or impossibly large network. `name` turns a config key
  // into what the user typed ("ffn" → "--ffn" for the command line); vocabulary sizes are
  // checked only when known (they come from the subword model). Throws RuntimeError.
  void validate(const std::function<std::string(const std::string&)>& name, bool check_vocab = true) const;

 private:
  std::vector<std::any> groups_;  // one per registered architecture with fields of its own
};

// The range checks ModelConfig::validate offers an architecture, naming keys as the caller
// spells them ("ffn" on config.json, "--ffn" on the command line).
class ConfigChecks {
 public:
  explicit ConfigChecks(std::function<std::string(const std::string&)> name) : name_(std::move(name)) {}
  void in_range(const char* key, int64_t value, int64_t lo, int64_t hi) const;
  void probability(const char* key, double value) const;  // in [0, 1)
  std::string name(const std::string& key) const { return name_(key); }

 private:
  std::function<std::string(const std::string&)> name_;
};

// Limits used by validate() (and the command line's bounds).
inline constexpr int64_t kMaxVocab = 1'000'000;
inline constexpr int64_t kMaxWidth = 16'384;         // d_model, embedding, hidden
inline constexpr int64_t kMaxFfn = 131'072;
inline constexpr int64_t kMaxLayers = 256;
inline constexpr int64_t kMaxPositions = 65'536;
inline constexpr int64_t kMaxWeights = int64_t{1} << 32;  // elements: 16 GiB of float32

template <class G>
const G& ModelConfig::get() const {
  for (const std::any& group : groups_)
    if (const G* g = std::any_cast<G>(&group)) return *g;
  static const G defaults{};
  return defaults;
}

template <class G>
G& ModelConfig::get() {
  for (std::any& group : groups_)
    if (G* g = std::any_cast<G>(&group)) return *g;
  return std::any_cast<G&>(groups_.emplace_back(G{}));
}

}  // namespace nmt::models
