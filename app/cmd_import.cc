// `nmt import`: a model trained elsewhere as an nmt model directory (Hugging Face MarianMTModel:
// the OPUS-MT models), translating as the original does.
#include <cstdio>

#include <CLI/CLI.hpp>

#include "commands.h"
#include "nmt/models/marian_import.h"

namespace nmt::cli {

void add_import_command(CLI::App& app) {
  auto* cmd = app.add_subcommand(
      "import", "Convert a Hugging Face MarianMTModel directory (an OPUS-MT model) into an nmt model directory");
  auto dir = std::make_shared<std::string>();
  auto out = std::make_shared<std::string>();
  auto force = std::make_shared<bool>(false);
  auto quiet = std::make_shared<bool>(false);
  cmd->add_option("dir", *dir,
                  "MarianMTModel directory: config.json, model.safetensors or pytorch_model.bin, source.spm, "
                  "target.spm, vocab.json")
      ->required();
  cmd->add_option("-o,--out", *out, "nmt model directory to write")->required();
  cmd->add_flag("--force", *force, "Replace OUT if it exists");
  cmd->add_flag("-q,--quiet", *quiet, "No summary on stderr");
  cmd->callback([dir, out, force, quiet] {
    const auto s = models::import_marian(*dir, *out, *force);
    if (*quiet) return;
    for (const auto& note : s.notes) std::fprintf(stderr, "note: %s\n", note.c_str());
    std::fprintf(stderr, "imported %s (%lld weights, %lld target pieces) into %s in %.2fs\n", s.weights_file.c_str(),
                 static_cast<long long>(s.parameters), static_cast<long long>(s.vocabulary), out->c_str(), s.seconds);
  });
}

}  // namespace nmt::cli
