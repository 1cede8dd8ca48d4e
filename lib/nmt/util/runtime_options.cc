#include "nmt/util/runtime_options.h"

namespace nmt {

const std::vector<OptionSpec<RuntimeOptions>>& runtime_option_specs() {
  using O = RuntimeOptions;
  static const std::vector<OptionSpec<O>> specs = {
      threads_option(&O::threads),
      device_option(&O::device),
      option("int8", "--int8", "Runtime",
             "Quantise fp32 models to int8 on load, as nmt quantize does, and decode with int8 matrix products on the "
             "CPU (an int8 model directory needs no flag)",
             &O::int8)
          .as_switch(),
      option("quiet", "-q,--quiet", "Runtime", "No warnings or progress on stderr (errors still shown)", &O::quiet)
          .as_switch(),
  };
  return specs;
}

}  // namespace nmt
