// `nmt upgrade`: a model directory written by an earlier nmt (format 1: model.pt alone) given
// the model.safetensors that the CPU engine and nmt without LibTorch read.
#include <cstdio>
#include <memory>

#include <CLI/CLI.hpp>

#include "commands.h"
#include "option_binder.h"
#include "nmt/models/conversion_options.h"
#include "nmt/models/model_io.h"
#include "nmt/models/weights_file.h"

namespace nmt::cli {

void add_upgrade_command(CLI::App& app) {
  auto* cmd = app.add_subcommand(
      "upgrade", "Bring a model directory of an earlier nmt to the current format, in place (adds model.safetensors)");
  auto own = std::make_shared<OptionBinder<models::ConversionOptions>>(cmd, models::upgrade_option_specs());
  cmd->callback([own] {
    const models::ConversionOptions o = own->checked();
    const bool changed = models::upgrade_model_directory(o.dir);
    if (o.quiet) return;
    if (changed)
      std::fprintf(stderr, "%s: model format %d: wrote %s (the earlier files kept)\n", o.dir.c_str(), models::kModelFormat,
                   models::kSafetensorsFile);
    else
      std::fprintf(stderr, "%s: already model format %d, nothing to do\n", o.dir.c_str(), models::kModelFormat);
  });
}

}  // namespace nmt::cli
