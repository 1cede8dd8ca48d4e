#pragma once
// Line charts of training runs, written as standalone SVG (`nmt plot`, `nmt report`).
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace nmt::viz {

struct Point {
  double x = 0, y = 0;
};

struct Series {
  std::string label;
  std::vector<Point> points;
  std::string color;    // "" = chosen by position
  bool dashed = false;  // validation curves are dashed, training curves solid
  bool markers = false;
};

struct Panel {
  std::string title, x_label, y_label;
  std::vector<Series> series;
};

// Round tick values (1, 2, 2.5 or 5 times a power of ten) covering [lo, hi], about `target` of them.
std::vector<double> nice_ticks(double lo, double hi, int target = 5);

// Panels side by side in one SVG with axes, ticks, axis labels and a legend per panel. Series
// with no points are listed in the legend but not drawn; an empty panel says "no data".
std::string render_panels_svg(const std::vector<Panel>& panels, int panel_width = 460, int panel_height = 320);

// Non-blank lines of a JSON-lines file as (line number, object); a line that is not a JSON
// object is a RuntimeError "FILE:LINE: not a JSON object".
std::vector<std::pair<size_t, nlohmann::json>> read_json_lines(const std::string& path);
// The same from text already read.
std::vector<std::pair<size_t, nlohmann::json>> parse_json_lines(const std::string& text, const std::string& path);

// The metrics a run appended to DIR/metrics.jsonl (one JSON object per line; "event" is
// "train" or "valid"). A line that is not a JSON object is an error naming file and line.
struct RunMetrics {
  std::string name;  // legend label: the directory's last component
  std::string dir;
  std::vector<nlohmann::json> train, valid;
};
RunMetrics read_run_metrics(const std::string& dir);
// The records of a metrics.jsonl text (`path` for messages), types checked: "event" a string,
// "step"/"epoch" non-negative integers, the measurements numbers. Anything else →
// RuntimeError "PATH:LINE: ..." (one line), so the plot and the report never meet a raw JSON
// exception or a float cast into an integer it does not fit.
void parse_run_metrics(const std::string& text, const std::string& path, RunMetrics& run);

enum class XAxis { kStep, kTime };

// "Loss" (training loss solid, validation loss dashed) and "Validation BLEU", one colour per
// run, against update steps or wall time in minutes.
std::vector<Panel> training_curves(const std::vector<RunMetrics>& runs, XAxis x);

}  // namespace nmt::viz
