// `nmt quantize`: an int8 copy of a model directory for faster decoding on the CPU.
#include <cstdio>

#include <CLI/CLI.hpp>

#include "commands.h"
#include "nmt/models/quantize.h"
#include "nmt/quant/int8_gemm.h"

namespace nmt::cli {

void add_quantize_command(CLI::App& app) {
  auto* cmd = app.add_subcommand(
      "quantize",
      "Write an int8 copy of a model directory (Linear weights int8 per output channel) for faster decoding");
  auto dir = std::make_shared<std::string>();
  auto out = std::make_shared<std::string>();
  auto force = std::make_shared<bool>(false);
  auto quiet = std::make_shared<bool>(false);
  cmd->add_option("dir", *dir, "Model directory (written by nmt train or nmt average)")->required();
  cmd->add_option("-o,--out", *out, "Int8 model directory to write")->required();
  cmd->add_flag("--force", *force, "Replace OUT if it exists");
  cmd->add_flag("-q,--quiet", *quiet, "No summary on stderr");
  cmd->callback([dir, out, force, quiet] {
    const auto s = models::quantize_model_dir(*dir, *out, *force);
    if (!*quiet)
      std::fprintf(stderr,
                   "quantized %lld Linear layers (%lld int8 weights, %lld fp32 values kept) into %s in %.2fs; "
                   "int8 kernel on this CPU: %s\n",
                   static_cast<long long>(s.linears), static_cast<long long>(s.int8_weights),
                   static_cast<long long>(s.fp32_weights), out->c_str(), s.seconds, quant::kernel_name().c_str());
  });
}

}  // namespace nmt::cli
