// `nmt quantize`: an int8 copy of a model directory for faster decoding on the CPU.
#include <cstdio>
#include <memory>

#include <CLI/CLI.hpp>

#include "commands.h"
#include "option_binder.h"
#include "nmt/models/conversion_options.h"
#include "nmt/models/int8_copy.h"
#include "nmt/quant/int8_gemm.h"

namespace nmt::cli {

void add_quantize_command(CLI::App& app) {
  auto* cmd = app.add_subcommand(
      "quantize",
      "Write an int8 copy of a model directory (Linear weights int8 per output channel) for faster decoding");
  auto own = std::make_shared<OptionBinder<models::ConversionOptions>>(cmd, models::quantize_option_specs());
  cmd->callback([own] {
    const models::ConversionOptions o = own->checked();
    const auto s = models::quantize_model_dir(o.dir, o.out_dir, o.force);
    if (!o.quiet)
      std::fprintf(stderr,
                   "quantized %lld Linear layers (%lld int8 weights, %lld fp32 values kept) into %s in %.2fs; "
                   "int8 kernel on this CPU: %s\n",
                   static_cast<long long>(s.linears), static_cast<long long>(s.int8_weights),
                   static_cast<long long>(s.fp32_weights), o.out_dir.c_str(), s.seconds, quant::kernel_name().c_str());
  });
}

}  // namespace nmt::cli
