#pragma once
// `nmt bench`: the measurements behind scripts/bench/bench.sh. Each returns the JSON object the
// command prints on stdout, so the script can put nmt and the PyTorch reference side by side.
// Errors about options name them by key (OptionError); the command words them with its flags.
// Torch-free header (the timing loops are in matmul.cc, training.cc and translation.cc).
#include <nlohmann/json.hpp>

#include "nmt/bench/options.h"
#include "nmt/decode/search_options.h"
#include "nmt/train/options.h"
#include "nmt/util/runtime_options.h"

namespace nmt::bench {

// Achieved GFLOP/s of square float32 matrix products (the machine's peak) and of nmt's int8
// ones (quantised decoding's peak), the best of sizes 256..2048, on `runtime.threads`.
nlohmann::json measure_matmul(const RuntimeOptions& runtime);

// Training tokens/s, GFLOP/s and peak memory over `bench.steps` fixed batches after
// `bench.warmup` untimed ones, with the model and data of `options` (a preset's, checked).
nlohmann::json measure_training(const train::TrainOptions& options, const ModelRecipe& recipe,
                                const TrainBenchOptions& bench);

// A model directory with freshly initialised weights (no training) in `init.out_dir`.
void write_initialised_model(const train::TrainOptions& options, const ModelRecipe& recipe,
                             const InitBenchOptions& init);

// Translation sentences/s, target tokens/s, the matrix-product work of the output, peak memory
// and (with bench.per_sentence) per-sentence latencies; `search` validated.
nlohmann::json measure_translation(const TranslateBenchOptions& bench, const RuntimeOptions& runtime,
                                   const decode::SearchOptions& search);

}  // namespace nmt::bench
