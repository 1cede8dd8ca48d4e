// `nmt score`: the log-probability of given translations (forced decoding), through the
// translation service.
#include <memory>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "commands.h"
#include "decode_flags.h"
#include "nmt/decode/command_options.h"
#include "nmt/decode/service.h"
#include "nmt/tensor/threads.h"
#include "nmt/util/error.h"
#include "nmt/util/io.h"

namespace nmt::cli {

namespace {

struct ScoreFlags {
  explicit ScoreFlags(CLI::App* cmd)
      : decode(cmd, OptionUse{{"batch_size"}, {}, {{"batch_size", "Sentence pairs per batch"}}},
               OptionUse{{"threads", "device", "engine", "quiet"}, {}, {{"quiet", "No warnings on stderr (errors still shown)"}}}),
        io(cmd, decode::score_io_option_specs()) {}
  DecodeFlags decode;
  OptionBinder<decode::ScoreIoOptions> io;
};

// "SCORE" or, with --per-token, "SCORE<TAB>TOKEN_LP TOKEN_LP ...".
std::string score_line(const decode::PairScore& s, const decode::ScoreIoOptions& io) {
  const double n = static_cast<double>(s.token_log_probs.size());
  std::string line = fmt::format("{:.6f}", io.normalize ? s.log_prob / n : s.log_prob);
  if (io.per_token) {
    line += '\t';
    for (size_t i = 0; i < s.token_log_probs.size(); ++i) line += fmt::format("{}{:.6f}", i ? " " : "", s.token_log_probs[i]);
  }
  return line + "\n";
}

void run_score(const ScoreFlags& flags) {
  const DecodeArgs a = flags.decode.args();
  const decode::ScoreIoOptions io = flags.io.checked();
  const auto sources = decode::read_source_lines(io.src);
  const auto targets = decode::read_source_lines(io.tgt);
  if (sources.size() != targets.size())
    throw UsageError(fmt::format("{} has {} lines but {} has {}", io.src, sources.size(), io.tgt, targets.size()));
  for (const std::string* input : {&io.src, &io.tgt})
    if (!io.output.empty() && same_file(*input, io.output))
      throw UsageError(fmt::format("{} is both an input and the output; the input would be destroyed", *input));
  set_threads(a.runtime.threads);
  decode::TranslationService service(a.model_dirs, a.runtime);
  OutputFile out(io.output.empty() ? "-" : io.output);
  decode::TranslateStats stats;
  for (const auto& s : service.score(sources, targets, a.search, &stats)) out.write(score_line(s, io));
  out.commit();
  warn_truncated(stats, a.runtime.quiet);
}

}  // namespace

void add_score_command(CLI::App& app) {
  auto* cmd = app.add_subcommand(
      "score", "Score given translations: the log-probability of each target line given its source line (forced decoding)");
  auto flags = std::make_shared<ScoreFlags>(cmd);
  cmd->callback([flags] { run_score(*flags); });
}

}  // namespace nmt::cli
