#pragma once
// `nmt report`: one self-contained HTML page comparing training runs. The page is also
// well-formed XML (every element closed, everything escaped), so tests can parse it.
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace nmt::viz {

struct EvalResult {  // one line of DIR/evals.jsonl, written by `nmt eval`
  std::string test_set;
  double bleu = 0, chrf = 0;
  std::string bleu_signature, chrf_signature;
  int64_t beam = 1;
};

struct ExampleTranslation {
  std::string hypothesis;
  double sentence_bleu = 0;
};

struct RunSummary {
  std::string name, dir, model_type;
  nlohmann::json config;  // config.json of the model directory
  // The "model" keys of its architecture's sizes (models::Architecture::size_fields); the
  // configuration table shows only these of the sizes, "–" for another architecture's.
  std::vector<std::string> size_fields;
  int64_t parameters = 0;
  int64_t steps = 0;
  double train_seconds = 0, tokens_per_s = 0, best_valid_bleu = -1;
  std::vector<EvalResult> evals;
  std::vector<ExampleTranslation> examples;  // same order as RunReport::example_sources
  std::vector<std::string> attention_svgs;   // heatmaps of the first examples
};

struct RunReport {
  std::string title = "nmt run report";
  std::vector<RunSummary> runs;
  std::string curves_svg;
  std::vector<std::string> example_sources, example_references;
  std::string examples_from;  // where the examples come from, e.g. the validation file
};

// Latest result per (test set, beam) from DIR/evals.jsonl; none when the file is absent.
std::vector<EvalResult> read_eval_results(const std::string& dir);

// Training summary numbers from metrics.jsonl entries (steps, wall time, mean tokens/s, best BLEU).
void summarize_metrics(const std::vector<nlohmann::json>& train, const std::vector<nlohmann::json>& valid, RunSummary& out);

std::string render_report_html(const RunReport& report);

}  // namespace nmt::viz
