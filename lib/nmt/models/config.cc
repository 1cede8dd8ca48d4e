#include "nmt/models/config.h"
#include "nmt/models/config_options.h"
#include "nmt/models/architecture.h"

#include <algorithm>
#include <limits>

#include <fmt/format.h>

#include "nmt/util/error.h"
#include "nmt/util/json_read.h"

namespace nmt::models {

void ConfigChecks::in_range(const char* key, int64_t value, int64_t lo, int64_t hi) const {
  if (value < lo || value > hi)
    throw RuntimeError(fmt::format("{} is {}, must be between {} and {}", name_(key), value, lo, hi));
}

void ConfigChecks::probability(const char* key, double value) const {
  if (!(value >= 0 && value < 1)) throw RuntimeError(fmt::format("{} is {}, must be in [0, 1)", name_(key), value));
}

namespace {
// Ranges are checked by validate(): which sizes matter depends on the architecture.
std::vector<OptionSpec<ModelConfig>> shared_rows() {
  using M = ModelConfig;
  const char* g = "Model";
  return {
      option("type", "--model", g, "Architecture", &M::type).one_of(architecture_names()),
      option("src_vocab", "", g, "Source vocabulary size (from the subword model)", &M::src_vocab),
      option("tgt_vocab", "", g, "Target vocabulary size (from the subword model)", &M::tgt_vocab),
      option("shared_vocab", "", g,
             "One joint subword model (spm.model): source and target embeddings tied; false: spm.src.model for the "
             "source, its own embedding",
             &M::shared_vocab),
      option("tie_output", "", g, "Output projection shares the target embedding", &M::tie_output),
      option("tie_embeddings", "", g,
             "With separate subword models whose ids mean the same pieces (imported Marian models): one embedding "
             "table for both sides",
             &M::tie_embeddings),
      option("dropout", "--dropout", g, "Dropout", &M::dropout),
      option("attention_dropout", "--attention-dropout", g, "Dropout on attention weights", &M::attention_dropout),
      option("max_positions", "--max-positions", g, "Longest sequence in subwords", &M::max_positions),
  };
}

std::vector<OptionSpec<ModelConfig>> make_specs() {
  std::vector<OptionSpec<ModelConfig>> specs = shared_rows();
  for (const ConfigGroup& group : config_groups())
    if (group.rows)
      for (OptionSpec<ModelConfig>& row : group.rows()) specs.push_back(std::move(row));
  return specs;
}
}  // namespace

const std::vector<OptionSpec<ModelConfig>>& model_option_specs() {
  static const std::vector<OptionSpec<ModelConfig>> specs = make_specs();
  return specs;
}

ModelConfig::ModelConfig() {
  for (const ConfigGroup& group : config_groups())
    if (group.make_defaults) groups_.push_back(group.make_defaults());
}

nlohmann::json ModelConfig::to_json() const { return options_to_json(*this, model_option_specs()); }

ModelConfig ModelConfig::from_json(const nlohmann::json& j) {
  if (!j.is_object()) throw RuntimeError(fmt::format("model config: a {}, expected an object", j.type_name()));
  ModelConfig c;
  options_from_json(c, j, model_option_specs());  // missing keys keep their defaults
  c.validate([](const std::string& key) { return fmt::format("'{}'", key); });
  return c;
}

void ModelConfig::validate(const std::function<std::string(const std::string&)>& name, bool check_vocab) const {
  const ConfigChecks checks(name);
  const Architecture& arch = [&]() -> const Architecture& {
    try {
      return architecture(type);
    } catch (const RuntimeError& e) {
      throw RuntimeError(fmt::format("{}: {}", name("type"), e.what()));
    }
  }();
  if (check_vocab) {
    checks.in_range("src_vocab", src_vocab, 5, kMaxVocab);
    checks.in_range("tgt_vocab", tgt_vocab, 5, kMaxVocab);
    // One joint subword model has one size; the models would quietly untie otherwise.
    if (shared_vocab && src_vocab != tgt_vocab)
      throw RuntimeError(fmt::format("{} is true but {} ({}) and {} ({}) differ", name("shared_vocab"), name("src_vocab"),
                                     src_vocab, name("tgt_vocab"), tgt_vocab));
    if (tie_embeddings && src_vocab != tgt_vocab)
      throw RuntimeError(fmt::format("{} is true but {} ({}) and {} ({}) differ", name("tie_embeddings"),
                                     name("src_vocab"), src_vocab, name("tgt_vocab"), tgt_vocab));
  }
  checks.probability("dropout", dropout);
  // Rough weight count (embeddings + layers + tables), so sizes each within bounds cannot
  // multiply into a network no machine holds (a bare std::bad_alloc otherwise).
  const double weights = arch.check(*this, checks);
  if (weights > static_cast<double>(kMaxWeights))
    throw RuntimeError(fmt::format("the model would have about {:.3g} weights, more than the {:.3g} nmt allows", weights,
                                   static_cast<double>(kMaxWeights)));
}

}  // namespace nmt::models
