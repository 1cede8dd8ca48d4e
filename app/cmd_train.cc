// Placeholder until the model issue lands: registers the subcommand so --help lists it.
#include <CLI/CLI.hpp>

#include "commands.h"
#include "nmt/util/error.h"

namespace nmt::cli {

void add_train_command(CLI::App& app) {
  auto* cmd = app.add_subcommand("train", "(train: in progress)");
  cmd->callback([] { throw RuntimeError("train is not implemented yet"); });
}

}  // namespace nmt::cli
