// `nmt bleu`: corpus or sentence BLEU / chrF / TER of one or more systems against one or more
// reference files, reproducing the sacreBLEU 2.6.0 command line (same numbers, signatures,
// confidence intervals, paired tests and output), plus the non-standard "d2l" sentence BLEU.
// The printing of sacreBLEU's layouts lives in lib (metrics/sacrebleu_report.h).
#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <iterator>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <unistd.h>

#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "commands.h"
#include "nmt/metrics/bleu.h"
#include "nmt/metrics/chrf.h"
#include "nmt/metrics/sacrebleu_report.h"
#include "nmt/metrics/significance.h"
#include "nmt/metrics/ter.h"
#include "nmt/text/unicode.h"
#include "nmt/util/error.h"
#include "nmt/util/io.h"

namespace nmt::cli {
namespace {

using nlohmann::json;

struct BleuCliOptions {
  std::vector<std::string> refs;
  std::vector<std::string> positionals;  // systems; references when -i names the systems
  std::vector<std::string> inputs;       // -i: systems
  int num_refs = 1;
  std::vector<std::string> metrics{"bleu"};
  std::string tokenize;  // "": 13a, or what the language pair's target implies
  std::string language_pair;  // -l SRC-TGT, as sacreBLEU
  std::string test_set;       // -t: from sacreBLEU's local cache
  std::vector<std::string> echo;
  std::string encoding = "utf-8";
  bool lowercase = false;
  bool lowercase_by_l = false;  // `-l` without a language pair: nmt's old spelling of --lowercase
  bool lowercase_c = false;  // the "c" of "-lc" (CLI11 reads it as -l -c)
  std::string smooth_method = "exp";
  std::optional<double> smooth_value;
  bool sentence = false;
  int d2l_k = 0;
  bool json = false;
  std::string format;  // -f: "" keeps nmt's own layout for one system
  std::optional<int> width;
  bool score_only = false;
  bool short_signature = false;
  bool confidence = false;
  int confidence_n = 1000;
  bool paired_bs = false;
  bool paired_ar = false;
  int paired_bs_n = 1000;
  int paired_ar_n = 10000;
  int paired_jobs = 1;  // accepted for sacreBLEU's command lines; one process gives the same figures
  bool quiet = false, no_color = false, force = false;  // accepted: nmt never logs, colours or warns here
  // sacreBLEU's, refused in one line each (refuse_unsupported).
  bool list = false, citation = false, detail = false, version = false;
  std::string download, origlang, subset;
  bool ter_case_sensitive = false;
  bool ter_no_punct = false;
  bool ter_asian_support = false;
  bool ter_normalized = false;
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

void print(const std::string& s) { std::fwrite(s.data(), 1, s.size(), stdout); }

std::string lines(size_t n) { return fmt::format("{} line{}", n, n == 1 ? "" : "s"); }

bool is_metric(const std::string& name) { return name == "bleu" || name == "chrf" || name == "ter"; }


// A full disk or a closed pipe must not pass for success.
void finish_output() {
  if (std::fflush(stdout) != 0 || std::ferror(stdout))
    throw RuntimeError(fmt::format("writing the scores to standard output failed: {}", std::strerror(errno)));
}

std::vector<std::string> split_tabs(const std::string& s) {
  std::vector<std::string> fields;
  size_t start = 0;
  for (size_t tab; (tab = s.find('\t', start)) != std::string::npos; start = tab + 1) fields.push_back(s.substr(start, tab - start));
  fields.push_back(s.substr(start));
  return fields;
}

// The reference streams: one per file, or --num-refs tab-separated fields of one file.
std::vector<std::vector<std::string>> read_references(const std::vector<std::string>& paths, int num_refs) {
  if (num_refs < 1) throw UsageError(fmt::format("--num-refs must be at least 1, got {}", num_refs));
  if (num_refs > 1 && paths.size() > 1)
    throw UsageError("--num-refs splits one reference file on tabs; give a single reference file with it");
  std::vector<std::vector<std::string>> refs;
  if (num_refs == 1) {
    for (const std::string& r : paths) refs.push_back(read_segments(r));
    return refs;
  }
  refs.resize(static_cast<size_t>(num_refs));
  const std::vector<std::string> rows = read_segments(paths[0]);
  for (size_t i = 0; i < rows.size(); ++i) {
    std::vector<std::string> fields;
    size_t start = 0;
    while (fields.size() + 1 < static_cast<size_t>(num_refs)) {  // str.split('\t', maxsplit=n-1)
      size_t tab = rows[i].find('\t', start);
      if (tab == std::string::npos) break;
      fields.push_back(rows[i].substr(start, tab - start));
      start = tab + 1;
    }
    fields.push_back(rows[i].substr(start));
    if (fields.size() != static_cast<size_t>(num_refs))
      throw RuntimeError(fmt::format("{}:{}: expected {} tab-separated references, found {}", paths[0], i + 1,
                                     num_refs, fields.size()));
    for (size_t k = 0; k < fields.size(); ++k) refs[k].push_back(fields[k]);
  }
  return refs;
}

// sacreBLEU's BLEU._TOKENIZER_MAP: the tokenizer a target language implies when --tokenize
// is not given (ja-mecab and ko-mecab are then refused by parse_tokenizer, naming MeCab).
std::string tokenizer_for(const BleuCliOptions& o) {
  if (!o.tokenize.empty()) return o.tokenize;
  const std::string target = o.language_pair.substr(o.language_pair.find('-') + 1);
  if (o.language_pair.empty()) return "13a";
  if (target == "zh") return "zh";
  if (target == "ja") return "ja-mecab";
  if (target == "ko") return "ko-mecab";
  return "13a";
}

// Standard input as sacreBLEU reads it without -i: universal newlines, each line rstripped
// and split on tabs, one system per field (the first line sets how many).
std::vector<metrics::NamedSystem> read_stdin_systems() {
  if (::isatty(STDIN_FILENO))
    throw UsageError("no hypothesis: give -i HYP, or pipe the hypotheses (tab-separated systems) to standard input");
  std::string all((std::istreambuf_iterator<char>(std::cin)), std::istreambuf_iterator<char>());
  all = metrics::replace_all(metrics::replace_all(all, "\r\n", "\n"), "\r", "\n");
  if (all.empty()) throw RuntimeError("standard input: no hypothesis line");
  if (all.back() == '\n') all.pop_back();
  std::vector<metrics::NamedSystem> systems;
  size_t start = 0, line_no = 0;
  while (start <= all.size()) {
    const size_t end = std::min(all.find('\n', start), all.size());
    const std::string line(all, start, end - start);
    ++line_no;
    if (auto problem = text::find_utf8_error(line))
      throw RuntimeError(fmt::format("standard input:{}: invalid UTF-8 ({} at byte {} of the line)", line_no,
                                     problem->reason, problem->offset + 1));
    std::vector<std::string> fields = split_tabs(std::string(text::python_rstrip(line)));
    if (systems.empty())
      for (size_t k = 0; k < fields.size(); ++k) systems.push_back({fmt::format("System {}", k + 1), {}});
    if (fields.size() != systems.size())
      throw RuntimeError(fmt::format("standard input:{}: {} tab-separated systems, the first line has {}", line_no,
                                     fields.size(), systems.size()));
    for (size_t k = 0; k < fields.size(); ++k) systems[k].lines.push_back(std::string(text::python_rstrip(fields[k])));
    start = end + 1;
  }
  return systems;
}

// sacreBLEU's local cache: $SACREBLEU (default ~/.sacrebleu)/TEST/TEST.SRC-TGT.FIELD, the
// layout `sacrebleu -t TEST -l SRC-TGT` leaves there; '/' of a subset name becomes '_', ':'
// of a field name '-'. nmt reads these files and never downloads.
std::string sacrebleu_dir() {
  if (const char* env = std::getenv("SACREBLEU")) return env;
  const char* home = std::getenv("HOME");
  return std::string(home ? home : "") + "/.sacrebleu";
}

// The test set's fields present in the cache: src first, then the references, then the rest.
std::vector<std::pair<std::string, std::string>> test_set_fields(const std::string& test_set, const std::string& pair) {
  std::string name = metrics::replace_all(test_set, "/", "_");
  const std::filesystem::path dir = std::filesystem::path(sacrebleu_dir()) / test_set;
  const std::string prefix = name + "." + pair + ".";
  std::vector<std::pair<std::string, std::string>> fields;  // (field, path)
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(dir, ec)) {
    const std::string file = entry.path().filename().string();
    if (file.rfind(prefix, 0) == 0 && entry.is_regular_file()) fields.emplace_back(file.substr(prefix.size()), entry.path().string());
  }
  const auto rank = [](const std::string& f) { return f == "src" ? 0 : f.rfind("ref", 0) == 0 ? 1 : 2; };
  std::sort(fields.begin(), fields.end(), [&](const auto& a, const auto& b) {
    return std::make_pair(rank(a.first), a.first) < std::make_pair(rank(b.first), b.first);
  });
  if (fields.empty())
    throw RuntimeError(fmt::format("-t {} -l {}: no files {}/{}* in sacreBLEU's cache ($SACREBLEU, default ~/.sacrebleu); "
                                   "nmt never downloads: fetch them once with `sacrebleu -t {} -l {} --echo src`, or give reference files",
                                   test_set, pair, dir.string(), prefix, test_set, pair));
  return fields;
}

std::vector<std::string> split_commas(const std::string& s) {
  std::vector<std::string> parts;
  size_t start = 0;
  for (size_t comma; (comma = s.find(',', start)) != std::string::npos; start = comma + 1) parts.push_back(s.substr(start, comma - start));
  parts.push_back(s.substr(start));
  return parts;
}

// The reference files of every test set of -t (comma-separated: concatenated, as sacreBLEU does).
std::vector<std::vector<std::string>> test_set_references(const BleuCliOptions& o) {
  std::vector<std::vector<std::string>> refs;
  for (const std::string& test_set : split_commas(o.test_set)) {
    std::vector<std::string> paths;
    for (const auto& [field, path] : test_set_fields(test_set, o.language_pair))
      if (field.rfind("ref", 0) == 0) paths.push_back(path);
    if (paths.empty()) throw RuntimeError(fmt::format("-t {} -l {}: the cache holds no reference file", test_set, o.language_pair));
    if (refs.empty()) refs.resize(paths.size());
    if (paths.size() != refs.size())
      throw RuntimeError(fmt::format("-t {}: {} references, the first test set has {}", test_set, paths.size(), refs.size()));
    for (size_t k = 0; k < paths.size(); ++k) {
      std::vector<std::string> lines = read_segments(paths[k]);
      refs[k].insert(refs[k].end(), lines.begin(), lines.end());
    }
  }
  return refs;
}

// --echo FIELD...: the fields of the test set side by side, tab-separated (utils.print_test_set).
void echo_test_set(const BleuCliOptions& o) {
  for (const std::string& test_set : split_commas(o.test_set)) {
    const auto fields = test_set_fields(test_set, o.language_pair);
    std::vector<std::string> wanted = o.echo;
    if (wanted.size() == 1 && wanted[0] == "all") {
      wanted.clear();
      for (const auto& f : fields) wanted.push_back(f.first);
    } else if (std::find(wanted.begin(), wanted.end(), "all") != wanted.end()) {
      throw UsageError("--echo all cannot be combined with other fields");
    }
    std::vector<std::vector<std::string>> columns;
    for (std::string w : wanted) {
      const auto has = [&](const std::string& name) {
        return std::find_if(fields.begin(), fields.end(), [&](const auto& f) { return f.first == name; });
      };
      if (w == "ref" && has("ref") == fields.end()) {  // backwards compatibility: the first reference
        for (const auto& f : fields)
          if (f.first.rfind("ref", 0) == 0) { w = f.first; break; }
      }
      const auto it = has(w);
      if (it == fields.end()) {
        std::string names;
        for (const auto& f : fields) names += (names.empty() ? "" : ", ") + f.first;
        throw UsageError(fmt::format("--echo: no field {} in test set {} for {} (available: {})", w, test_set,
                                     o.language_pair, names));
      }
      columns.push_back(read_lines(it->second));
    }
    const size_t n = std::min_element(columns.begin(), columns.end(), [](const auto& a, const auto& b) {
                       return a.size() < b.size();
                     })->size();
    for (size_t i = 0; i < n; ++i) {
      std::string line;
      for (size_t k = 0; k < columns.size(); ++k) line += (k ? "\t" : "") + std::string(text::python_rstrip(columns[k][i]));
      print(line + "\n");
    }
  }
}

metrics::ReportOptions report_options(const BleuCliOptions& o, bool sacrebleu_style, size_t n_systems) {
  metrics::ReportOptions r;
  r.metrics = o.metrics;
  r.bleu.tokenize = metrics::parse_tokenizer(tokenizer_for(o));
  r.bleu.lowercase = o.lowercase || o.lowercase_c || o.lowercase_by_l;
  r.bleu.smooth_method = metrics::parse_smooth_method(o.smooth_method);
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
  r.json = o.format == "json" || (o.json && n_systems > 1);
  r.latex = o.format == "latex";
  // sacreBLEU prints one decimal; nmt's own one-system layout has always printed two.
  r.width = o.width.value_or(sacrebleu_style ? 1 : 2);
  if (r.width < 0 || r.width > 17) throw UsageError(fmt::format("--width must be in 0..17, got {}", r.width));
  r.score_only = o.score_only;
  r.short_signature = o.short_signature;
  r.confidence = o.confidence;
  if (o.confidence_n < 1) throw UsageError(fmt::format("--confidence-n must be at least 1, got {}", o.confidence_n));
  r.confidence_n = static_cast<size_t>(o.confidence_n);
  if (o.paired_bs && o.paired_ar) throw UsageError("--paired-bs and --paired-ar exclude each other");
  r.paired = o.paired_bs ? metrics::PairedTest::kBootstrap
             : o.paired_ar ? metrics::PairedTest::kApproximateRandomization
                           : metrics::PairedTest::kNone;
  if (o.paired_bs_n < 0 || o.paired_ar_n < 0) throw UsageError("--paired-bs-n and --paired-ar-n must be >= 0");
  r.paired_bs_n = static_cast<size_t>(o.paired_bs_n);
  r.paired_ar_n = static_cast<size_t>(o.paired_ar_n);
  if (o.confidence || r.paired != metrics::PairedTest::kNone) r.seed = metrics::test_seed_from_environment();
  return r;
}

// The "Dive into Deep Learning" sentence BLEU: not sacreBLEU, labelled as such everywhere.
void print_d2l(const BleuCliOptions& o, const std::vector<std::string>& hyps, const std::vector<std::string>& refs,
               const std::string& ref_path) {
  std::vector<double> scores;
  double sum = 0.0;
  for (size_t i = 0; i < hyps.size(); ++i) {
    scores.push_back(metrics::d2l_bleu(hyps[i], refs[i], o.d2l_k));
    sum += scores.back();
  }
  const double mean = sum / static_cast<double>(scores.size());
  const std::string note = "non-standard: sentence BLEU of the Dive into Deep Learning book, "
                           "not comparable with sacreBLEU; scale 0..1; first reference only";
  if (o.json) {
    json j = {{"name", "d2l-bleu"}, {"non_standard", true}, {"note", note}, {"k", o.d2l_k},
              {"reference", ref_path}, {"scores", scores}, {"mean", mean}};
    print(j.dump(1) + "\n");
    return;
  }
  const int decimals = o.width.value_or(2) + 2;
  print(fmt::format("# d2l-bleu k={} ({}; reference {})\n", o.d2l_k, note, ref_path));
  for (size_t i = 0; i < scores.size(); ++i) print(fmt::format("{}\t{:.{}f}\n", i + 1, scores[i], decimals));
  print(fmt::format("d2l-bleu(k={}, non-standard) mean = {:.{}f} over {} lines\n", o.d2l_k, mean, decimals,
                    scores.size()));
}

std::string score_name(const metrics::BleuScore&) { return "BLEU"; }
std::string score_name(const metrics::ChrfScore& s) { return s.name; }
std::string score_name(const metrics::TerScore&) { return "TER"; }

// nmt's own layout for one system: one line (or JSON object) per metric, in -m order; with
// --sentence-level one per line and metric.
void print_own_layout(const BleuCliOptions& o, const metrics::ReportOptions& r, const std::vector<std::string>& hyps,
                      const std::vector<std::vector<std::string>>& refs) {
  const metrics::BleuScorer bleu(r.bleu);
  const metrics::ChrfScorer chrf(r.chrf);
  const metrics::TerScorer ter(r.ter);
  // One metric -> a JSON object, several -> a list (per line with --sentence).
  const auto pack = [](std::vector<json> items) { return items.size() == 1 ? items[0] : json(items); };
  const auto emit = [&](auto score, std::vector<json>& items) {
    if (o.json) return items.push_back(score);
    if (r.score_only) return print(fmt::format("{:.{}f}\n", score.score, r.width));
    if (r.short_signature) score.signature = metrics::short_signature(score.signature, score_name(score));
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

// sacreBLEU options that need its test-set registry or downloads: one line each, naming why.
void refuse_unsupported(const BleuCliOptions& o) {
  const auto refuse = [](bool given, const char* what) {
    if (given) throw UsageError(what);
  };
  refuse(o.list, "--list is not supported: nmt has no registry of sacreBLEU's test sets (use `sacrebleu --list`)");
  refuse(!o.download.empty(), "--download is not supported: nmt never downloads (use `sacrebleu --download`); -t reads what sacreBLEU's cache holds");
  refuse(o.citation, "--citation is not supported: nmt has no registry of sacreBLEU's test sets (use `sacrebleu --citation`)");
  refuse(!o.origlang.empty() || !o.subset.empty(),
         "--origlang/--subset are not supported: they need the raw WMT files of sacreBLEU's registry");
  refuse(o.detail, "--detail is not supported: it needs the raw WMT files of sacreBLEU's registry");
  std::string enc = o.encoding;
  for (char& c : enc) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  refuse(enc != "utf-8" && enc != "utf8", "--encoding: nmt reads UTF-8 only (invalid UTF-8 is an error naming file and line)");
  if (!o.language_pair.empty()) {
    const size_t dash = o.language_pair.find('-');
    if (dash == 0 || dash == std::string::npos || dash + 1 == o.language_pair.size())
      throw UsageError(fmt::format("--language-pair must be SRC-TGT (e.g. en-de), got '{}'", o.language_pair));
  }
}

// The systems: -i files, the positional files of nmt's `-r REF HYP...`, or standard input.
std::vector<metrics::NamedSystem> read_systems(const std::vector<std::string>& paths, bool paired) {
  if (paths.empty()) return read_stdin_systems();
  std::vector<metrics::NamedSystem> systems;
  for (const std::string& path : paths) {
    if (std::any_of(systems.begin(), systems.end(), [&](const auto& s) { return s.name == path; })) {
      if (paired && path == systems[0].name) continue;  // the baseline named again, as sacreBLEU skips it
      throw UsageError(fmt::format("{}: the same file is given twice as a system", path));
    }
    systems.push_back(metrics::NamedSystem{path, read_segments(path)});
    if (systems.back().lines.empty())
      throw RuntimeError(fmt::format("{}: the hypothesis file contains no line", path));
  }
  return systems;
}

void check_line_counts(const std::vector<metrics::NamedSystem>& systems,
                       const std::vector<std::vector<std::string>>& refs, const std::vector<std::string>& ref_names) {
  for (const metrics::NamedSystem& s : systems)
    for (size_t k = 0; k < refs.size(); ++k)
      if (refs[k].size() != s.lines.size())
        throw UsageError(fmt::format("line counts differ: hypothesis {} has {}, reference {} has {}", s.name,
                                     lines(s.lines.size()), ref_names[std::min(k, ref_names.size() - 1)],
                                     lines(refs[k].size())));
}

void take_back_files_from_metrics(BleuCliOptions& o) {
  // `-m bleu chrf HYP...` lets the metric list swallow the files; take back the trailing
  // entries that name files (an unknown metric name stays, to be reported as such).
  while (o.metrics.size() > 1 && !is_metric(o.metrics.back()) && std::filesystem::exists(o.metrics.back())) {
    o.positionals.insert(o.positionals.begin(), o.metrics.back());
    o.metrics.pop_back();
  }
  for (const std::string& m : o.metrics)
    if (!is_metric(m)) throw UsageError(fmt::format("--metrics: unknown metric '{}' (expected bleu, chrf, ter)", m));
}

void run_bleu(BleuCliOptions o) {
  if (o.version) {  // sacreBLEU prints "sacrebleu 2.6.0"
    print(fmt::format("nmt bleu (sacreBLEU {}'s metrics and command line)\n", metrics::kSacreBleuVersion));
    return finish_output();
  }
  if (o.lowercase_by_l)
    std::fprintf(stderr, "nmt: warning: `-l` alone as --lowercase is deprecated: sacreBLEU's -l is --language-pair "
                         "SRC-TGT; use -lc or --lowercase\n");
  refuse_unsupported(o);
  take_back_files_from_metrics(o);
  if (const char* env = std::getenv("SACREBLEU_FORMAT")) {  // sacreBLEU lets it override -f
    std::string f(env);
    for (char& c : f) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    if (f == "json" || f == "text" || f == "latex") o.format = f;
  }
  if (!o.echo.empty()) {
    if (o.test_set.empty() || o.language_pair.empty())
      throw UsageError("--echo needs a test set (-t) and a language pair (-l)");
    echo_test_set(o);
    return finish_output();
  }
  // sacreBLEU's `REF... -i SYS...` (or `REF... < HYP`), `-t TEST -l PAIR -i SYS`, or nmt's `-r REF ... SYS...`.
  const bool nmt_form = !o.refs.empty();
  // Refused before any file is read, as sacreBLEU does; nmt's own form prints one line per
  // sentence and metric instead.
  if (o.sentence && !nmt_form && !o.json && o.metrics.size() > 1)
    throw UsageError("-sl/--sentence-level takes one metric in sacreBLEU's form, as sacreBLEU (\"Only one metric can "
                     "be used in sentence-level mode\"); nmt's form (-r REF HYP) scores several");
  std::vector<std::string> ref_paths = o.refs;
  std::vector<std::string> system_paths = o.inputs;
  if (nmt_form && o.inputs.empty()) system_paths = o.positionals;
  else ref_paths.insert(ref_paths.end(), o.positionals.begin(), o.positionals.end());
  if (nmt_form && system_paths.empty()) throw UsageError("no hypothesis file: give HYP or -i HYP");
  std::vector<std::vector<std::string>> refs;
  std::vector<std::string> ref_names = ref_paths;
  if (!o.test_set.empty()) {
    if (!ref_paths.empty()) throw UsageError("give either a test set (-t) or reference files, not both");
    if (o.language_pair.empty()) throw UsageError("-t needs a language pair (-l SRC-TGT)");
    if (o.num_refs != 1) throw UsageError("--num-refs splits a reference file of one's own; it does not go with -t");
    refs = test_set_references(o);
    ref_names.assign(refs.size(), "of -t " + o.test_set);
  } else {
    if (ref_paths.empty()) throw UsageError("no reference file: give REF (or -r REF), or a test set with -t");
    refs = read_references(ref_paths, o.num_refs);
    if (o.num_refs > 1) ref_names.assign(refs.size(), ref_paths[0]);
  }
  const bool paired = o.paired_bs || o.paired_ar;
  const bool from_stdin = system_paths.empty();
  const std::vector<metrics::NamedSystem> systems = read_systems(system_paths, paired);
  check_line_counts(systems, refs, ref_names);

  if (o.d2l_k > 0) {
    if (systems.size() > 1) throw UsageError("--d2l-k scores one system");
    print_d2l(o, systems[0].lines, refs[0], ref_names[0]);
    return finish_output();
  }
  if (o.sentence) {
    if (systems.size() > 1) throw UsageError("--sentence-level scores one system at a time");
    if (o.confidence || paired) throw UsageError("--sentence-level has no confidence intervals or paired tests");
  }
  if (paired && systems.size() == 1)
    throw UsageError("--paired-bs / --paired-ar compare systems: give a baseline and at least one more system");
  // Called as sacreBLEU is (`REF... -i SYS...`, `-t`, standard input), the output defaults as
  // sacreBLEU's does: JSON for one system and for several. nmt's own `-r REF SYS` keeps nmt's
  // one-line layout.
  if (!nmt_form && o.format.empty() && !o.json && !o.sentence) o.format = "json";
  const bool sacrebleu_style = !o.format.empty() || o.confidence || paired || systems.size() > 1;
  const bool sacrebleu_layout = sacrebleu_style && !o.sentence;
  metrics::ReportOptions r = report_options(o, sacrebleu_style, systems.size());
  r.unnamed_baseline = from_stdin;
  if (sacrebleu_layout) print(metrics::sacrebleu_report(systems, refs, r));
  else print_own_layout(o, r, systems[0].lines, refs);
  finish_output();
}

}  // namespace

void add_bleu_command(CLI::App& app) {
  auto o = std::make_shared<BleuCliOptions>();
  auto* cmd = app.add_subcommand(
      "bleu",
      "Score systems against references with BLEU, chrF and TER, identical to sacreBLEU 2.6.0 "
      "(`sacrebleu REF... -i SYS... -m bleu chrf ter`), with its confidence intervals and paired tests; "
      "lines are split on \\n and rstripped");
  cmd->add_option("files", o->positionals,
                  "System files (one segment per line; the first is the baseline of paired tests), or the "
                  "reference files when -i names the systems");
  cmd->add_option("-i,--input", o->inputs, "System file(s), as sacreBLEU's -i (the positional files are then references)")
      ->expected(1, -1)
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
  cmd->add_option("-r,--ref", o->refs, "Reference file; repeat -r for several references")
      ->allow_extra_args(false)
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
  cmd->add_option("--num-refs", o->num_refs, "Split the reference file on tabs into this many references")
      ->capture_default_str();
  cmd->add_option("-m,--metrics", o->metrics, "Metrics to compute: bleu, chrf, ter (default: bleu)")
      ->expected(1, -1)
      ->delimiter(',')
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
  cmd->add_option("--tokenize,--tok", o->tokenize,
                  "BLEU tokenizer: 13a (default), intl, zh, char, none; without it, -l's target language zh "
                  "implies zh (ja and ko imply MeCab's tokenizers, which nmt refuses)");
  cmd->add_flag("--lowercase", o->lowercase, "Lowercase before BLEU (Python str.lower); -lc also works");
  cmd->add_flag("--lowercase-by-l", o->lowercase_by_l, "`-l` not followed by SRC-TGT (deprecated: use -lc)")->group("");
  // (-l reaches CLI11 as --language-pair or --lowercase-by-l: expand_sacrebleu_options decides.)
  cmd->add_option("-l,--language-pair", o->language_pair,
                  "SRC-TGT, as sacreBLEU's: picks -t's files and, without --tokenize, the tokenizer of the target "
                  "language; -l not followed by a pair is the deprecated --lowercase");
  cmd->add_option("-t,--test-set", o->test_set,
                  "Test set(s), comma-separated, read from sacreBLEU's local cache ($SACREBLEU or ~/.sacrebleu); "
                  "needs -l; nmt never downloads");
  cmd->add_option("--echo", o->echo, "With -t and -l: print these fields of the test set (src, ref, ..., all) and exit")
      ->expected(1, -1);
  cmd->add_option("-e,--encoding", o->encoding, "Input encoding: utf-8 only (others are refused)")->capture_default_str();
  cmd->add_flag("--list", o->list, "sacreBLEU's; refused (nmt has no test-set registry)")->group("");
  cmd->add_flag("--citation,--cite", o->citation, "sacreBLEU's; refused (nmt has no test-set registry)")->group("");
  cmd->add_option("--download", o->download, "sacreBLEU's; refused (nmt never downloads)")->group("");
  cmd->add_option("--origlang", o->origlang, "sacreBLEU's; refused (needs the raw WMT files)")->group("");
  cmd->add_option("--subset", o->subset, "sacreBLEU's; refused (needs the raw WMT files)")->group("");
  cmd->add_flag("-V,--version", o->version, "Print the sacreBLEU version whose figures nmt bleu reproduces");
  cmd->add_flag("-d,--detail", o->detail, "sacreBLEU's; refused (needs the raw WMT files)")->group("");
  cmd->add_flag("-c", o->lowercase_c, "Second letter of -lc")->group("");
  cmd->add_flag("--force", o->force, "Accepted for sacreBLEU compatibility (nmt does not warn)")->group("");
  cmd->add_option("--smooth-method,-s", o->smooth_method, "BLEU smoothing")
      ->check(CLI::IsMember({"exp", "floor", "add-k", "none"}))
      ->capture_default_str();
  cmd->add_option("--smooth-value", o->smooth_value, "Value for floor (default 0.1) and add-k (default 1)");
  cmd->add_flag("--sentence,--sentence-level", o->sentence,
                "One score per line (BLEU with effective order, as sacrebleu.sentence_bleu); -sl also works");
  cmd->add_option("--d2l-k", o->d2l_k,
                  "Print the Dive into Deep Learning book's sentence BLEU with max order K per line and its "
                  "mean instead (NON-STANDARD, 0..1, first reference only)")
      ->check(CLI::Range(1, 100));
  cmd->add_flag("--json", o->json, "nmt's JSON output for one system (full precision; a list when several metrics)");
  cmd->add_option("-f,--format", o->format,
                  "sacreBLEU's output: text, json or latex (one system: aligned score lines; several: its table, "
                  "latex as booktabs)")
      ->check(CLI::IsMember({"text", "json", "latex"}));
  cmd->add_option("-w,--width", o->width,
                  "Decimals of the scores (default 2 in nmt's one-system layout, 1 in sacreBLEU's layouts)");
  cmd->add_flag("-b,--score-only", o->score_only, "Print only the scores (sacreBLEU's layouts)");
  cmd->add_flag("--short", o->short_signature, "Shorter signatures (sacreBLEU's -sh)");
  cmd->add_option("--chrf-char-order", o->chrf_char_order, "chrF character n-gram order")->capture_default_str();
  cmd->add_option("--chrf-word-order", o->chrf_word_order, "chrF word n-gram order (2: chrF++)")
      ->capture_default_str();
  cmd->add_option("--chrf-beta", o->chrf_beta, "chrF beta")->capture_default_str();
  cmd->add_flag("--chrf-lowercase", o->chrf_lowercase, "Lowercase before chrF");
  cmd->add_flag("--chrf-whitespace", o->chrf_whitespace, "Keep whitespace in chrF character n-grams");
  cmd->add_flag("--chrf-eps-smoothing", o->chrf_eps_smoothing, "chrF++.py-style epsilon smoothing");
  cmd->add_flag("--ter-case-sensitive", o->ter_case_sensitive, "TER: keep case (default: lowercase)");
  cmd->add_flag("--ter-no-punct", o->ter_no_punct, "TER: remove punctuation");
  cmd->add_flag("--ter-asian-support", o->ter_asian_support, "TER: split CJK characters / drop CJK punctuation");
  cmd->add_flag("--ter-normalized", o->ter_normalized, "TER: Tercom's normalisation and punctuation tokenization");
  cmd->add_flag("--confidence", o->confidence, "Bootstrap 95% confidence interval (one system); seed: SACREBLEU_SEED");
  cmd->add_option("--confidence-n", o->confidence_n, "Bootstrap resamples for --confidence")->capture_default_str();
  cmd->add_flag("--paired-bs", o->paired_bs, "Paired bootstrap resampling of each system against the first");
  cmd->add_flag("--paired-ar", o->paired_ar, "Paired approximate randomisation of each system against the first");
  cmd->add_option("--paired-bs-n", o->paired_bs_n, "Resamples for --paired-bs")->capture_default_str();
  cmd->add_option("--paired-ar-n", o->paired_ar_n, "Trials for --paired-ar")->capture_default_str();
  cmd->add_option("-j,--paired-jobs", o->paired_jobs, "Accepted for sacreBLEU compatibility (one process)")
      ->group("");
  cmd->add_flag("-q,--quiet", o->quiet, "Accepted for sacreBLEU compatibility (nmt logs nothing here)")->group("");
  cmd->add_flag("--no-color", o->no_color, "Accepted for sacreBLEU compatibility (nmt never colours)")->group("");
  cmd->callback([o] { run_bleu(*o); });
}

// "en-de", "de-en", "en-zh"...: letters, one dash, letters (sacreBLEU's pairs; also "zh-yue"-like
// three-part codes have letters around every dash). Not a file name with a dot or a slash.
static bool is_language_pair(const std::string& s) {
  if (s.empty() || s.front() == '-' || s.back() == '-' || s.find('-') == std::string::npos) return false;
  return std::all_of(s.begin(), s.end(), [](char c) { return std::isalpha(static_cast<unsigned char>(c)) || c == '-'; });
}

std::vector<std::string> expand_sacrebleu_options(const std::vector<std::string>& args) {
  // sacreBLEU's short options of several letters, which CLI11 cannot name (it reads "-sl" as
  // "-s l"), spelled out after the `bleu` subcommand.
  static const std::vector<std::pair<std::string, std::string>> kAliases{
      {"-sl", "--sentence-level"}, {"-tok", "--tokenize"},    {"-lc", "--lowercase"},    {"-sv", "--smooth-value"},
      {"-cc", "--chrf-char-order"}, {"-cw", "--chrf-word-order"}, {"-ci", "--confidence"}, {"-cin", "--confidence-n"},
      {"-par", "--paired-ar"},     {"-pbs", "--paired-bs"},   {"-parn", "--paired-ar-n"}, {"-pbsn", "--paired-bs-n"},
      {"-sh", "--short"},          {"-nr", "--num-refs"},     {"-nc", "--no-color"},     {"-ol", "--origlang"}};
  std::vector<std::string> out;
  bool in_bleu = false;
  for (const std::string& a : args) {
    if (!in_bleu) {
      in_bleu = a == "bleu";
      out.push_back(a);
      continue;
    }
    if (a == "-l") {  // sacreBLEU's -l SRC-TGT; nmt's older -l (lowercase) when no pair follows
      const size_t i = &a - args.data();
      const bool pair_follows = i + 1 < args.size() && is_language_pair(args[i + 1]);
      out.push_back(pair_follows ? "--language-pair" : "--lowercase-by-l");
      continue;
    }
    auto it = std::find_if(kAliases.begin(), kAliases.end(), [&](const auto& p) { return p.first == a; });
    out.push_back(it == kAliases.end() ? a : it->second);
  }
  return out;
}

}  // namespace nmt::cli
