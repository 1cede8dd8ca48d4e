#pragma once
// The options of `nmt import` and `nmt quantize`, declared once (util/option_spec.h) and bound
// by app/option_binder.h: both write a new model directory from the one given. Torch-free.
#include <string>
#include <vector>

#include "nmt/util/option_spec.h"

namespace nmt::models {

struct ConversionOptions {
  std::string dir;      // the model directory read (a positional argument)
  std::string out_dir;  // the model directory written
  bool force = false;   // replace out_dir if it exists
  bool quiet = false;
};

// `nmt import`: a Hugging Face MarianMTModel directory in.
const std::vector<OptionSpec<ConversionOptions>>& import_option_specs();
// `nmt quantize`: an nmt model directory in, its int8 copy out.
const std::vector<OptionSpec<ConversionOptions>>& quantize_option_specs();

// `nmt upgrade`: a model directory of an earlier format, upgraded in place (no out_dir, no force).
const std::vector<OptionSpec<ConversionOptions>>& upgrade_option_specs();

}  // namespace nmt::models
