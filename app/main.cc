// nmt: one binary, subcommands sharing one options system (CLI11, with TOML configs).
#include <cstdlib>
#include <string>

#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <torch/version.h>

#include "commands.h"
#include "run_app.h"
#include "config_file.h"
#include "nmt/util/blas.h"
#include "nmt/util/error.h"
#include "nmt/version.h"
#include "nmt/util/io.h"

int main(int argc, char** argv) {
  nmt::select_blas_kernels();
  CLI::App app{"nmt: neural machine translation (Transformer and GRU+attention) on LibTorch"};
  app.name("nmt");
  app.require_subcommand(1, 1);
  app.set_config("--config", "", "Read options from a TOML file ([train], [translate], ... sections)");
  app.config_formatter(std::make_shared<nmt::cli::CheckedTomlConfig>());  // before the subcommands copy it
  // An option given twice (e.g. in --config and on the command line) takes the last value,
  // as in Marian/fairseq; list options (--ref) opt back into TakeAll.
  app.option_defaults()->multi_option_policy(CLI::MultiOptionPolicy::TakeLast);
  // A misspelt key in a --config file is an error, not silently ignored.
  app.allow_config_extras(CLI::config_extras_mode::error);
  // Which LibTorch and fmt this binary was built with: a bug report needs both.
  app.set_version_flag("--version", fmt::format("nmt {} (LibTorch {}, fmt {}.{}.{}, C++{})", nmt::kVersion, TORCH_VERSION,
                                                FMT_VERSION / 10000, FMT_VERSION / 100 % 100, FMT_VERSION % 100,
                                                __cplusplus / 100 % 100));
  nmt::cli::add_bleu_command(app);
  nmt::cli::add_prepare_command(app);
  nmt::cli::add_train_command(app);
  nmt::cli::add_translate_command(app);
  nmt::cli::add_eval_command(app);
  nmt::cli::add_average_command(app);
  nmt::cli::add_quantize_command(app);
  nmt::cli::add_upgrade_command(app);
  nmt::cli::add_import_command(app);
  nmt::cli::add_attention_command(app);
  nmt::cli::add_score_command(app);
  nmt::cli::add_plot_command(app);
  nmt::cli::add_report_command(app);
  nmt::cli::add_bench_command(app);
  nmt::cli::add_serve_command(app);
  return nmt::cli::run_app(app, argc, argv);
}
