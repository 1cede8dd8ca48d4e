#include "nmt/metrics/bleu_command.h"

#include <cctype>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "nmt/metrics/bleu.h"
#include "nmt/metrics/bleu_inputs.h"
#include "nmt/metrics/chrf.h"
#include "nmt/metrics/sacrebleu_report.h"
#include "nmt/metrics/significance.h"
#include "nmt/metrics/ter.h"
#include "nmt/util/error.h"

namespace nmt::metrics {
namespace {

using nlohmann::json;

void print(const std::string& s) { std::fwrite(s.data(), 1, s.size(), stdout); }

// A full disk or a closed pipe must not pass for success.
void finish_output() {
  if (std::fflush(stdout) != 0 || std::ferror(stdout))
    throw RuntimeError(fmt::format("writing the scores to standard output failed: {}", std::strerror(errno)));
}

std::string lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

bool is_metric(const std::string& name) { return name == "bleu" || name == "chrf" || name == "ter"; }

bool format_is(const BleuCommandOptions& o, const char* name) { return o.format && *o.format == name; }

// The table's ranges and choices, in the words of the command line (--width is 18, ...).
void check_against_table(const BleuCommandOptions& o) {
  try {
    check_options(o, bleu_option_specs());
  } catch (const OptionError& e) {
    throw UsageError(e.message(bleu_flag_of));
  }
}

// sacreBLEU options that need its test-set registry or downloads: one line each, naming why.
void refuse_unsupported(const BleuCommandOptions& o) {
  const auto refuse = [](bool given, const char* what) {
    if (given) throw UsageError(what);
  };
  refuse(o.list, "--list is not supported: nmt has no registry of sacreBLEU's test sets (use `sacrebleu --list`)");
  refuse(!o.download.empty(), "--download is not supported: nmt never downloads (use `sacrebleu --download`); -t reads what sacreBLEU's cache holds");
  refuse(o.citation, "--citation is not supported: nmt has no registry of sacreBLEU's test sets (use `sacrebleu --citation`)");
  refuse(!o.origlang.empty() || !o.subset.empty(),
         "--origlang/--subset are not supported: they need the raw WMT files of sacreBLEU's registry");
  refuse(o.detail, "--detail is not supported: it needs the raw WMT files of sacreBLEU's registry");
  const std::string enc = lower(o.encoding);
  refuse(enc != "utf-8" && enc != "utf8", "--encoding: nmt reads UTF-8 only (invalid UTF-8 is an error naming file and line)");
  if (!o.language_pair.empty()) {
    const size_t dash = o.language_pair.find('-');
    if (dash == 0 || dash == std::string::npos || dash + 1 == o.language_pair.size())
      throw UsageError(fmt::format("--language-pair must be SRC-TGT (e.g. en-de), got '{}'", o.language_pair));
  }
}

// `-m bleu chrf HYP...` lets the metric list swallow the files; take back the trailing entries
// that name files (an unknown metric name stays, to be reported as such).
void take_back_files_from_metrics(BleuCommandOptions& o) {
  while (o.metrics.size() > 1 && !is_metric(o.metrics.back()) && std::filesystem::exists(o.metrics.back())) {
    o.positionals.insert(o.positionals.begin(), o.metrics.back());
    o.metrics.pop_back();
  }
  for (const std::string& m : o.metrics)
    if (!is_metric(m)) throw UsageError(fmt::format("--metrics: unknown metric '{}' (expected bleu, chrf, ter)", m));
}

// sacreBLEU's BLEU._TOKENIZER_MAP: the tokenizer a target language implies when --tokenize
// is not given (ja-mecab and ko-mecab are then refused by parse_tokenizer, naming MeCab).
std::string tokenizer_for(const BleuCommandOptions& o) {
  if (!o.tokenize.empty()) return o.tokenize;
  const std::string target = o.language_pair.substr(o.language_pair.find('-') + 1);
  if (o.language_pair.empty()) return "13a";
  if (target == "zh") return "zh";
  if (target == "ja") return "ja-mecab";
  if (target == "ko") return "ko-mecab";
  return "13a";
}

ReportOptions report_options(const BleuCommandOptions& o, bool sacrebleu_style, size_t n_systems) {
  ReportOptions r;
  r.metrics = o.metrics;
  r.bleu.tokenize = parse_tokenizer(tokenizer_for(o));
  r.bleu.lowercase = o.lowercase || o.lowercase_c || o.lowercase_by_l;
  r.bleu.smooth_method = parse_smooth_method(o.smooth_method);
  r.bleu.smooth_value = o.smooth_value;
  r.bleu.effective_order = o.sentence;  // as sacrebleu.sentence_bleu
  r.chrf.char_order = o.chrf_char_order;
  r.chrf.word_order = o.chrf_word_order;
  r.chrf.beta = o.chrf_beta;
  r.chrf.lowercase = o.chrf_lowercase;
  r.chrf.whitespace = o.chrf_whitespace;
  r.chrf.eps_smoothing = o.chrf_eps_smoothing;
  r.ter.case_sensitive = o.ter_case_sensitive;
  r.ter.no_punct = o.ter_no_punct;
  r.ter.asian_support = o.ter_asian_support;
  r.ter.normalized = o.ter_normalized;
  r.json = format_is(o, "json") || (o.json && n_systems > 1);
  r.latex = format_is(o, "latex");
  // sacreBLEU prints one decimal; nmt's own one-system layout has always printed two.
  r.width = o.width.value_or(sacrebleu_style ? 1 : 2);
  r.score_only = o.score_only;
  r.short_signature = o.short_signature;
  r.confidence = o.confidence;
  r.confidence_n = static_cast<size_t>(o.confidence_n);
  if (o.paired_bs && o.paired_ar) throw UsageError("--paired-bs and --paired-ar exclude each other");
  r.paired = o.paired_bs   ? PairedTest::kBootstrap
             : o.paired_ar ? PairedTest::kApproximateRandomization
                           : PairedTest::kNone;
  r.paired_bs_n = static_cast<size_t>(o.paired_bs_n);
  r.paired_ar_n = static_cast<size_t>(o.paired_ar_n);
  if (o.confidence || r.paired != PairedTest::kNone) r.seed = test_seed_from_environment();
  return r;
}

// The "Dive into Deep Learning" sentence BLEU: not sacreBLEU, labelled as such everywhere.
void print_d2l(const BleuCommandOptions& o, const std::vector<std::string>& hyps, const std::vector<std::string>& refs,
               const std::string& ref_path) {
  const int k = *o.d2l_k;
  std::vector<double> scores;
  double sum = 0.0;
  for (size_t i = 0; i < hyps.size(); ++i) {
    scores.push_back(d2l_bleu(hyps[i], refs[i], k));
    sum += scores.back();
  }
  const double mean = sum / static_cast<double>(scores.size());
  const std::string note = "non-standard: sentence BLEU of the Dive into Deep Learning book, "
                           "not comparable with sacreBLEU; scale 0..1; first reference only";
  if (o.json) {
    json j = {{"name", "d2l-bleu"}, {"non_standard", true}, {"note", note}, {"k", k},
              {"reference", ref_path}, {"scores", scores}, {"mean", mean}};
    print(j.dump(1) + "\n");
    return;
  }
  const int decimals = o.width.value_or(2) + 2;
  print(fmt::format("# d2l-bleu k={} ({}; reference {})\n", k, note, ref_path));
  for (size_t i = 0; i < scores.size(); ++i) print(fmt::format("{}\t{:.{}f}\n", i + 1, scores[i], decimals));
  print(fmt::format("d2l-bleu(k={}, non-standard) mean = {:.{}f} over {} lines\n", k, mean, decimals, scores.size()));
}

std::string score_name(const BleuScore&) { return "BLEU"; }
std::string score_name(const ChrfScore& s) { return s.name; }
std::string score_name(const TerScore&) { return "TER"; }

// nmt's own layout for one system: one line (or JSON object) per metric, in -m order; with
// --sentence-level one per line and metric.
void print_own_layout(const BleuCommandOptions& o, const ReportOptions& r, const std::vector<std::string>& hyps,
                      const std::vector<std::vector<std::string>>& refs) {
  const BleuScorer bleu(r.bleu);
  const ChrfScorer chrf(r.chrf);
  const TerScorer ter(r.ter);
  // One metric -> a JSON object, several -> a list (per line with --sentence).
  const auto pack = [](std::vector<json> items) { return items.size() == 1 ? items[0] : json(items); };
  const auto emit = [&](auto score, std::vector<json>& items) {
    if (o.json) return items.push_back(score);
    if (r.score_only) return print(fmt::format("{:.{}f}\n", score.score, r.width));
    if (r.short_signature) score.signature = short_signature(score.signature, score_name(score));
    print(score.text_line(r.width) + "\n");
  };
  if (o.sentence) {
    json all = json::array();
    std::vector<std::string> line_refs(refs.size());
    for (size_t i = 0; i < hyps.size(); ++i) {
      for (size_t k = 0; k < refs.size(); ++k) line_refs[k] = refs[k][i];
      std::vector<json> items;
      for (const std::string& m : o.metrics) {
        if (m == "bleu") emit(bleu.sentence_score(hyps[i], line_refs), items);
        else if (m == "chrf") emit(chrf.sentence_score(hyps[i], line_refs), items);
        else emit(ter.sentence_score(hyps[i], line_refs), items);
      }
      if (o.json) all.push_back(pack(std::move(items)));
    }
    if (o.json) print(all.dump(1) + "\n");
    return;
  }
  std::vector<json> items;
  for (const std::string& m : o.metrics) {
    if (m == "bleu") emit(bleu.corpus_score(hyps, refs), items);
    else if (m == "chrf") emit(chrf.corpus_score(hyps, refs), items);
    else emit(ter.corpus_score(hyps, refs), items);
  }
  if (o.json) print(pack(std::move(items)).dump(1) + "\n");
}

// What sentence level and the paired tests need of the number of systems.
void check_system_count(const BleuCommandOptions& o, size_t n_systems) {
  const bool paired = o.paired_bs || o.paired_ar;
  if (o.sentence) {
    if (n_systems > 1) throw UsageError("--sentence-level scores one system at a time");
    if (o.confidence || paired) throw UsageError("--sentence-level has no confidence intervals or paired tests");
  }
  if (paired && n_systems == 1)
    throw UsageError("--paired-bs / --paired-ar compare systems: give a baseline and at least one more system");
}

// Called as sacreBLEU is (`REF... -i SYS...`, `-t`, standard input), the output defaults as
// sacreBLEU's does: JSON for one system and for several. nmt's own `-r REF SYS` keeps nmt's
// one-line layout.
void print_scores(BleuCommandOptions& o, const BleuInputs& in, bool nmt_form) {
  if (!nmt_form && !o.format && !o.json && !o.sentence) o.format = "json";
  const bool sacrebleu_style = o.format || o.confidence || o.paired_bs || o.paired_ar || in.systems.size() > 1;
  ReportOptions r = report_options(o, sacrebleu_style, in.systems.size());
  r.unnamed_baseline = in.from_stdin;
  if (sacrebleu_style && !o.sentence) print(sacrebleu_report(in.systems, in.refs, r));
  else print_own_layout(o, r, in.systems[0].lines, in.refs);
}

}  // namespace

void run_bleu_command(BleuCommandOptions o) {
  if (o.version) {  // sacreBLEU prints "sacrebleu 2.6.0"
    print(fmt::format("nmt bleu (sacreBLEU {}'s metrics and command line)\n", kSacreBleuVersion));
    return finish_output();
  }
  check_against_table(o);
  refuse_unsupported(o);
  take_back_files_from_metrics(o);
  if (const char* env = std::getenv("SACREBLEU_FORMAT")) {  // sacreBLEU lets it override -f
    const std::string f = lower(env);
    if (f == "json" || f == "text" || f == "latex") o.format = f;
  }
  if (!o.echo.empty()) {
    if (o.test_set.empty() || o.language_pair.empty())
      throw UsageError("--echo needs a test set (-t) and a language pair (-l)");
    echo_test_set(o, stdout);
    return finish_output();
  }
  const bool nmt_form = !o.refs.empty();
  // Refused before any file is read, as sacreBLEU does; nmt's own form prints one line per
  // sentence and metric instead.
  if (o.sentence && !nmt_form && !o.json && o.metrics.size() > 1)
    throw UsageError("-sl/--sentence-level takes one metric in sacreBLEU's form, as sacreBLEU (\"Only one metric can "
                     "be used in sentence-level mode\"); nmt's form (-r REF HYP) scores several");
  const BleuInputs in = read_bleu_inputs(o);
  if (o.d2l_k) {
    if (in.systems.size() > 1) throw UsageError("--d2l-k scores one system");
    print_d2l(o, in.systems[0].lines, in.refs[0], in.ref_names[0]);
    return finish_output();
  }
  check_system_count(o, in.systems.size());
  print_scores(o, in, nmt_form);
  finish_output();
}

}  // namespace nmt::metrics
