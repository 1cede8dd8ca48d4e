// nmt-score: `nmt bleu` in a binary without LibTorch. The nmt binary spends ~0.4 s loading
// LibTorch's libraries before main() runs, far longer than scoring a test set takes; this one
// starts in a millisecond. Same code and options: `nmt-score bleu ARGS` or `nmt-score ARGS`.
#include <algorithm>
#include <cstdio>
#include <exception>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "../commands.h"
#include "nmt/util/error.h"

int main(int argc, char** argv) {
  CLI::App app{"nmt-score: nmt bleu (BLEU, chrF, TER, confidence intervals, paired tests as sacreBLEU 2.6.0)"};
  app.name("nmt-score");
  app.require_subcommand(1, 1);
  app.option_defaults()->multi_option_policy(CLI::MultiOptionPolicy::TakeLast);
  nmt::cli::add_bleu_command(app);
  std::vector<std::string> args(argv + 1, argv + argc);
  if (args.empty() || args[0] != "bleu") args.insert(args.begin(), "bleu");
  args = nmt::cli::expand_sacrebleu_options(args);
  std::reverse(args.begin(), args.end());  // CLI11 takes the arguments last first
  try {
    app.parse(std::move(args));
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    std::fprintf(stderr, "nmt-score: usage error: %s\n", e.what());
    std::fprintf(stderr, "Run with --help for more information.\n");
    return 2;
  } catch (const nmt::Error& e) {
    std::fflush(stdout);
    std::fprintf(stderr, "nmt-score: error: %s\n", e.what());
    return e.exit_code();
  } catch (const std::exception& e) {
    std::fflush(stdout);
    std::fprintf(stderr, "nmt-score: error: %s\n", e.what());
    return 1;
  }
  return 0;
}
