#pragma once
// The options of `nmt bench`'s subcommands, declared once (util/option_spec.h) and bound by
// app/option_binder.h beside the rows of the train, search and runtime tables they share.
// Torch-free.
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "nmt/util/option_spec.h"

namespace nmt::bench {

// `bench train` and `bench init`: the model's recipe and the subword model.
struct ModelRecipe {
  std::string preset;  // a train::presets() name
  std::string spm;     // empty: train one on the corpus, as nmt train does
};
const std::vector<OptionSpec<ModelRecipe>>& model_recipe_option_specs();

struct TrainBenchOptions {
  int64_t steps = 10;  // timed updates
  int64_t warmup = 3;  // untimed updates first
  std::string dump_batches, dump_config;  // for the PyTorch reference
  bool unfused = false;  // ATen's operators only, without nmt's fused training kernels
};
const std::vector<OptionSpec<TrainBenchOptions>>& train_bench_option_specs();

struct InitBenchOptions {
  std::string out_dir;
};
const std::vector<OptionSpec<InitBenchOptions>>& init_bench_option_specs();

struct TranslateBenchOptions {
  std::vector<std::string> model_dirs;  // several: an ensemble
  std::string src;
  size_t limit = 0;  // only the first N sentences; 0: all
  std::string dump_ids, dump_hyp_ids;  // for the PyTorch reference
  bool per_sentence = false;  // one sentence at a time, each timed
};
const std::vector<OptionSpec<TranslateBenchOptions>>& translate_bench_option_specs();

}  // namespace nmt::bench
