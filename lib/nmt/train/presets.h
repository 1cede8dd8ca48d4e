#pragma once
// Named training recipes (`--preset NAME`); any explicit option still overrides them.
#include <string>
#include <vector>

#include "nmt/train/options.h"

namespace nmt::train {

struct Preset {
  const char* name;
  const char* summary;  // for --help
  void (*apply)(TrainOptions&);
};

// The recipes, each declared once (name, summary, values).
const std::vector<Preset>& presets();

// Fills `options` with the preset's values; OptionError("preset", ...) for an unknown name.
void apply_preset(const std::string& name, TrainOptions& options);
std::vector<std::string> preset_names();

}  // namespace nmt::train
