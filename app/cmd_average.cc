// `nmt average`: average the last N checkpoints of a run into a new model directory.
#include <cstdio>

#include <CLI/CLI.hpp>

#include "commands.h"
#include "nmt/train/average.h"

namespace nmt::cli {

void add_average_command(CLI::App& app) {
  auto* cmd = app.add_subcommand("average", "Average the weights of a run's checkpoints (all it kept, or the last N) into a new model directory");
  auto dir = std::make_shared<std::string>();
  auto out = std::make_shared<std::string>();
  auto last = std::make_shared<int>(0);  // every checkpoint kept: works on any run, --keep-last or not
  cmd->add_option("dir", *dir, "Model directory of the run (with checkpoints/)")->required();
  cmd->add_option("--last", *last, "How many of the newest checkpoints to average (0: every checkpoint the run kept)")
      ->capture_default_str();
  cmd->add_option("-o,--out", *out, "New model directory to write")->required();
  cmd->callback([dir, out, last] {
    auto r = train::average_last_checkpoints(*dir, *last, *out);
    std::fprintf(stderr, "averaged %zu checkpoints into %s\n", r.checkpoints.size(), out->c_str());
  });
}

}  // namespace nmt::cli
