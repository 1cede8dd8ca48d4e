// `nmt bleu`: corpus or sentence BLEU / chrF of a hypothesis file against one or more
// reference files, reproducing the sacreBLEU 2.6.0 command line (same numbers, same
// signatures, same text output line), plus the non-standard "d2l" sentence BLEU.
#include <cstdio>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "commands.h"
#include "nmt/metrics/bleu.h"
#include "nmt/metrics/chrf.h"
#include "nmt/text/unicode.h"
#include "nmt/util/error.h"
#include "nmt/util/io.h"

namespace nmt::cli {
namespace {

using nlohmann::json;

struct BleuCliOptions {
  std::vector<std::string> refs;
  std::string hyp_positional;
  std::string hyp_input;
  std::vector<std::string> metrics{"bleu"};
  std::string tokenize = "13a";
  bool lowercase = false;
  bool lowercase_c = false;  // the "c" of "-lc" (CLI11 reads it as -l -c)
  std::string smooth_method = "exp";
  std::optional<double> smooth_value;
  bool sentence = false;
  int d2l_k = 0;
  bool json = false;
  int width = 2;
  int chrf_char_order = 6;
  int chrf_word_order = 0;
  int chrf_beta = 2;
  bool chrf_lowercase = false;
  bool chrf_whitespace = false;
  bool chrf_eps_smoothing = false;
};

// A file's segments as the sacreBLEU CLI reads them: split on '\n' only, each line
// rstripped (Python whitespace, so a CRLF's '\r' and trailing NBSP go too). Invalid UTF-8
// is reported with its file and line, as Python's decoder would refuse the file.
std::vector<std::string> read_segments(const std::string& path) {
  std::vector<std::string> lines = read_lines(path);
  for (size_t i = 0; i < lines.size(); ++i) {
    if (auto problem = text::find_utf8_error(lines[i]))
      throw RuntimeError(fmt::format("{}:{}: invalid UTF-8 ({} at byte {} of the line)", path, i + 1,
                                     problem->reason, problem->offset + 1));
    lines[i] = std::string(text::python_rstrip(lines[i]));
  }
  return lines;
}

std::string lines(size_t n) { return fmt::format("{} line{}", n, n == 1 ? "" : "s"); }

bool is_metric(const std::string& name) { return name == "bleu" || name == "chrf"; }

void print(const std::string& s) { std::fwrite(s.data(), 1, s.size(), stdout); }

void run_bleu(BleuCliOptions o) {
  // `-m bleu chrf HYP` lets the metric list swallow HYP; take it back.
  if (o.hyp_positional.empty() && o.hyp_input.empty() && o.metrics.size() > 1 && !is_metric(o.metrics.back())) {
    o.hyp_positional = o.metrics.back();
    o.metrics.pop_back();
  }
  for (const std::string& m : o.metrics)
    if (!is_metric(m)) throw UsageError(fmt::format("--metrics: unknown metric '{}' (expected bleu and/or chrf)", m));
  if (!o.hyp_positional.empty() && !o.hyp_input.empty())
    throw UsageError("give the hypothesis file once: either as HYP or with -i, not both");
  const std::string hyp_path = o.hyp_positional.empty() ? o.hyp_input : o.hyp_positional;
  if (hyp_path.empty()) throw UsageError("no hypothesis file: give HYP or -i HYP");
  if (o.refs.empty()) throw UsageError("no reference file: give -r REF");
  if (o.width < 0 || o.width > 17) throw UsageError(fmt::format("--width must be in 0..17, got {}", o.width));

  const std::vector<std::string> hyps = read_segments(hyp_path);
  std::vector<std::vector<std::string>> refs;
  for (const std::string& r : o.refs) refs.push_back(read_segments(r));
  if (hyps.empty()) throw RuntimeError(fmt::format("{}: the hypothesis file contains no line", hyp_path));
  for (size_t k = 0; k < refs.size(); ++k) {
    if (refs[k].size() != hyps.size())
      throw UsageError(fmt::format("line counts differ: hypothesis {} has {}, reference {} has {}", hyp_path,
                                   lines(hyps.size()), o.refs[k], lines(refs[k].size())));
  }

  // The "Dive into Deep Learning" sentence BLEU: not sacreBLEU, labelled as such everywhere.
  if (o.d2l_k > 0) {
    std::vector<double> scores;
    double sum = 0.0;
    for (size_t i = 0; i < hyps.size(); ++i) {
      scores.push_back(metrics::d2l_bleu(hyps[i], refs[0][i], o.d2l_k));
      sum += scores.back();
    }
    const double mean = sum / static_cast<double>(scores.size());
    const std::string note = "non-standard: sentence BLEU of the Dive into Deep Learning book, "
                             "not comparable with sacreBLEU; scale 0..1; first reference only";
    if (o.json) {
      json j = {{"name", "d2l-bleu"}, {"non_standard", true}, {"note", note}, {"k", o.d2l_k},
                {"reference", o.refs[0]}, {"scores", scores}, {"mean", mean}};
      print(j.dump(1) + "\n");
    } else {
      const int decimals = o.width + 2;
      print(fmt::format("# d2l-bleu k={} ({}; reference {})\n", o.d2l_k, note, o.refs[0]));
      for (size_t i = 0; i < scores.size(); ++i) print(fmt::format("{}\t{:.{}f}\n", i + 1, scores[i], decimals));
      print(fmt::format("d2l-bleu(k={}, non-standard) mean = {:.{}f} over {} lines\n", o.d2l_k, mean, decimals,
                        scores.size()));
    }
    return;
  }

  metrics::BleuOptions bleu_options;
  bleu_options.tokenize = metrics::parse_tokenizer(o.tokenize);
  bleu_options.lowercase = o.lowercase || o.lowercase_c;
  bleu_options.smooth_method = metrics::parse_smooth_method(o.smooth_method);
  bleu_options.smooth_value = o.smooth_value;
  bleu_options.effective_order = o.sentence;  // as sacrebleu.sentence_bleu
  metrics::ChrfOptions chrf_options;
  chrf_options.char_order = o.chrf_char_order;
  chrf_options.word_order = o.chrf_word_order;
  chrf_options.beta = o.chrf_beta;
  chrf_options.lowercase = o.chrf_lowercase;
  chrf_options.whitespace = o.chrf_whitespace;
  chrf_options.eps_smoothing = o.chrf_eps_smoothing;
  const metrics::BleuScorer bleu(bleu_options);
  const metrics::ChrfScorer chrf(chrf_options);

  // One metric -> a JSON object, several -> a list (per line with --sentence).
  const auto pack = [](std::vector<json> items) { return items.size() == 1 ? items[0] : json(items); };

  if (o.sentence) {
    json all = json::array();
    std::vector<std::string> line_refs(refs.size());
    for (size_t i = 0; i < hyps.size(); ++i) {
      for (size_t k = 0; k < refs.size(); ++k) line_refs[k] = refs[k][i];
      std::vector<json> items;
      for (const std::string& m : o.metrics) {
        if (m == "bleu") {
          metrics::BleuScore s = bleu.sentence_score(hyps[i], line_refs);
          if (o.json) items.push_back(s);
          else print(s.text_line(o.width) + "\n");
        } else {
          metrics::ChrfScore s = chrf.sentence_score(hyps[i], line_refs);
          if (o.json) items.push_back(s);
          else print(s.text_line(o.width) + "\n");
        }
      }
      if (o.json) all.push_back(pack(std::move(items)));
    }
    if (o.json) print(all.dump(1) + "\n");
    return;
  }

  std::vector<json> items;
  for (const std::string& m : o.metrics) {
    if (m == "bleu") {
      metrics::BleuScore s = bleu.corpus_score(hyps, refs);
      if (o.json) items.push_back(s);
      else print(s.text_line(o.width) + "\n");
    } else {
      metrics::ChrfScore s = chrf.corpus_score(hyps, refs);
      if (o.json) items.push_back(s);
      else print(s.text_line(o.width) + "\n");
    }
  }
  if (o.json) print(pack(std::move(items)).dump(1) + "\n");
}

}  // namespace

void add_bleu_command(CLI::App& app) {
  auto o = std::make_shared<BleuCliOptions>();
  auto* cmd = app.add_subcommand(
      "bleu",
      "Score HYP against references with BLEU and/or chrF, identical to sacreBLEU 2.6.0 "
      "(`sacrebleu REF... -i HYP -m bleu chrf`); lines are split on \\n and rstripped");
  cmd->add_option("hyp", o->hyp_positional, "Hypothesis file (system output), one segment per line");
  cmd->add_option("-i,--input", o->hyp_input, "Hypothesis file (alternative to the positional HYP)");
  cmd->add_option("-r,--ref", o->refs, "Reference file; repeat -r for several references")
      ->required()
      ->allow_extra_args(false)
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
  cmd->add_option("-m,--metrics", o->metrics, "Metrics to compute: bleu, chrf (default: bleu)")
      ->expected(1, -1)
      ->delimiter(',')
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
  cmd->add_option("--tokenize,--tok", o->tokenize, "BLEU tokenizer")
      ->check(CLI::IsMember({"13a", "none"}))
      ->capture_default_str();
  cmd->add_flag("-l,--lowercase", o->lowercase, "Lowercase before BLEU (Python str.lower); -lc also works");
  cmd->add_flag("-c", o->lowercase_c, "Second letter of -lc")->group("");
  cmd->add_option("--smooth-method,-s", o->smooth_method, "BLEU smoothing")
      ->check(CLI::IsMember({"exp", "floor", "add-k", "none"}))
      ->capture_default_str();
  cmd->add_option("--smooth-value", o->smooth_value, "Value for floor (default 0.1) and add-k (default 1)");
  cmd->add_flag("--sentence,--sentence-level", o->sentence,
                "One score per line (BLEU with effective order, as sacrebleu.sentence_bleu)");
  cmd->add_option("--d2l-k", o->d2l_k,
                  "Print the Dive into Deep Learning book's sentence BLEU with max order K per line and its "
                  "mean instead (NON-STANDARD, 0..1, first reference only)")
      ->check(CLI::Range(1, 100));
  cmd->add_flag("--json", o->json, "JSON output (full precision; a list when several metrics)");
  cmd->add_option("-w,--width", o->width, "Decimals of the scores in text output")->capture_default_str();
  cmd->add_option("--chrf-char-order", o->chrf_char_order, "chrF character n-gram order")->capture_default_str();
  cmd->add_option("--chrf-word-order", o->chrf_word_order, "chrF word n-gram order (2: chrF++)")
      ->capture_default_str();
  cmd->add_option("--chrf-beta", o->chrf_beta, "chrF beta")->capture_default_str();
  cmd->add_flag("--chrf-lowercase", o->chrf_lowercase, "Lowercase before chrF");
  cmd->add_flag("--chrf-whitespace", o->chrf_whitespace, "Keep whitespace in chrF character n-grams");
  cmd->add_flag("--chrf-eps-smoothing", o->chrf_eps_smoothing, "chrF++.py-style epsilon smoothing");
  cmd->callback([o] { run_bleu(*o); });
}

}  // namespace nmt::cli
