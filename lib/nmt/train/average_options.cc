#include "nmt/train/average_options.h"

namespace nmt::train {

const std::vector<OptionSpec<AverageOptions>>& average_option_specs() {
  using O = AverageOptions;
  static const std::vector<OptionSpec<O>> specs = {
      option("dir", "dir", "", "Model directory of the run (with checkpoints/)", &O::dir).is_required(),
      option("last", "--last", "", "How many of the newest checkpoints to average (0: every checkpoint the run kept)",
             &O::last),
      option("out_dir", "-o,--out", "", "New model directory to write", &O::out_dir).is_required(),
  };
  return specs;
}

}  // namespace nmt::train
