#pragma once
// `nmt bleu` once its command line is read: corpus or sentence BLEU / chrF / TER of one or more
// systems against one or more references, as the sacreBLEU 2.6.0 command line prints them
// (same numbers, signatures, confidence intervals, paired tests and layouts:
// sacrebleu_report.h), nmt's own one-system layout for `-r REF HYP`, and the non-standard
// "d2l" sentence BLEU. Torch-free: the scorer-only build runs it.
#include "nmt/metrics/bleu_options.h"

namespace nmt::metrics {

// Checks `options` (their table's ranges and choices, then the combinations), reads the inputs
// (bleu_inputs.h) and writes the report to standard output, whose write errors are errors too.
// Throws UsageError (exit 2) or RuntimeError (exit 1), one line naming the file, line or flag.
void run_bleu_command(BleuCommandOptions options);

}  // namespace nmt::metrics
