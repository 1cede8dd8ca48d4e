#pragma once
// `nmt prepare`'s options, declared once (util/option_spec.h) and bound by app/option_binder.h:
// the corpus, the subword model trained on it, the shards, and --verify. Torch-free.
#include <string>
#include <vector>

#include "nmt/data/prepare.h"
#include "nmt/util/option_spec.h"

namespace nmt::data {

struct PrepareCommandOptions {
  PrepareOptions prepare;
  std::string verify;  // a dataset directory: only check its checksums
};

// The defaults `nmt prepare` runs with: one encoding thread per core.
PrepareCommandOptions prepare_command_defaults();

const std::vector<OptionSpec<PrepareCommandOptions>>& prepare_option_specs();

}  // namespace nmt::data
