#include "nmt/bench/options.h"

#include <limits>

namespace nmt::bench {

const std::vector<OptionSpec<ModelRecipe>>& model_recipe_option_specs() {
  using O = ModelRecipe;
  static const std::vector<OptionSpec<O>> specs = {
      option("preset", "--preset", "", "Model recipe (see nmt train --preset)", &O::preset).is_required(),
      option("spm", "--spm", "", "SentencePiece model to use (default: train one on the corpus, as nmt train does)",
             &O::spm),
  };
  return specs;
}

const std::vector<OptionSpec<TrainBenchOptions>>& train_bench_option_specs() {
  using O = TrainBenchOptions;
  constexpr auto kNoLimit = static_cast<long double>(std::numeric_limits<int64_t>::max());
  static const std::vector<OptionSpec<O>> specs = {
      option("steps", "--steps", "", "Timed updates", &O::steps).range(1, kNoLimit),
      option("warmup", "--warmup", "", "Untimed updates first", &O::warmup).range(0, kNoLimit),
      option("dump_batches", "--dump-batches", "",
             "Write the warm-up + timed batches as JSON lines {\"src\": [[ids]], \"tgt\": [[ids]]} (no BOS/EOS)",
             &O::dump_batches),
      option("dump_config", "--dump-config", "", "Write the model's config.json (for the PyTorch reference)",
             &O::dump_config),
      option("unfused", "--unfused", "",
             "ATen's operators and torch::optim::Adam only, without nmt's fused training kernels (to measure what "
             "they bring)",
             &O::unfused)
          .as_switch(),
  };
  return specs;
}

const std::vector<OptionSpec<InitBenchOptions>>& init_bench_option_specs() {
  using O = InitBenchOptions;
  static const std::vector<OptionSpec<O>> specs = {
      option("out_dir", "-o,--out", "", "Model directory to create", &O::out_dir).is_required(),
  };
  return specs;
}

const std::vector<OptionSpec<TranslateBenchOptions>>& translate_bench_option_specs() {
  using O = TranslateBenchOptions;
  static const std::vector<OptionSpec<O>> specs = {
      list_option("model_dirs", "-m,--model", "", "Model directory; repeat -m for an ensemble", &O::model_dirs)
          .is_required(),
      option("src", "--src", "", "Source sentences", &O::src).is_required(),
      option("limit", "--limit", "", "Only the first N sentences (0 = all)", &O::limit),
      option("dump_ids", "--dump-ids", "", "Write the encoded sources as JSON lines of ids (for the PyTorch reference)",
             &O::dump_ids),
      option("dump_hyp_ids", "--dump-hyp-ids", "", "Write the output ids as JSON lines (greedy only)",
             &O::dump_hyp_ids),
      option("per_sentence", "--per-sentence", "",
             "Translate the sentences one at a time, each timed: adds latency_ms (p50, p95, p99, mean) to the result, "
             "what a server's latency at one connection compares with",
             &O::per_sentence)
          .as_switch(),
  };
  return specs;
}

}  // namespace nmt::bench
