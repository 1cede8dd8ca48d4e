#include "decode_flags.h"

#include <cstdio>

#include <fmt/format.h>

namespace nmt::cli {

DecodeFlags::DecodeFlags(CLI::App* cmd, const OptionUse& search, const OptionUse& runtime)
    : model_(add_model_option(cmd, dirs_, ModelList::kEnsemble)),
      search_(cmd, decode::search_option_specs(), {}, search),
      runtime_(cmd, runtime_option_specs(), {}, runtime) {}

DecodeArgs DecodeFlags::args() const {
  DecodeArgs a;
  a.model_dirs = dirs_;
  search_.apply(a.search);
  a.runtime = runtime_.checked();
  decode::validate_search_options(a.search, flag_of);
  return a;
}

TranslateProgress::TranslateProgress(size_t total, bool quiet) : line_(!quiet && viz::is_terminal(stderr)), total_(total) {}

std::function<void(size_t)> TranslateProgress::callback() {
  if (!line_.enabled()) return nullptr;
  return [this](size_t n) {
    done_ += n;
    if (!line_.due()) return;
    const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
    line_.show(fmt::format("translating: {}/{} sentences | {:.1f} sentences/s | elapsed {} | ETA {}", done_, total_,
                           done_ / std::max(secs, 1e-9), viz::format_duration(secs), viz::eta_text(done_, total_, secs)));
  };
}

void warn_truncated(const decode::TranslateStats& stats, bool quiet) {
  if (stats.truncated && !quiet)
    std::fprintf(stderr, "warning: %zu input line(s) longer than the model's limit were truncated\n", stats.truncated);
}

}  // namespace nmt::cli
