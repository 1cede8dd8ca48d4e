// libFuzzer target: the metrics readers (metrics.jsonl → the plot's curves and the report's
// run summary). Anything may be refused with nmt::Error; the readers downstream of
// parse_run_metrics must never throw JSON exceptions on what it accepted.
#include <cstdint>
#include <string>

#include "nmt/util/error.h"
#include "nmt/viz/plot.h"
#include "nmt/viz/report.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  nmt::viz::RunMetrics run;
  run.name = "fuzz";
  try {
    nmt::viz::parse_run_metrics(text, "metrics.jsonl", run);
  } catch (const nmt::Error&) {
    return 0;
  }
  // Accepted records must be drawable and summarisable without any exception.
  const auto panels = nmt::viz::training_curves({run}, nmt::viz::XAxis::kStep);
  (void)nmt::viz::render_panels_svg(panels);
  (void)nmt::viz::training_curves({run}, nmt::viz::XAxis::kTime);
  nmt::viz::RunSummary summary;
  nmt::viz::summarize_metrics(run.train, run.valid, summary);
  return 0;
}
