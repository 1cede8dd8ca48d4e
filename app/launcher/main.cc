// nmt: the command users run. It scores (`nmt bleu`) itself and hands every other subcommand to
// nmt-torch beside it (exec, same process id, arguments, standard streams and exit code).
// Why two binaries: loading LibTorch's libraries takes ~0.4 s before main() runs (their static
// initialisers register thousands of operators), longer than scoring a test set takes, and
// LibTorch cannot be loaded later than start-up by a binary linked to it. This one links no
// LibTorch and starts in a millisecond, as `git` hands `git-*` commands on.
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <exception>
#include <new>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "../commands.h"
#include "nmt/util/error.h"
#include "nmt/util/io.h"

namespace {

std::string first_line(const std::string& what) { return what.substr(0, what.find('\n')); }

// The full nmt (every subcommand, LibTorch linked): nmt-torch in this executable's folder.
std::string full_binary_path() {
  std::string self(4096, '\0');
  const ssize_t n = ::readlink("/proc/self/exe", self.data(), self.size() - 1);
  if (n <= 0) return "nmt-torch";
  self.resize(static_cast<size_t>(n));
  const size_t slash = self.rfind('/');
  return (slash == std::string::npos ? std::string(".") : self.substr(0, slash)) + "/nmt-torch";
}

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
  std::vector<std::string> args = nmt::cli::expand_sacrebleu_options({argv + 1, argv + argc});
  std::reverse(args.begin(), args.end());  // CLI11 takes the arguments last first
  // The same error handling as nmt-torch's main: one line each, the documented exit codes.
  try {
    app.parse(std::move(args));
    nmt::check_stdout();  // a full disk behind stdout is an error, not a silent exit 0
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
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
    std::fflush(stdout);
    std::fprintf(stderr, "nmt: error: %s\n", first_line(e.what()).c_str());
    return 1;
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc >= 2 && std::strcmp(argv[1], "bleu") == 0) return run_bleu(argc, argv);
  return run_full_binary(argv);
}
