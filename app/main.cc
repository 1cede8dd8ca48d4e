// nmt: one binary, subcommands sharing one options system (CLI11, with TOML configs).
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <torch/version.h>

#include "commands.h"
#include "nmt/util/blas.h"
#include "nmt/util/error.h"

int main(int argc, char** argv) {
  nmt::select_blas_kernels();
  CLI::App app{"nmt: neural machine translation (Transformer and GRU+attention) on LibTorch"};
  app.name("nmt");
  app.require_subcommand(1, 1);
  app.set_config("--config", "", "Read options from a TOML file ([train], [translate], ... sections)");
  // An option given twice (e.g. in --config and on the command line) takes the last value,
  // as in Marian/fairseq; list options (--ref) opt back into TakeAll.
  app.option_defaults()->multi_option_policy(CLI::MultiOptionPolicy::TakeLast);
  // A misspelt key in a --config file is an error, not silently ignored.
  app.allow_config_extras(CLI::config_extras_mode::error);
  // Which LibTorch and fmt this binary was built with: a bug report needs both.
  app.set_version_flag("--version", fmt::format("nmt 0.1.0 (LibTorch {}, fmt {}.{}.{}, C++{})", TORCH_VERSION,
                                                FMT_VERSION / 10000, FMT_VERSION / 100 % 100, FMT_VERSION % 100,
                                                __cplusplus / 100 % 100));
  nmt::cli::add_bleu_command(app);
  nmt::cli::add_train_command(app);
  nmt::cli::add_translate_command(app);
  nmt::cli::add_eval_command(app);
  nmt::cli::add_average_command(app);
  nmt::cli::add_attention_command(app);
  nmt::cli::add_plot_command(app);
  nmt::cli::add_report_command(app);
  nmt::cli::add_bench_command(app);
  try {
    // CLI11 takes the arguments last first.
    std::vector<std::string> args = nmt::cli::expand_sacrebleu_options({argv + 1, argv + argc});
    std::reverse(args.begin(), args.end());
    app.parse(std::move(args));
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    std::fprintf(stderr, "nmt: usage error: %s\n", e.what());
    std::fprintf(stderr, "Run with --help for more information.\n");
    return 2;
  } catch (const nmt::Error& e) {
    std::fflush(stdout);
    std::fprintf(stderr, "nmt: error: %s\n", e.what());
    return e.exit_code();
  } catch (const std::exception& e) {
    std::fflush(stdout);
    std::fprintf(stderr, "nmt: error: %s\n", e.what());
    return 1;
  }
  return 0;
}
