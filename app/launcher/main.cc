// nmt: the command users run. It links no LibTorch: it scores (`nmt bleu`) itself, translates
// itself on nmt's CPU engine (`translate`, `eval` and `score` unless they ask for LibTorch, and
// `serve` with --engine native: runs_on_engine below), and hands every other command to
// nmt-torch beside it (exec, same process id, arguments, standard streams
// and exit code). Why two binaries: loading LibTorch's libraries takes 0.5-1 s and 120-170 MB
// before main() runs (their static initialisers register thousands of operators), longer than
// scoring a test set or translating a sentence takes, and LibTorch cannot be loaded later than
// start-up by a binary linked to it; `git` hands `git-*` commands on alike. Built without
// LibTorch (NMT_LIBTORCH=none) there is no nmt-torch: translate, eval, score and serve run here,
// on the engine, and the rest answer that they need LibTorch (NMT_LAUNCHER_WITHOUT_TORCH);
// the scorer-only build runs `nmt bleu` alone (NMT_LAUNCHER_SCORER_ONLY).
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>
#include <algorithm>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "../commands.h"
#include "../config_file.h"
#include "../run_app.h"
#ifndef NMT_LAUNCHER_SCORER_ONLY
#include "nmt/decode/translator.h"
#endif
#include "nmt/util/suggest.h"
#include "nmt/version.h"

namespace {

// The full nmt (every subcommand, LibTorch linked): nmt-torch in this executable's folder.
std::string full_binary_path() {
  std::string self(4096, '\0');
  const ssize_t n = ::readlink("/proc/self/exe", self.data(), self.size() - 1);
  if (n <= 0) return "nmt-torch";
  self.resize(static_cast<size_t>(n));
  const size_t slash = self.rfind('/');
  return (slash == std::string::npos ? std::string(".") : self.substr(0, slash)) + "/nmt-torch";
}

// The full build's subcommands.
const std::vector<std::string> kAllSubcommands = {"train",    "prepare", "translate", "eval",   "score",
                                                  "attention", "average", "quantize",  "upgrade", "import",
                                                  "plot",     "report",  "bench",     "serve",  "bleu"};

#ifdef NMT_LAUNCHER_SCORER_ONLY
const std::vector<std::string> kHere = {"bleu"};
const char* const kBuildName = "the scorer-only build (NMT_SCORER_ONLY)";
#elif defined(NMT_LAUNCHER_WITHOUT_TORCH)
// What runs without LibTorch: the engine's commands, int8 copies and imports of its models.
const std::vector<std::string> kHere = {"translate", "eval", "score", "serve", "quantize", "import", "bleu"};
const char* const kBuildName = "built without LibTorch (NMT_LIBTORCH=none)";
#else
// What runs here, on the CPU engine (with --engine native in a LibTorch build); nmt-torch's
// quantize also writes model.int8.pt, for LibTorch programs.
const std::vector<std::string> kHere = {"translate", "eval", "score", "serve", "bleu"};
#endif

#if defined(NMT_LAUNCHER_SCORER_ONLY) || defined(NMT_LAUNCHER_WITHOUT_TORCH)
// No nmt-torch to hand the command to: --version, --help, and a subcommand needing LibTorch.
std::string subcommand_of(int argc, char** argv);

int refuse_without_libtorch(int argc, char** argv) {
  const std::string what = subcommand_of(argc, argv);
  std::string here;
  for (const auto& c : kHere) here += (here.empty() ? "" : ", ") + c;
  if (what.empty() || what == "-h" || what == "--help") {
    std::printf("nmt %s, %s\nUsage: nmt SUBCOMMAND [OPTIONS] ... (nmt SUBCOMMAND --help)\nSubcommands: %s\n",
                nmt::kVersion, kBuildName, here.c_str());
    return what.empty() ? 2 : 0;
  }
  // A misspelt subcommand is named as such, not as one needing LibTorch.
  if (std::find(kAllSubcommands.begin(), kAllSubcommands.end(), what) == kAllSubcommands.end()) {
    const std::string near = nmt::nearest_name(what, kAllSubcommands);
    std::fprintf(stderr, "nmt: error: unknown subcommand '%s'%s (nmt --help lists them)\n", what.c_str(),
                 near.empty() ? "" : ("; did you mean '" + near + "'?").c_str());
    return 2;
  }
  std::fprintf(stderr,
               "nmt: error: '%s' needs LibTorch, and this nmt is %s, which runs %s; build with "
               "NMT_LIBTORCH=debian or wheel for the rest\n",
               what.c_str(), kBuildName, here.c_str());
  return 2;
}
#endif

int run_full_binary(char** argv) {
  const std::string path = full_binary_path();
  ::execv(path.c_str(), argv);
  std::fprintf(stderr, "nmt: error: cannot run %s (installed beside nmt): %s\n", path.c_str(), std::strerror(errno));
  return 1;
}

// The subcommands of kHere, run in this process.
int run_here(int argc, char** argv) {
  CLI::App app{"nmt: neural machine translation (Transformer and GRU+attention)"};
  app.name("nmt");
  app.require_subcommand(1, 1);
  app.set_config("--config", "", "Read options from a TOML file ([translate], [serve], ... sections)");
  app.config_formatter(std::make_shared<nmt::cli::CheckedTomlConfig>());
  app.option_defaults()->multi_option_policy(CLI::MultiOptionPolicy::TakeLast);
  app.allow_config_extras(CLI::config_extras_mode::error);
#ifndef NMT_LAUNCHER_SCORER_ONLY
  app.set_version_flag("--version", fmt::format("nmt {} ({}, fmt {}.{}.{}, C++{})", nmt::kVersion,
                                                nmt::decode::decoder_library(), FMT_VERSION / 10000,
                                                FMT_VERSION / 100 % 100, FMT_VERSION % 100, __cplusplus / 100 % 100));
  nmt::cli::add_translate_command(app);
  nmt::cli::add_eval_command(app);
  nmt::cli::add_score_command(app);
  nmt::cli::add_serve_command(app);
#endif
#ifdef NMT_LAUNCHER_WITHOUT_TORCH
  nmt::cli::add_quantize_command(app);
  nmt::cli::add_import_command(app);
#endif
  nmt::cli::add_bleu_command(app);
  return nmt::cli::run_app(app, argc, argv);
}

#if !defined(NMT_LAUNCHER_SCORER_ONLY) && !defined(NMT_LAUNCHER_WITHOUT_TORCH)
// Whether `nmt translate`, `eval`, `score` or `serve` can run here, on the CPU engine, without
// loading LibTorch: with --engine native always (what the engine cannot do is then refused, as
// nmt-torch refuses it); by default (--engine auto) when they ask for nothing the engine lacks:
// no --engine torch, --device other than cpu, --config file (its values are not read here), and
// every model directory has its model.safetensors (format 2).
bool runs_on_engine(int argc, char** argv) {
  std::string engine = "auto";
  std::vector<std::string> models;
  bool needs_torch = false;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    const std::string next = i + 1 < argc ? argv[i + 1] : "";
    auto value_of = [&](const std::string& flag, std::string& out) {
      if (arg == flag) return out = next, ++i, true;
      if (arg.rfind(flag + "=", 0) == 0) return out = arg.substr(flag.size() + 1), true;
      return false;
    };
    std::string v;
    if (arg == "--") break;
    if (value_of("--engine", v)) engine = v;
    else if (value_of("--device", v)) needs_torch |= v != "cpu";
    else if (value_of("-m", v) || value_of("--model", v)) models.push_back(v);
    else if (arg.rfind("--config", 0) == 0)
      needs_torch = true;
  }
  if (engine == "native") return true;
  if (engine != "auto" || needs_torch || models.empty()) return false;
  for (const auto& dir : models)
    if (::access((dir + "/model.safetensors").c_str(), R_OK) != 0) return false;
  return true;
}
#endif

// The subcommand: the first argument after the options before it (--config FILE).
std::string subcommand_of(int argc, char** argv) {
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--config") ++i;
    else if (arg.rfind("--config=", 0) != 0) return arg;
  }
  return "";
}

}  // namespace

int main(int argc, char** argv) {
  const std::string what = subcommand_of(argc, argv);
  const bool here = std::find(kHere.begin(), kHere.end(), what) != kHere.end();
#if defined(NMT_LAUNCHER_SCORER_ONLY) || defined(NMT_LAUNCHER_WITHOUT_TORCH)
  (void)run_full_binary;
  if (here) return run_here(argc, argv);
  if (what == "--version") {
#ifdef NMT_LAUNCHER_SCORER_ONLY
    std::printf("nmt %s (scorer only, NMT_SCORER_ONLY: no LibTorch)\n", nmt::kVersion);
    return 0;
#else
    return run_here(argc, argv);
#endif
  }
  return refuse_without_libtorch(argc, argv);
#else
  if (what == "bleu" || (here && runs_on_engine(argc, argv))) return run_here(argc, argv);
  return run_full_binary(argv);
#endif
}
