#pragma once
// The architectures nmt builds, each described once, as CTranslate2's model factory registers
// its models: the name config.json gives it, the sizes it checks, what a forward pass costs,
// which of its attentions a user may pick, how to build it, and its own group of config keys
// (config.h). Nothing else compares ModelConfig::type: a new architecture is its own files plus
// one line in architecture.cc's table (or a register_architecture() call, as the architecture
// test does).
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "nmt/models/config.h"
#include "nmt/models/config_options.h"

namespace nmt::models {

// The LibTorch module (model.h); this header stays torch-free, as the CPU engine reads it.
class Seq2SeqModelImpl;
using Seq2SeqModel = std::shared_ptr<Seq2SeqModelImpl>;

struct Architecture {
  std::string name;  // ModelConfig::type, "model.type" in config.json
  // Its own fields (config_options.h's config_group<G>()), which ModelConfig holds for it and
  // config.json stores with the shared ones; none when it reads only the shared fields.
  ConfigGroup config_group;
  // Checks the sizes this architecture reads (throws RuntimeError naming the key) and returns
  // its approximate number of weights, which validate() bounds.
  std::function<double(const ModelConfig&, const ConfigChecks&)> check;
  // Multiply-add FLOPs of a teacher-forced forward pass over `batch` sentences padded to
  // `src_len` and `tgt_len` positions (nmt bench's GFLOP/s).
  std::function<double(const ModelConfig&, int64_t batch, int64_t src_len, int64_t tgt_len)> forward_flops;
  // The attentions --attention-layer / --attention-head choose from; 0 layers: one attention,
  // only -1 accepted. `attention_name` titles its pictures.
  std::function<int64_t(const ModelConfig&)> attention_layers;
  std::function<int64_t(const ModelConfig&)> attention_heads;
  std::string attention_name;
  std::function<Seq2SeqModel(const ModelConfig&)> make;  // the module (LibTorch builds only)
  // The config.json "model" keys of its own sizes: what `nmt report` shows of this model (every
  // model's config.json holds every architecture's fields, most of them unused).
  std::vector<std::string> size_fields;
};

// The architecture called `name`; RuntimeError "unknown model type 'x' (transformer or gru)".
const Architecture& architecture(const std::string& name);
std::vector<std::string> architecture_names();
// Every registered architecture's config group, in registration order.
std::vector<ConfigGroup> config_groups();
// Adds an architecture (a test's, a plug-in's); RuntimeError if the name is taken.
void register_architecture(Architecture architecture);

// The built-in ones, defined beside their configurations (transformer_config.cc, gru_config.cc);
// their modules are made by make_transformer_module and make_gru_module.
Architecture transformer_architecture();
Architecture gru_architecture();

}  // namespace nmt::models
