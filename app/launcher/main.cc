// nmt: the command users run. It scores (`nmt bleu`) itself and hands every other subcommand to
// nmt-torch beside it (exec, same process id, arguments, standard streams and exit code).
// Why two binaries: loading LibTorch's libraries takes ~0.4 s before main() runs (their static
// initialisers register thousands of operators), longer than scoring a test set takes, and
// LibTorch cannot be loaded later than start-up by a binary linked to it. This one links no
// LibTorch and starts in a millisecond, as `git` hands `git-*` commands on.
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>
#include <algorithm>

#include <CLI/CLI.hpp>

#include "../commands.h"
#include "../run_app.h"
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

#ifdef NMT_LAUNCHER_SCORER_ONLY
// NMT_LIBTORCH=none: there is no nmt-torch to hand the command to.
int refuse_without_libtorch(int argc, char** argv) {
  const std::string what = argc >= 2 ? argv[1] : "";
  if (what == "--version") {
    std::printf("nmt %s (scorer only, NMT_LIBTORCH=none: no LibTorch)\n", nmt::kVersion);
    return 0;
  }
  if (what.empty() || what == "-h" || what == "--help") {
    std::printf("nmt %s, scorer-only build (NMT_LIBTORCH=none)\nUsage: nmt bleu [OPTIONS] ...\n"
                "Subcommands:\n  bleu  sacreBLEU 2.6.0's BLEU, chrF and TER (nmt bleu --help)\n",
                nmt::kVersion);
    return what.empty() ? 2 : 0;
  }
  // The full build's subcommands: a misspelt one is named as such, not as one needing LibTorch.
  const std::vector<std::string> full = {"train", "prepare", "translate", "eval", "score", "attention", "average",
                                         "quantize", "upgrade", "import", "plot", "report", "bench", "serve", "bleu"};
  if (std::find(full.begin(), full.end(), what) == full.end()) {
    const std::string near = nmt::nearest_name(what, full);
    std::fprintf(stderr, "nmt: error: unknown subcommand '%s'%s (nmt --help lists them)\n", what.c_str(),
                 near.empty() ? "" : ("; did you mean '" + near + "'?").c_str());
    return 2;
  }
  std::fprintf(stderr,
               "nmt: error: '%s' needs LibTorch, and this nmt is the scorer-only build (NMT_LIBTORCH=none): "
               "only `nmt bleu` works; build with NMT_LIBTORCH=debian or wheel for the rest\n",
               what.c_str());
  return 2;
}
#endif

int run_full_binary(char** argv) {
  const std::string path = full_binary_path();
  ::execv(path.c_str(), argv);
  std::fprintf(stderr, "nmt: error: cannot run %s (installed beside nmt): %s\n", path.c_str(), std::strerror(errno));
  return 1;
}

int run_bleu(int argc, char** argv) {
  CLI::App app{"nmt: neural machine translation (Transformer and GRU+attention) on LibTorch"};
  app.name("nmt");
  app.require_subcommand(1, 1);
  app.option_defaults()->multi_option_policy(CLI::MultiOptionPolicy::TakeLast);
  nmt::cli::add_bleu_command(app);
  return nmt::cli::run_app(app, argc, argv);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc >= 2 && std::strcmp(argv[1], "bleu") == 0) return run_bleu(argc, argv);
#ifdef NMT_LAUNCHER_SCORER_ONLY
  (void)run_full_binary;
  return refuse_without_libtorch(argc, argv);
#else
  return run_full_binary(argv);
#endif
}
