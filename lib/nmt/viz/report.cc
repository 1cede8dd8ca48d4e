#include "nmt/viz/report.h"

#include <algorithm>
#include <filesystem>
#include <map>
#include <set>

#include <fmt/format.h>

#include "nmt/util/error.h"
#include "nmt/util/io.h"
#include "nmt/viz/plot.h"
#include "nmt/viz/progress.h"
#include "nmt/viz/svg.h"

namespace nmt::viz {

std::vector<EvalResult> read_eval_results(const std::string& dir) {
  const auto path = std::filesystem::path(dir) / "evals.jsonl";
  if (!std::filesystem::exists(path)) return {};
  std::map<std::pair<std::string, int64_t>, EvalResult> latest;
  std::vector<std::pair<std::string, int64_t>> order;
  for (const auto& [i, j] : read_json_lines(path.string())) {
    if (!j.contains("bleu") || !j.contains("test_set"))
      throw RuntimeError(fmt::format("{}:{}: not an eval record", path.string(), i));
    EvalResult r;
    try {
      r.test_set = j.at("test_set").get<std::string>();
      r.beam = j.value("beam", int64_t{1});
      r.bleu = j.at("bleu").at("score").get<double>();
      r.bleu_signature = j.at("bleu").value("signature", "");
      r.chrf = j.at("chrf").at("score").get<double>();
      r.chrf_signature = j.at("chrf").value("signature", "");
    } catch (const nlohmann::json::exception& e) {
      throw RuntimeError(fmt::format("{}:{}: not an eval record ({})", path.string(), i, e.what()));
    }
    auto key = std::make_pair(r.test_set, r.beam);
    if (!latest.count(key)) order.push_back(key);
    latest[key] = r;
  }
  std::vector<EvalResult> out;
  for (const auto& k : order) out.push_back(latest[k]);
  return out;
}

void summarize_metrics(const std::vector<nlohmann::json>& train, const std::vector<nlohmann::json>& valid, RunSummary& out) {
  double tps = 0;
  size_t n = 0;
  for (const auto& j : train) {
    out.steps = std::max<int64_t>(out.steps, j.value("step", int64_t{0}));
    out.train_seconds = std::max(out.train_seconds, j.value("wall_time", 0.0));
    if (j.contains("tokens_per_s") && j["tokens_per_s"].is_number()) {
      tps += j["tokens_per_s"].get<double>();
      ++n;
    }
  }
  for (const auto& j : valid) {
    out.steps = std::max<int64_t>(out.steps, j.value("step", int64_t{0}));
    out.train_seconds = std::max(out.train_seconds, j.value("wall_time", 0.0));
    if (j.contains("val_bleu") && j["val_bleu"].is_number()) out.best_valid_bleu = std::max(out.best_valid_bleu, j["val_bleu"].get<double>());
  }
  out.tokens_per_s = n ? tps / n : 0;
}

namespace {

std::string thousands(int64_t n) {
  std::string digits = std::to_string(n < 0 ? -n : n), out;
  for (size_t i = 0; i < digits.size(); ++i) {
    if (i > 0 && (digits.size() - i) % 3 == 0) out += ',';
    out += digits[i];
  }
  return n < 0 ? "-" + out : out;
}

std::string cell(const std::string& text) { return "<td>" + xml_escape(text) + "</td>"; }

bool has(const std::vector<std::string>& v, const std::string& x) { return std::find(v.begin(), v.end(), x) != v.end(); }

// The rows of the configuration table: the model's type, every run's architecture sizes (in the
// order the runs name them), the fields all models have, then the training options.
std::vector<std::pair<std::string, std::string>> config_rows(const std::vector<RunSummary>& runs) {
  std::vector<std::pair<std::string, std::string>> rows = {{"model", "type"}};
  std::vector<std::string> sizes;
  for (const auto& r : runs)
    for (const auto& f : r.size_fields)
      if (!has(sizes, f)) sizes.push_back(f);
  for (const auto& f : sizes) rows.emplace_back("model", f);
  for (const char* k : {"dropout", "src_vocab", "tgt_vocab", "shared_vocab"}) rows.emplace_back("model", k);
  for (const char* k : {"lr", "warmup", "lr_schedule", "max_tokens", "label_smoothing", "clip_norm", "subword_alpha", "seed",
                        "threads", "train_prefix", "train_tsv"})
    rows.emplace_back("train", k);
  return rows;
}

// A run's value of a row; "–" where it has none, or where the row is another architecture's size
// (its config.json holds every architecture's fields).
std::string config_value(const RunSummary& run, const std::string& section, const std::string& key,
                         const std::vector<RunSummary>& runs) {
  const nlohmann::json& config = run.config;
  if (!config.contains(section) || !config[section].contains(key)) return "–";
  bool another_architectures = false;
  for (const auto& r : runs) another_architectures |= has(r.size_fields, key);
  if (section == "model" && another_architectures && !has(run.size_fields, key)) return "–";
  const auto& v = config[section][key];
  if (v.is_string()) return v.get<std::string>();
  if (v.is_number_float()) return compact_number(v.get<double>(), 6);
  return v.dump();
}

}  // namespace

std::string render_report_html(const RunReport& report) {
  std::string h;
  h += "<!DOCTYPE html>\n<html xmlns=\"http://www.w3.org/1999/xhtml\" lang=\"en\"><head><meta charset=\"utf-8\"/>";
  h += "<title>" + xml_escape(report.title) + "</title>";
  h += R"(<style>
body { font-family: "DejaVu Sans", Arial, sans-serif; margin: 24px 32px; color: #222; max-width: 1400px; }
h1 { font-size: 24px; } h2 { font-size: 18px; margin-top: 32px; border-bottom: 1px solid #ddd; }
table { border-collapse: collapse; margin: 8px 0 16px; font-size: 13px; }
th, td { border: 1px solid #ccc; padding: 4px 8px; text-align: left; vertical-align: top; }
th { background: #f0f4f8; } td.num { text-align: right; font-variant-numeric: tabular-nums; }
.sig { font-family: monospace; font-size: 11px; color: #555; }
.heatmaps { display: flex; flex-wrap: wrap; gap: 16px; } .heatmaps figure { margin: 0; }
</style></head><body>)";
  h += "<h1>" + xml_escape(report.title) + "</h1>";

  // ---- summary table
  h += "<h2>Runs</h2><table id=\"summary\"><tr><th>run</th><th>model</th><th>parameters</th><th>updates</th>"
       "<th>training time</th><th>tokens/s</th><th>best validation BLEU</th></tr>";
  for (const auto& r : report.runs) {
    h += "<tr>" + cell(r.name) + cell(r.model_type) + "<td class=\"num\">" + thousands(r.parameters) + "</td>" +
         "<td class=\"num\">" + std::to_string(r.steps) + "</td>" + "<td class=\"num\">" + format_duration(r.train_seconds) +
         "</td>" + "<td class=\"num\">" + fmt::format("{:.0f}", r.tokens_per_s) + "</td>" + "<td class=\"num\">" +
         (r.best_valid_bleu >= 0 ? fmt::format("{:.2f}", r.best_valid_bleu) : "–") + "</td></tr>";
  }
  h += "</table>";

  // ---- test results
  h += "<h2>Test results (sacreBLEU)</h2>";
  bool any_eval = false;
  for (const auto& r : report.runs) any_eval |= !r.evals.empty();
  if (!any_eval) {
    h += "<p>No <code>nmt eval</code> results saved in these directories yet.</p>";
  } else {
    h += "<table id=\"evals\"><tr><th>run</th><th>test set</th><th>beam</th><th>BLEU</th><th>chrF</th><th>signature</th></tr>";
    for (const auto& r : report.runs)
      for (const auto& e : r.evals)
        h += "<tr>" + cell(r.name) + cell(e.test_set) + "<td class=\"num\">" + std::to_string(e.beam) + "</td><td class=\"num\">" +
             fmt::format("{:.2f}", e.bleu) + "</td><td class=\"num\">" + fmt::format("{:.2f}", e.chrf) +
             "</td><td class=\"sig\">" + xml_escape(e.bleu_signature) + "</td></tr>";
    h += "</table>";
  }

  // ---- curves
  h += "<h2>Training curves</h2><div class=\"curves\">" + report.curves_svg + "</div>";

  // ---- configuration
  h += "<h2>Configuration</h2><table id=\"config\"><tr><th>option</th>";
  for (const auto& r : report.runs) h += "<th>" + xml_escape(r.name) + "</th>";
  h += "</tr>";
  for (const auto& [section, key] : config_rows(report.runs)) {
    bool present = false;
    for (const auto& r : report.runs) present |= r.config.contains(section) && r.config[section].contains(key);
    if (!present) continue;
    h += "<tr><th>" + xml_escape(section + "." + key) + "</th>";
    for (const auto& r : report.runs) h += cell(config_value(r, section, key, report.runs));
    h += "</tr>";
  }
  h += "</table>";

  // ---- attention
  h += "<h2>Attention</h2>";
  for (const auto& r : report.runs) {
    if (r.attention_svgs.empty()) continue;
    h += "<h3>" + xml_escape(r.name) + "</h3><div class=\"heatmaps\">";
    for (const auto& svg : r.attention_svgs) h += "<figure>" + svg + "</figure>";
    h += "</div>";
  }

  // ---- examples
  h += "<h2>Example translations</h2>";
  if (!report.examples_from.empty()) h += "<p>From " + xml_escape(report.examples_from) + "; sentence BLEU in brackets.</p>";
  h += "<table id=\"examples\"><tr><th>#</th><th>source</th><th>reference</th>";
  for (const auto& r : report.runs) h += "<th>" + xml_escape(r.name) + "</th>";
  h += "</tr>";
  for (size_t i = 0; i < report.example_sources.size(); ++i) {
    h += "<tr><td class=\"num\">" + std::to_string(i + 1) + "</td>" + cell(report.example_sources[i]) +
         cell(i < report.example_references.size() ? report.example_references[i] : "");
    for (const auto& r : report.runs) {
      if (i < r.examples.size())
        h += "<td>" + xml_escape(r.examples[i].hypothesis) + fmt::format(" <span class=\"sig\">[{:.1f}]</span></td>",
                                                                          r.examples[i].sentence_bleu);
      else
        h += "<td></td>";
    }
    h += "</tr>";
  }
  h += "</table>";
  h += "<p class=\"sig\">Generated by nmt report.</p></body></html>\n";
  return h;
}

}  // namespace nmt::viz
