// `nmt plot`: training curves of one or more model directories as one SVG.
#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "commands.h"
#include "nmt/util/error.h"
#include "nmt/util/io.h"
#include "nmt/viz/plot.h"

namespace nmt::cli {

void add_plot_command(CLI::App& app) {
  auto* cmd = app.add_subcommand("plot", "Draw training/validation loss and validation BLEU of runs as an SVG");
  auto dirs = std::make_shared<std::vector<std::string>>();
  auto out = std::make_shared<std::string>("curves.svg");
  auto x = std::make_shared<std::string>("step");
  cmd->add_option("dirs", *dirs, "Model directories (each with metrics.jsonl)")
      ->required()
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
  cmd->add_option("-o,--output", *out, "SVG file to write")->capture_default_str();
  cmd->add_option("--x", *x, "Horizontal axis: step or time (wall time in minutes)")
      ->capture_default_str()
      ->check(CLI::IsMember({"step", "time"}));
  cmd->callback([dirs, out, x] {
    std::vector<viz::RunMetrics> runs;
    for (const auto& d : *dirs) runs.push_back(viz::read_run_metrics(d));
    const auto panels = viz::training_curves(runs, *x == "time" ? viz::XAxis::kTime : viz::XAxis::kStep);
    write_file_atomic(*out, viz::render_panels_svg(panels));
    std::fprintf(stderr, "curves of %zu run(s) written to %s\n", runs.size(), out->c_str());
  });
}

}  // namespace nmt::cli
