#include "nmt/models/conversion_options.h"

namespace nmt::models {

namespace {
// The rows both commands take, with the directories worded for each.
std::vector<OptionSpec<ConversionOptions>> conversion_rows(const char* dir_help, const char* out_help) {
  using O = ConversionOptions;
  return {
      option("dir", "dir", "", dir_help, &O::dir).is_required(),
      option("out_dir", "-o,--out", "", out_help, &O::out_dir).is_required(),
      option("force", "--force", "", "Replace OUT if it exists", &O::force).as_switch(),
      option("quiet", "-q,--quiet", "", "No summary on stderr", &O::quiet).as_switch(),
  };
}
}  // namespace

const std::vector<OptionSpec<ConversionOptions>>& import_option_specs() {
  static const auto specs = conversion_rows(
      "MarianMTModel directory: config.json, model.safetensors or pytorch_model.bin, source.spm, target.spm, "
      "vocab.json",
      "nmt model directory to write");
  return specs;
}

const std::vector<OptionSpec<ConversionOptions>>& quantize_option_specs() {
  static const auto specs =
      conversion_rows("Model directory (written by nmt train or nmt average)", "Int8 model directory to write");
  return specs;
}

const std::vector<OptionSpec<ConversionOptions>>& upgrade_option_specs() {
  using O = ConversionOptions;
  static const std::vector<OptionSpec<O>> specs = {
      option("dir", "dir", "", "Model directory of an earlier nmt (model.pt without model.safetensors)", &O::dir)
          .is_required(),
      option("quiet", "-q,--quiet", "", "No summary on stderr", &O::quiet).as_switch(),
  };
  return specs;
}

}  // namespace nmt::models
