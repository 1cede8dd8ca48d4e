#pragma once
// What the decoding commands (translate, eval, attention, score) share on the command line:
// -m and the search and runtime tables, checked before any model is loaded, and the live
// progress line.
#include <chrono>
#include <string>
#include <vector>

#include "option_binder.h"
#include "nmt/decode/search_options.h"
#include "nmt/decode/translator.h"
#include "nmt/util/runtime_options.h"
#include "nmt/viz/progress.h"

namespace nmt::cli {

struct DecodeArgs {
  std::vector<std::string> model_dirs;  // several: an ensemble
  decode::SearchOptions search;
  RuntimeOptions runtime;
};

// A decoding command's flags: -m, then the options it takes of the search and runtime tables.
class DecodeFlags {
 public:
  DecodeFlags(CLI::App* cmd, const OptionUse& search, const OptionUse& runtime = {});
  // The options given, checked before any model is loaded or file touched (a huge batch
  // would exhaust memory, NaN length factors make every output empty).
  DecodeArgs args() const;

 private:
  std::vector<std::string> dirs_;
  CLI::Option* model_;
  OptionBinder<decode::SearchOptions> search_;
  OptionBinder<RuntimeOptions> runtime_;
};

// Live "sentences done, sentences/s, ETA" on a terminal; nothing when stderr is redirected or --quiet.
class TranslateProgress {
 public:
  TranslateProgress(size_t total, bool quiet);
  // The callback to hand the service (ResultOptions::on_batch_done); empty when not shown.
  std::function<void(size_t)> callback();
  void finish() { line_.clear(); }

 private:
  viz::ProgressLine line_;
  size_t total_, done_ = 0;
  std::chrono::steady_clock::time_point start_ = std::chrono::steady_clock::now();
};

void warn_truncated(const decode::TranslateStats& stats, bool quiet);

}  // namespace nmt::cli
