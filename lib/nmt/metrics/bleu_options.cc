#include "nmt/metrics/bleu_options.h"

#include <cstdint>
#include <limits>

namespace nmt::metrics {

namespace {
constexpr long double kNoLimit = std::numeric_limits<int64_t>::max();  // "at least N" in messages
constexpr const char* kRefused = "sacreBLEU's; refused (needs the raw WMT files)";
constexpr const char* kNoRegistry = "sacreBLEU's; refused (nmt has no test-set registry)";
}  // namespace

namespace {
using O = BleuCommandOptions;

// The files, the metrics, tokenization and casing, and sacreBLEU's test-set options (refused
// here): the first half of sacreBLEU's --help.
std::vector<OptionSpec<O>> input_and_output_rows() {
  return {
      list_option("files", "files", "",
                  "System files (one segment per line; the first is the baseline of paired tests), or the "
                  "reference files when -i names the systems",
                  &O::positionals),
      list_option("input", "-i,--input", "",
                  "System file(s), as sacreBLEU's -i (the positional files are then references)", &O::inputs),
      list_option("ref", "-r,--ref", "", "Reference file; repeat -r for several references", &O::refs)
          .one_value_per_flag(),
      option("num_refs", "--num-refs", "", "Split the reference file on tabs into this many references", &O::num_refs)
          .range(1, kNoLimit),
      list_option("metrics", "-m,--metrics", "", "Metrics to compute: bleu, chrf, ter (default: bleu)", &O::metrics)
          .split_on(','),
      option("tokenize", "--tokenize,--tok", "",
             "BLEU tokenizer: 13a (default), intl, zh, char, none; without it, -l's target language zh "
             "implies zh (ja and ko imply MeCab's tokenizers, which nmt refuses)",
             &O::tokenize),
      option("lowercase", "--lowercase", "", "Lowercase before BLEU (Python str.lower); -lc also works", &O::lowercase)
          .as_switch(),
      // -l reaches CLI11 as --language-pair or --lowercase-by-l: expand_sacrebleu_options decides.
      option("lowercase_by_l", "--lowercase-by-l", "", "`-l` not followed by SRC-TGT (deprecated: use -lc)",
             &O::lowercase_by_l)
          .as_switch()
          .is_hidden(),
      option("language_pair", "-l,--language-pair", "",
             "SRC-TGT, as sacreBLEU's: picks -t's files and, without --tokenize, the tokenizer of the target "
             "language; -l not followed by a pair is the deprecated --lowercase",
             &O::language_pair),
      option("test_set", "-t,--test-set", "",
             "Test set(s), comma-separated, read from sacreBLEU's local cache ($SACREBLEU or ~/.sacrebleu); "
             "needs -l; nmt never downloads",
             &O::test_set),
      list_option("echo", "--echo", "",
                  "With -t and -l: print these fields of the test set (src, ref, ..., all) and exit", &O::echo),
      option("encoding", "-e,--encoding", "", "Input encoding: utf-8 only (others are refused)", &O::encoding),
      option("list", "--list", "", kNoRegistry, &O::list).as_switch().is_hidden(),
      option("citation", "--citation,--cite", "", kNoRegistry, &O::citation).as_switch().is_hidden(),
      option("download", "--download", "", "sacreBLEU's; refused (nmt never downloads)", &O::download).is_hidden(),
      option("origlang", "--origlang", "", kRefused, &O::origlang).is_hidden(),
      option("subset", "--subset", "", kRefused, &O::subset).is_hidden(),
      option("version", "-V,--version", "", "Print the sacreBLEU version whose figures nmt bleu reproduces",
             &O::version)
          .as_switch(),
      option("detail", "-d,--detail", "", kRefused, &O::detail).as_switch().is_hidden(),
      option("lowercase_c", "-c", "", "Second letter of -lc", &O::lowercase_c).as_switch().is_hidden(),
      option("force", "--force", "", "Accepted for sacreBLEU compatibility (nmt does not warn)", &O::force)
          .as_switch()
          .is_hidden(),
  };
}

// BLEU's smoothing and sentence scores, the output's layout, chrF's and TER's settings,
// confidence intervals and paired tests: the second half. The choices of -s and -f and the range of --d2l-k are checked as the command
// line is read (checked_when_read), as they were before the table, so --help and those errors
// keep CLI11's words; the other ranges are checked before any work.
std::vector<OptionSpec<O>> metric_rows() {
  return {
      option("smooth_method", "-s,--smooth-method", "", "BLEU smoothing", &O::smooth_method)
          .one_of({"exp", "floor", "add-k", "none"})
          .checked_when_read(),
      optional_option("smooth_value", "--smooth-value", "", "Value for floor (default 0.1) and add-k (default 1)",
                      &O::smooth_value),
      option("sentence", "--sentence,--sentence-level", "",
             "One score per line (BLEU with effective order, as sacrebleu.sentence_bleu); -sl also works",
             &O::sentence)
          .as_switch(),
      optional_option("d2l_k", "--d2l-k", "",
                      "Print the Dive into Deep Learning book's sentence BLEU with max order K per line and its "
                      "mean instead (NON-STANDARD, 0..1, first reference only)",
                      &O::d2l_k)
          .range(1, 100)
          .checked_when_read(),
      option("json", "--json", "", "nmt's JSON output for one system (full precision; a list when several metrics)",
             &O::json)
          .as_switch(),
      optional_option("format", "-f,--format", "",
                      "sacreBLEU's output: text, json or latex (one system: aligned score lines; several: its "
                      "table, latex as booktabs)",
                      &O::format)
          .one_of({"text", "json", "latex"})
          .checked_when_read(),
      optional_option("width", "-w,--width", "",
                      "Decimals of the scores (default 2 in nmt's one-system layout, 1 in sacreBLEU's layouts)",
                      &O::width)
          .range(0, 17),
      option("score_only", "-b,--score-only", "", "Print only the scores (sacreBLEU's layouts)", &O::score_only)
          .as_switch(),
      option("short", "--short", "", "Shorter signatures (sacreBLEU's -sh)", &O::short_signature).as_switch(),
      option("chrf_char_order", "--chrf-char-order", "", "chrF character n-gram order", &O::chrf_char_order),
      option("chrf_word_order", "--chrf-word-order", "", "chrF word n-gram order (2: chrF++)", &O::chrf_word_order),
      option("chrf_beta", "--chrf-beta", "", "chrF beta", &O::chrf_beta),
      option("chrf_lowercase", "--chrf-lowercase", "", "Lowercase before chrF", &O::chrf_lowercase).as_switch(),
      option("chrf_whitespace", "--chrf-whitespace", "", "Keep whitespace in chrF character n-grams",
             &O::chrf_whitespace)
          .as_switch(),
      option("chrf_eps_smoothing", "--chrf-eps-smoothing", "", "chrF++.py-style epsilon smoothing",
             &O::chrf_eps_smoothing)
          .as_switch(),
      option("ter_case_sensitive", "--ter-case-sensitive", "", "TER: keep case (default: lowercase)",
             &O::ter_case_sensitive)
          .as_switch(),
      option("ter_no_punct", "--ter-no-punct", "", "TER: remove punctuation", &O::ter_no_punct).as_switch(),
      option("ter_asian_support", "--ter-asian-support", "", "TER: split CJK characters / drop CJK punctuation",
             &O::ter_asian_support)
          .as_switch(),
      option("ter_normalized", "--ter-normalized", "", "TER: Tercom's normalisation and punctuation tokenization",
             &O::ter_normalized)
          .as_switch(),
      option("confidence", "--confidence", "",
             "Bootstrap 95% confidence interval (one system); seed: SACREBLEU_SEED", &O::confidence)
          .as_switch(),
      option("confidence_n", "--confidence-n", "", "Bootstrap resamples for --confidence", &O::confidence_n)
          .range(1, kNoLimit),
      option("paired_bs", "--paired-bs", "", "Paired bootstrap resampling of each system against the first",
             &O::paired_bs)
          .as_switch(),
      option("paired_ar", "--paired-ar", "", "Paired approximate randomisation of each system against the first",
             &O::paired_ar)
          .as_switch(),
      option("paired_bs_n", "--paired-bs-n", "", "Resamples for --paired-bs", &O::paired_bs_n).range(0, kNoLimit),
      option("paired_ar_n", "--paired-ar-n", "", "Trials for --paired-ar", &O::paired_ar_n).range(0, kNoLimit),
      option("paired_jobs", "-j,--paired-jobs", "", "Accepted for sacreBLEU compatibility (one process)",
             &O::paired_jobs)
          .is_hidden(),
      option("quiet", "-q,--quiet", "", "Accepted for sacreBLEU compatibility (nmt logs nothing here)", &O::quiet)
          .as_switch()
          .is_hidden(),
      option("no_color", "--no-color", "", "Accepted for sacreBLEU compatibility (nmt never colours)", &O::no_color)
          .as_switch()
          .is_hidden(),
  };
}
}  // namespace

// One group, in sacreBLEU's --help order.
const std::vector<OptionSpec<BleuCommandOptions>>& bleu_option_specs() {
  static const std::vector<OptionSpec<O>> specs = [] {
    std::vector<OptionSpec<O>> rows = input_and_output_rows();
    for (auto& row : metric_rows()) rows.push_back(std::move(row));
    return rows;
  }();
  return specs;
}

std::string bleu_flag_of(const std::string& key) {
  const OptionSpec<BleuCommandOptions>* spec = find_option(bleu_option_specs(), key);
  return spec ? spec->long_flag() : "'" + key + "'";
}

}  // namespace nmt::metrics
