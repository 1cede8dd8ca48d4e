// nmt: one binary, subcommands sharing one options system (CLI11, with TOML configs).
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <new>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <torch/version.h>

#include "commands.h"
#include "config_file.h"
#include "nmt/util/blas.h"
#include "nmt/util/error.h"
#include "nmt/util/io.h"

namespace {
std::string first_line(const std::string& what) { return what.substr(0, what.find('\n')); }
}  // namespace

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
    nmt::check_stdout();  // a full disk behind stdout is an error, not a silent exit 0
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    // One line, as every other error (`nmt CMD --help` is where the options are).
    std::fprintf(stderr, "nmt: usage error: %s\n", first_line(e.what()).c_str());
    return 2;
  } catch (const nmt::Error& e) {
    std::fflush(stdout);
    std::fprintf(stderr, "nmt: error: %s\n", first_line(e.what()).c_str());
    return e.exit_code();
  } catch (const std::bad_alloc&) {
    std::fflush(stdout);
    std::fprintf(stderr, "nmt: error: out of memory\n");
    return 1;
  } catch (const std::exception& e) {
    // Not one of ours (LibTorch's c10::Error carries a many-line backtrace): its first line.
    std::fflush(stdout);
    std::fprintf(stderr, "nmt: error: %s\n", first_line(e.what()).c_str());
    return 1;
  }
  return 0;
}
