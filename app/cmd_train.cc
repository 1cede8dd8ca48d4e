// `nmt train`: options (the table in train/options.cc) → nmt::train::Trainer.
#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "commands.h"
#include "nmt/train/trainer.h"
#include "nmt/util/error.h"
#include "train_options.h"

namespace nmt::cli {

void add_train_command(CLI::App& app) {
  auto* cmd = app.add_subcommand("train", "Train a model on parallel data");
  auto binder = std::make_shared<TrainOptionBinder>(cmd);
  cmd->callback([binder] {
    const train::TrainOptions options = binder->options();
    const train::TrainSummary summary = with_flag_names([&] { return train::run_training(options); });
    if (summary.signal)
      throw Error(fmt::format("interrupted by signal {} at step {}; checkpoint saved in {} (continue with --resume)",
                              summary.signal, summary.steps, options.out_dir),
                  128 + summary.signal);
  });
}

}  // namespace nmt::cli
