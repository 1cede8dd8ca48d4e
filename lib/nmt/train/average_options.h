#pragma once
// The options of `nmt average` (train/average.h), declared once (util/option_spec.h) and bound
// by app/option_binder.h. Torch-free.
#include <string>
#include <vector>

#include "nmt/util/option_spec.h"

namespace nmt::train {

struct AverageOptions {
  std::string dir;  // the run's model directory (a positional argument)
  // How many of the newest checkpoints; 0: every checkpoint the run kept, so it works on any
  // run, --keep-last or not.
  int last = 0;
  std::string out_dir;
};

const std::vector<OptionSpec<AverageOptions>>& average_option_specs();

}  // namespace nmt::train
