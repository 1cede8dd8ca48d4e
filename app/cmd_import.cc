// `nmt import`: a model trained elsewhere as an nmt model directory (Hugging Face MarianMTModel:
// the OPUS-MT models), translating as the original does.
#include <cstdio>
#include <memory>

#include <CLI/CLI.hpp>

#include "commands.h"
#include "option_binder.h"
#include "nmt/models/conversion_options.h"
#include "nmt/models/marian_import.h"

namespace nmt::cli {

void add_import_command(CLI::App& app) {
  auto* cmd = app.add_subcommand(
      "import", "Convert a Hugging Face MarianMTModel directory (an OPUS-MT model) into an nmt model directory");
  auto own = std::make_shared<OptionBinder<models::ConversionOptions>>(cmd, models::import_option_specs());
  cmd->callback([own] {
    const models::ConversionOptions o = own->checked();
    const auto s = models::import_marian(o.dir, o.out_dir, o.force);
    if (o.quiet) return;
    for (const auto& note : s.notes) std::fprintf(stderr, "note: %s\n", note.c_str());
    std::fprintf(stderr, "imported %s (%lld weights, %lld target pieces) into %s in %.2fs\n", s.weights_file.c_str(),
                 static_cast<long long>(s.parameters), static_cast<long long>(s.vocabulary), o.out_dir.c_str(),
                 s.seconds);
  });
}

}  // namespace nmt::cli
