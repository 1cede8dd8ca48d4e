#include "nmt/viz/options.h"

namespace nmt::viz {

const std::vector<OptionSpec<ReportOptions>>& report_option_specs() {
  using O = ReportOptions;
  static const std::vector<OptionSpec<O>> specs = {
      list_option("dirs", "dirs", "", "Model directories", &O::dirs).is_required(),
      option("output", "-o,--output", "", "HTML file to write", &O::output),
      option("title", "--title", "", "Page title", &O::title),
      option("example_src", "--src", "",
             "Source sentences for the examples (default: the first run's validation set)", &O::example_src),
      option("example_ref", "--ref", "", "Their references", &O::example_ref),
      option("examples", "--examples", "", "Example sentences translated by each run", &O::examples),
      option("heatmaps", "--heatmaps", "", "Attention heatmaps per run (of the first examples)", &O::heatmaps),
  };
  return specs;
}

const std::vector<OptionSpec<PlotOptions>>& plot_option_specs() {
  using O = PlotOptions;
  static const std::vector<OptionSpec<O>> specs = {
      list_option("dirs", "dirs", "", "Model directories (each with metrics.jsonl)", &O::dirs).is_required(),
      option("output", "-o,--output", "", "SVG file to write", &O::output),
      // Checked as the command line is read, so --help and the error keep the words they had.
      option("x", "--x", "", "Horizontal axis: step or time (wall time in minutes)", &O::x)
          .one_of({"step", "time"})
          .checked_when_read(),
  };
  return specs;
}

}  // namespace nmt::viz
