#pragma once
// Named training recipes (`--preset NAME`); any explicit option still overrides them.
#include <string>
#include <vector>

#include "nmt/train/trainer.h"

namespace nmt::train {

// Fills `options` with the preset's values; UsageError for an unknown name.
void apply_preset(const std::string& name, TrainOptions& options);
std::vector<std::string> preset_names();

}  // namespace nmt::train
