// `nmt report`: one self-contained HTML page comparing runs: configuration, parameters, speed,
// validation and test scores, curves, attention heatmaps and example translations.
#include <filesystem>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "commands.h"
#include "option_binder.h"
#include "nmt/data/corpus.h"
#include "nmt/decode/torch_decoder.h"
#include "nmt/metrics/bleu.h"
#include "nmt/models/architecture.h"
#include "nmt/tensor/threads.h"
#include "nmt/util/error.h"
#include "nmt/util/io.h"
#include "nmt/util/runtime_options.h"
#include "nmt/viz/heatmap.h"
#include "nmt/viz/options.h"
#include "nmt/viz/plot.h"
#include "nmt/viz/report.h"

namespace nmt::cli {

namespace {

// The first `n` validation pairs of the run's own configuration (train.valid_prefix or valid_tsv).
bool examples_from_config(const nlohmann::json& config, size_t n, std::vector<std::string>& src,
                          std::vector<std::string>& ref, std::string& from) {
  if (!config.contains("train")) return false;
  const auto& t = config["train"];
  const std::string prefix = t.value("valid_prefix", ""), tsv = t.value("valid_tsv", "");
  const std::string sl = t.value("src_lang", "en"), tl = t.value("tgt_lang", "fr");
  // The project's corpus readers: same BOM/CRLF handling and bad-line skipping as training.
  data::ParallelCorpus corpus;
  if (!prefix.empty() && std::filesystem::exists(prefix + "." + sl) && std::filesystem::exists(prefix + "." + tl)) {
    corpus = data::read_parallel(prefix, sl, tl).corpus;
    from = prefix + "." + sl;
  } else if (!tsv.empty() && std::filesystem::exists(tsv)) {
    corpus = data::read_tsv(tsv).corpus;
    from = tsv;
  } else {
    return false;
  }
  src = std::move(corpus.source);
  ref = std::move(corpus.target);
  src.resize(std::min(src.size(), n));
  ref.resize(std::min(ref.size(), n));
  return true;
}

// The example sentences given with --src and --ref, the first --examples of them.
void read_given_examples(const viz::ReportOptions& o, viz::RunReport& report) {
  report.example_sources = read_lines(o.example_src);
  report.example_references = read_lines(o.example_ref);
  if (report.example_sources.size() != report.example_references.size())
    throw UsageError(fmt::format("{} has {} lines but {} has {}", o.example_src, report.example_sources.size(),
                                 o.example_ref, report.example_references.size()));
  report.example_sources.resize(std::min(report.example_sources.size(), o.examples));
  report.example_references.resize(report.example_sources.size());
  report.examples_from = o.example_src;
}

// One run's column: its configuration, size, scores, and its translations of the examples with
// the attention heatmaps of the first `heatmaps`.
viz::RunSummary summarize_run(const std::string& dir, const viz::RunMetrics& curves, models::LoadedModel loaded,
                              const viz::RunReport& report, size_t heatmaps) {
  viz::RunSummary run;
  run.name = curves.name;
  run.dir = dir;
  run.model_type = loaded.model_config.type;
  run.size_fields = models::architecture(run.model_type).size_fields;
  run.config = loaded.config;
  run.parameters = models::count_parameters(*loaded.model);
  viz::summarize_metrics(curves.train, curves.valid, run);
  run.evals = viz::read_eval_results(dir);
  std::vector<models::LoadedModel> one;
  one.push_back(std::move(loaded));
  decode::Translator translator = decode::make_torch_translator(std::move(one));
  decode::DecodeOptions d;
  d.record_attention = true;
  std::vector<decode::Hypothesis> hyps;
  const auto outs = translator.translate_greedy(report.example_sources, d, nullptr, &hyps);
  for (size_t i = 0; i < outs.size(); ++i) {
    const std::string& reference = report.example_references[i];
    run.examples.push_back({outs[i], metrics::sentence_bleu(outs[i], {reference}).score});
    if (i < heatmaps && !hyps[i].attention.empty()) {
      const auto m = translator.attention_map(hyps[i], report.example_sources[i]);
      run.attention_svgs.push_back(viz::attention_svg(m, fmt::format("{}: example {}", run.name, i + 1)));
    }
  }
  return run;
}

}  // namespace

void add_report_command(CLI::App& app) {
  auto* cmd = app.add_subcommand("report", "Write one self-contained HTML page comparing runs");
  auto own = std::make_shared<OptionBinder<viz::ReportOptions>>(cmd, viz::report_option_specs());
  auto runtime = std::make_shared<OptionBinder<RuntimeOptions>>(cmd, runtime_option_specs(), RuntimeOptions{},
                                                                OptionUse{{"threads"}, {}, {}});
  cmd->callback([own, runtime] {
    const viz::ReportOptions o = own->checked();
    if (o.example_src.empty() != o.example_ref.empty()) throw UsageError("--src and --ref go together");
    set_threads(runtime->checked().threads);
    viz::RunReport report;
    report.title = o.title;
    std::vector<viz::RunMetrics> metrics;
    for (const auto& d : o.dirs) metrics.push_back(viz::read_run_metrics(d));
    report.curves_svg = viz::render_panels_svg(viz::training_curves(metrics, viz::XAxis::kStep), 430, 300);
    if (!o.example_src.empty()) read_given_examples(o, report);
    for (size_t r = 0; r < o.dirs.size(); ++r) {
      auto loaded = models::load_model(o.dirs[r]);
      if (r == 0 && o.example_src.empty())
        examples_from_config(loaded.config, o.examples, report.example_sources, report.example_references,
                             report.examples_from);
      report.runs.push_back(summarize_run(o.dirs[r], metrics[r], std::move(loaded), report, o.heatmaps));
    }
    write_file_atomic(o.output, viz::render_report_html(report));
    std::fprintf(stderr, "report on %zu run(s) written to %s\n", report.runs.size(), o.output.c_str());
  });
}

}  // namespace nmt::cli
