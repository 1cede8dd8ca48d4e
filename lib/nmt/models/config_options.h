#pragma once
// The model's rows of the option table (see util/option_spec.h): config.json's "model" section
// and the model flags of `nmt train` come from them. Apart from config.h so that the many
// files including config.h do not see the option machinery.
#include <vector>

#include "nmt/models/config.h"
#include "nmt/util/option_spec.h"

namespace nmt::models {

// Every field of ModelConfig, in config.json's order; the vocabulary sizes have no flag (they
// come from the subword model). Ranges are checked by ModelConfig::validate(): which sizes
// matter depends on the architecture.
const std::vector<OptionSpec<ModelConfig>>& model_option_specs();

}  // namespace nmt::models
