// Placeholder until the model issue lands: registers the subcommand so --help lists it.
#include <CLI/CLI.hpp>

#include "commands.h"
#include "nmt/util/error.h"

namespace nmt::cli {

void add_eval_command(CLI::App& app) {
  auto* cmd = app.add_subcommand("eval", "(eval: in progress)");
  cmd->callback([] { throw RuntimeError("eval is not implemented yet"); });
}

}  // namespace nmt::cli
