// `nmt average`: average the last N checkpoints of a run into a new model directory.
#include <cstdio>
#include <memory>

#include <CLI/CLI.hpp>

#include "commands.h"
#include "option_binder.h"
#include "nmt/train/average.h"
#include "nmt/train/average_options.h"

namespace nmt::cli {

void add_average_command(CLI::App& app) {
  auto* cmd = app.add_subcommand(
      "average", "Average the weights of a run's checkpoints (all it kept, or the last N) into a new model directory");
  auto own = std::make_shared<OptionBinder<train::AverageOptions>>(cmd, train::average_option_specs());
  cmd->callback([own] {
    const train::AverageOptions o = own->checked();
    auto r = train::average_last_checkpoints(o.dir, o.last, o.out_dir);
    std::fprintf(stderr, "averaged %zu checkpoints into %s\n", r.checkpoints.size(), o.out_dir.c_str());
  });
}

}  // namespace nmt::cli
