// `nmt plot`: training curves of one or more model directories as one SVG.
#include <memory>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "commands.h"
#include "option_binder.h"
#include "nmt/util/error.h"
#include "nmt/util/io.h"
#include "nmt/viz/options.h"
#include "nmt/viz/plot.h"

namespace nmt::cli {

void add_plot_command(CLI::App& app) {
  auto* cmd = app.add_subcommand("plot", "Draw training/validation loss and validation BLEU of runs as an SVG");
  auto own = std::make_shared<OptionBinder<viz::PlotOptions>>(cmd, viz::plot_option_specs());
  cmd->callback([own] {
    const viz::PlotOptions o = own->checked();
    std::vector<viz::RunMetrics> runs;
    for (const auto& d : o.dirs) runs.push_back(viz::read_run_metrics(d));
    write_file_atomic(o.output, viz::render_panels_svg(viz::training_curves(runs, o.x_axis())));
    std::fprintf(stderr, "curves of %zu run(s) written to %s\n", runs.size(), o.output.c_str());
  });
}

}  // namespace nmt::cli
