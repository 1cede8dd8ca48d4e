// Pictures and reports: the SVG/HTML must be well-formed and carry the series, labels and
// numbers a user reads off them; the progress line must stay off when it is not wanted.
#include <cmath>
#include <cstdio>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "nmt/util/error.h"
#include "nmt/viz/heatmap.h"
#include "nmt/viz/plot.h"
#include "nmt/viz/progress.h"
#include "nmt/viz/report.h"
#include "nmt/viz/svg.h"
#include "test_support.h"

using nmt::test::parse_xml;
using nmt::test::TempDir;
using nmt::test::write_bytes;

namespace {

std::vector<std::string> texts(const nmt::test::XmlElement& root, const std::string& cls) {
  std::vector<std::string> out;
  for (const auto* t : root.find_all("text"))
    if (cls.empty() || t->attr("class") == cls) out.push_back(t->text);
  return out;
}

bool contains(const std::vector<std::string>& v, const std::string& s) { return std::find(v.begin(), v.end(), s) != v.end(); }

void write_metrics(const std::string& dir, double bleu_scale) {
  std::string m;
  for (int step = 50; step <= 300; step += 50)
    m += "{\"event\":\"train\",\"step\":" + std::to_string(step) + ",\"epoch\":1,\"train_loss\":" +
         std::to_string(6.0 - step / 100.0) + ",\"train_nll\":" + std::to_string(5.5 - step / 100.0) +
         ",\"lr\":0.001,\"tokens_per_s\":1500,\"wall_time\":" + std::to_string(step * 3.0) + "}\n";
  for (int step = 100; step <= 300; step += 100)
    m += "{\"event\":\"valid\",\"step\":" + std::to_string(step) + ",\"epoch\":1,\"val_loss\":" +
         std::to_string(5.0 - step / 100.0) + ",\"val_ppl\":10,\"val_bleu\":" + std::to_string(step / 10.0 * bleu_scale) +
         ",\"wall_time\":" + std::to_string(step * 3.0) + "}\n";
  write_bytes(dir + "/metrics.jsonl", m);
}

}  // namespace

TEST(Viz, NiceTicksAreRoundAndCoverTheRange) {
  for (auto [lo, hi] : std::vector<std::pair<double, double>>{{0.3, 7.7}, {1234, 98765}, {-2.5, 0.01}, {0.001, 0.0042}, {5, 5}}) {
    auto t = nmt::viz::nice_ticks(lo, hi, 5);
    ASSERT_GE(t.size(), 2u);
    EXPECT_LE(t.front(), lo + 1e-12);
    EXPECT_GE(t.back(), hi - 1e-12);
    EXPECT_LE(t.size(), 12u);
    const double step = t[1] - t[0];
    const double mantissa = step / std::pow(10.0, std::floor(std::log10(step)));
    EXPECT_TRUE(std::abs(mantissa - 1) < 1e-6 || std::abs(mantissa - 2) < 1e-6 || std::abs(mantissa - 2.5) < 1e-6 ||
                std::abs(mantissa - 5) < 1e-6)
        << step;
  }
}

TEST(Viz, CurvesSvgCarriesEverySeriesLabelAndAxis) {
  TempDir a("run-a"), b("run-b");
  write_metrics(a.path(), 1.0);
  write_metrics(b.path(), 0.5);
  std::vector<nmt::viz::RunMetrics> runs{nmt::viz::read_run_metrics(a.path()), nmt::viz::read_run_metrics(b.path())};
  ASSERT_EQ(runs[0].train.size(), 6u);
  ASSERT_EQ(runs[0].valid.size(), 3u);
  auto svg = nmt::viz::render_panels_svg(nmt::viz::training_curves(runs, nmt::viz::XAxis::kStep));
  auto root = parse_xml(svg);
  EXPECT_EQ(root->name, "svg");
  auto series = root->find_all("polyline");
  ASSERT_EQ(series.size(), 6u);  // train + valid loss and BLEU, per run
  std::vector<std::string> labels;
  for (const auto* s : series) labels.push_back(s->attr("data-label"));
  EXPECT_TRUE(contains(labels, runs[0].name + " train"));
  EXPECT_TRUE(contains(labels, runs[1].name + " valid"));
  EXPECT_TRUE(contains(labels, runs[1].name));
  // Six training points in the first series, drawn from its data.
  const std::string points = series[0]->attr("points");
  EXPECT_EQ(std::count(points.begin(), points.end(), ','), 6);
  auto legend = texts(*root, "legend");
  EXPECT_TRUE(contains(legend, runs[0].name + " train"));
  EXPECT_TRUE(contains(texts(*root, "xlabel"), "update step"));
  EXPECT_TRUE(contains(texts(*root, "ylabel"), "BLEU"));
  auto xt = texts(*root, "xtick");
  EXPECT_TRUE(contains(xt, "100") && contains(xt, "300")) << svg;
  // BLEU reaches 30 in run a: the BLEU axis reaches at least 30.
  auto yt = texts(*root, "ytick");
  EXPECT_TRUE(contains(yt, "30")) << svg;

  auto by_time = nmt::viz::render_panels_svg(nmt::viz::training_curves(runs, nmt::viz::XAxis::kTime));
  auto root2 = parse_xml(by_time);
  EXPECT_TRUE(contains(texts(*root2, "xlabel"), "wall time (min)"));
  EXPECT_TRUE(contains(texts(*root2, "xtick"), "15"));  // 300 steps × 3 s = 15 min
}

TEST(Viz, EmptyRunSaysNoData) {
  TempDir a;
  write_bytes(a.file("metrics.jsonl"), "");
  auto root = parse_xml(nmt::viz::render_panels_svg(nmt::viz::training_curves({nmt::viz::read_run_metrics(a.path())},
                                                                              nmt::viz::XAxis::kStep)));
  EXPECT_TRUE(contains(texts(*root, ""), "no data"));
}

TEST(Viz, BadMetricsLineIsNamed) {
  TempDir a;
  write_bytes(a.file("metrics.jsonl"), "{\"event\":\"train\",\"step\":1}\nnot json\n");
  nmt::test::expect_error<nmt::RuntimeError>([&] { nmt::viz::read_run_metrics(a.path()); }, {"metrics.jsonl:2", "JSON"});
  nmt::test::expect_error<nmt::RuntimeError>([&] { nmt::viz::read_run_metrics(a.file("missing")); }, {"missing"});
}

TEST(Viz, AttentionSvgHasOneCellPerWeightAndEscapesTokens) {
  nmt::viz::AttentionMap m;
  m.source = {"▁a", "<unk>", "&", "</s>"};
  m.target = {"▁un", "\"x\"", "</s>"};
  m.weights = {{0.7f, 0.1f, 0.1f, 0.1f}, {0.0f, 1.0f, 0.0f, 0.0f}, {0.25f, 0.25f, 0.25f, 0.25f}};
  auto root = parse_xml(nmt::viz::attention_svg(m, "layer 2 <mean>"));
  std::vector<const nmt::test::XmlElement*> cells;
  for (const auto* r : root->find_all("rect"))
    if (r->attr("class") == "cell") cells.push_back(r);
  ASSERT_EQ(cells.size(), 12u);
  EXPECT_NE(cells[0]->attr("fill"), cells[4]->attr("fill"));  // 0.7 vs 0.0 differ in colour
  EXPECT_EQ(cells[5]->attr("fill"), nmt::viz::sequential_color(1.0));
  EXPECT_EQ(texts(*root, "source"), m.source);
  EXPECT_EQ(texts(*root, "target"), m.target);
  auto scale = texts(*root, "scale");
  EXPECT_TRUE(contains(scale, "0") && contains(scale, "1"));
  EXPECT_TRUE(contains(texts(*root, ""), "layer 2 <mean>"));
}

TEST(Viz, AttentionFromJsonChecksShapes) {
  auto ok = nlohmann::json::parse(R"({"source":["a","</s>"],"target":["b","</s>"],"attention":[[0.5,0.5],[1,0]]})");
  EXPECT_EQ(nmt::viz::attention_from_json(ok, "x").weights.size(), 2u);
  auto bad = nlohmann::json::parse(R"({"source":["a","</s>"],"target":["b","</s>"],"attention":[[0.5,0.5]]})");
  nmt::test::expect_error<nmt::RuntimeError>([&] { nmt::viz::attention_from_json(bad, "att.jsonl:3"); }, {"att.jsonl:3", "rows"});
}

TEST(Viz, TerminalHeatmapRowsPerTargetToken) {
  nmt::viz::AttentionMap m{{"▁a", "▁cat", "</s>"}, {"▁un", "▁chat", "</s>"}, {{0.9f, 0.1f, 0}, {0.05f, 0.95f, 0}, {0, 0, 1}}};
  auto plain = nmt::viz::attention_text(m, false);
  EXPECT_EQ(plain.find('\x1b'), std::string::npos);
  EXPECT_NE(plain.find("0=▁a 1=▁cat 2=</s>"), std::string::npos);
  EXPECT_EQ(std::count(plain.begin(), plain.end(), '\n'), 2 + 3);
  EXPECT_NE(plain.find("▁chat"), std::string::npos);
  EXPECT_NE(plain.find(" 9 "), std::string::npos);  // 0.9 and 0.95 show as 9 tenths
  auto color = nmt::viz::attention_text(m, true);
  EXPECT_NE(color.find("\x1b[48;5;"), std::string::npos);
}

TEST(Viz, ReportIsWellFormedAndShowsRunsScoresAndExamples) {
  TempDir a("run-a");
  write_metrics(a.path(), 1.0);
  write_bytes(a.file("evals.jsonl"),
              R"({"test_set":"test_2016_flickr","beam":1,"bleu":{"score":40.1,"signature":"nrefs:1|case:mixed"},"chrf":{"score":60.2,"signature":"c"}})"
              "\n"
              R"({"test_set":"test_2016_flickr","beam":1,"bleu":{"score":41.5,"signature":"nrefs:1|case:mixed"},"chrf":{"score":61.0,"signature":"c"}})"
              "\n");
  nmt::viz::RunReport report;
  auto metrics = nmt::viz::read_run_metrics(a.path());
  nmt::viz::RunSummary run;
  run.name = "tiny <run>";
  run.model_type = "transformer";
  run.parameters = 1234567;
  run.config = {{"model", {{"type", "transformer"}, {"d_model", 256}}}, {"train", {{"lr", 0.001}}}};
  nmt::viz::summarize_metrics(metrics.train, metrics.valid, run);
  EXPECT_EQ(run.steps, 300);
  EXPECT_DOUBLE_EQ(run.best_valid_bleu, 30.0);
  EXPECT_DOUBLE_EQ(run.tokens_per_s, 1500.0);
  run.evals = nmt::viz::read_eval_results(a.path());
  ASSERT_EQ(run.evals.size(), 1u);  // the latest result per test set and beam
  EXPECT_DOUBLE_EQ(run.evals[0].bleu, 41.5);
  run.examples = {{"Un chat & un <chien>.", 42.0}};
  nmt::viz::AttentionMap m{{"a", "</s>"}, {"b", "</s>"}, {{1, 0}, {0, 1}}};
  run.attention_svgs = {nmt::viz::attention_svg(m, "example 1")};
  report.runs = {run};
  report.example_sources = {"A cat & a <dog>."};
  report.example_references = {"Un chat et un chien."};
  report.curves_svg = nmt::viz::render_panels_svg(nmt::viz::training_curves({metrics}, nmt::viz::XAxis::kStep));
  const auto html = nmt::viz::render_report_html(report);
  auto root = parse_xml(html);
  EXPECT_EQ(root->name, "html");
  EXPECT_EQ(root->find_all("svg").size(), 2u);
  std::map<std::string, const nmt::test::XmlElement*> tables;
  for (const auto* t : root->find_all("table")) tables[t->attr("id")] = t;
  ASSERT_TRUE(tables.count("summary") && tables.count("evals") && tables.count("examples") && tables.count("config"));
  auto cells = [](const nmt::test::XmlElement* t) {
    std::vector<std::string> v;
    for (const auto* c : t->find_all("td")) v.push_back(c->text);
    return v;
  };
  auto summary = cells(tables["summary"]);
  EXPECT_TRUE(contains(summary, "tiny <run>"));
  EXPECT_TRUE(contains(summary, "1,234,567"));
  EXPECT_TRUE(contains(summary, "30.00"));
  EXPECT_TRUE(contains(cells(tables["evals"]), "41.50"));
  EXPECT_TRUE(contains(cells(tables["examples"]), "A cat & a <dog>."));
  EXPECT_TRUE(contains(cells(tables["examples"]), "Un chat & un <chien>. "));  // then the sentence BLEU
}

// Every config.json holds every architecture's size fields; each run shows only its own
// architecture's (models::Architecture::size_fields), "–" under another's, whatever the names.
TEST(Viz, ReportShowsEachRunOnlyItsOwnArchitecturesSizes) {
  nmt::viz::RunReport report;
  const nlohmann::json model = {{"d_model", 256}, {"hidden", 512}, {"kernel", 3}, {"dropout", 0.1}};
  for (const auto& [name, fields] : std::vector<std::pair<std::string, std::vector<std::string>>>{
           {"a-transformer", {"d_model"}}, {"a-gru", {"hidden"}}, {"a-third", {"kernel", "d_model"}}}) {
    nmt::viz::RunSummary run;
    run.name = name;
    run.config = {{"model", model}};
    run.config["model"]["type"] = name;
    run.size_fields = fields;
    report.runs.push_back(run);
  }
  auto root = parse_xml(nmt::viz::render_report_html(report));
  const nmt::test::XmlElement* config = nullptr;
  for (const auto* t : root->find_all("table"))
    if (t->attr("id") == "config") config = t;
  ASSERT_NE(config, nullptr);
  std::map<std::string, std::vector<std::string>> rows;  // row name → the runs' cells
  for (const auto* tr : config->find_all("tr")) {
    const auto th = tr->find_all("th");
    if (th.empty()) continue;
    for (const auto* td : tr->find_all("td")) rows[th.front()->text].push_back(td->text);
  }
  EXPECT_EQ(rows["model.d_model"], (std::vector<std::string>{"256", "–", "256"}));
  EXPECT_EQ(rows["model.hidden"], (std::vector<std::string>{"–", "512", "–"}));
  EXPECT_EQ(rows["model.kernel"], (std::vector<std::string>{"–", "–", "3"}));
  EXPECT_EQ(rows["model.dropout"], (std::vector<std::string>{"0.1", "0.1", "0.1"}));
}

TEST(Viz, BadEvalRecordIsNamed) {
  TempDir a;
  write_bytes(a.file("evals.jsonl"), "{\"test_set\":\"x\"}\n");
  nmt::test::expect_error<nmt::RuntimeError>([&] { nmt::viz::read_eval_results(a.path()); }, {"evals.jsonl:1"});
  TempDir none;
  EXPECT_TRUE(nmt::viz::read_eval_results(none.path()).empty());
}

TEST(Viz, ProgressLineWritesOnlyWhenEnabled) {
  TempDir d;
  const std::string path = d.file("progress");
  {
    std::FILE* f = std::fopen(path.c_str(), "w");
    nmt::viz::ProgressLine off(false, f);
    EXPECT_FALSE(off.due());
    off.show("batch 1/10");
    off.clear();
    std::fclose(f);
  }
  EXPECT_EQ(nmt::test::slurp(path), "");
  {
    std::FILE* f = std::fopen(path.c_str(), "w");
    nmt::viz::ProgressLine on(true, f);
    EXPECT_TRUE(on.due());
    on.show("batch 1/10");
    EXPECT_FALSE(on.due());  // at most ten redraws a second
    on.clear();
    std::fclose(f);
  }
  EXPECT_EQ(nmt::test::slurp(path), "\r\x1b[Kbatch 1/10\r\x1b[K");
  EXPECT_EQ(nmt::viz::eta_text(0, 10, 5), "?");
  EXPECT_EQ(nmt::viz::eta_text(5, 10, 10), "10.0s");
  EXPECT_EQ(nmt::viz::format_duration(3725), "1h02m05s");
}

TEST(Viz, XmlEscapeMakesAnyTokenSafe) {
  EXPECT_EQ(nmt::viz::xml_escape("a<b>&\"c'\x01"), "a&lt;b&gt;&amp;&quot;c&#39;");
  EXPECT_EQ(nmt::viz::compact_number(2.50), "2.5");
  EXPECT_EQ(nmt::viz::compact_number(-0.0001), "0");
}

// The checks above are only as good as the reader: it must refuse what is not well-formed XML.
TEST(XmlReader, RefusesMalformedDocuments) {
  EXPECT_EQ(parse_xml("<!DOCTYPE html>\n<a x=\"1&amp;2\"><b>t&lt;</b> u</a>")->find_all("b")[0]->text, "t<");
  EXPECT_EQ(parse_xml("<a x=\"1&amp;2\"/>")->attr("x"), "1&2");
  for (const char* bad : {"<a><b></a></b>", "<a>", "<a x=1/>", "<a x=\"1\" x=\"2\"/>", "<a/><b/>", "", "<a><b>"}) {
    EXPECT_THROW(parse_xml(bad), std::runtime_error) << bad;
  }
}
