#pragma once
// Runs a parsed-and-dispatched CLI11 app with nmt's error conventions, shared by both binaries
// (nmt-torch's main.cc and the launcher's): one line on stderr for every error, exit 2 for
// usage errors, the error's own code (1 by default) otherwise, and stdout checked at the end.
#include <algorithm>
#include <cstdio>
#include <exception>
#include <new>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "commands.h"
#include "nmt/util/error.h"
#include "nmt/util/io.h"

namespace nmt::cli {

inline std::string first_line(const std::string& what) { return what.substr(0, what.find('\n')); }

inline int run_app(CLI::App& app, int argc, char** argv) {
  try {
    // sacreBLEU's several-letter short options spelled out; CLI11 takes the arguments last first.
    std::vector<std::string> args = expand_sacrebleu_options({argv + 1, argv + argc});
    std::reverse(args.begin(), args.end());
    app.parse(std::move(args));
    check_stdout();  // a full disk behind stdout is an error, not a silent exit 0
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
  } catch (const Error& e) {
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

}  // namespace nmt::cli
