#pragma once
// The options of `nmt report` and `nmt plot`, declared once (util/option_spec.h) and bound by
// app/option_binder.h. Torch-free.
#include <cstddef>
#include <string>
#include <vector>

#include "nmt/util/option_spec.h"
#include "nmt/viz/plot.h"

namespace nmt::viz {

struct ReportOptions {
  std::vector<std::string> dirs;  // the runs' model directories (positional)
  std::string output = "report.html";
  std::string title = "nmt run report";
  // The example sentences and their references; empty: the first run's validation set. (Keys
  // of their own: `ref` is nmt bleu's -r,--ref.)
  std::string example_src, example_ref;
  size_t examples = 8;   // translated by each run
  size_t heatmaps = 2;   // attention heatmaps per run, of the first examples
};
const std::vector<OptionSpec<ReportOptions>>& report_option_specs();

struct PlotOptions {
  std::vector<std::string> dirs;  // the runs' model directories (positional)
  std::string output = "curves.svg";
  std::string x = "step";  // or "time"

  XAxis x_axis() const { return x == "time" ? XAxis::kTime : XAxis::kStep; }
};
const std::vector<OptionSpec<PlotOptions>>& plot_option_specs();

}  // namespace nmt::viz
