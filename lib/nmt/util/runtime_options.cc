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
      option("engine", "--engine", "Runtime",
             "Which decoder runs on the CPU: native (nmt's own engine: packed weights, no LibTorch), torch (LibTorch: "
             "the reference, and the GPU) or auto (native for the models and searches it takes, else torch)",
             &O::engine)
          .one_of({"auto", "native", "torch"}),
      option("quiet", "-q,--quiet", "Runtime", "No warnings or progress on stderr (errors still shown)", &O::quiet)
          .as_switch(),
  };
  return specs;
}

}  // namespace nmt
