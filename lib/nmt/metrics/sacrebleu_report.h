#pragma once
// What the sacreBLEU 2.6.0 command line prints for corpus-level scoring, byte for byte (colours
// off, as with NO_COLOR or when piped): one system's score lines (`-f text`, aligned on "=") or
// JSON objects (`-f json`), with `--confidence` intervals; several systems as its table
// (tabulate's fancy_grid for text, a JSON list), with `--paired-bs` / `--paired-ar` p-values,
// the explanation block and the signatures. `nmt bleu` calls this; tests compare its output
// with sacreBLEU's.
#include <cstddef>
#include <string>
#include <vector>

#include "nmt/metrics/bleu.h"
#include "nmt/metrics/chrf.h"
#include "nmt/metrics/significance.h"
#include "nmt/metrics/ter.h"

namespace nmt::metrics {

enum class PairedTest { kNone, kBootstrap, kApproximateRandomization };

struct ReportOptions {
  std::vector<std::string> metrics{"bleu"};  // "bleu", "chrf", "ter", in the order given
  BleuOptions bleu;
  ChrfOptions chrf;
  TerOptions ter;
  bool json = false;        // -f json
  bool latex = false;       // -f latex: tables as tabulate's latex_booktabs (one system: as text)
  // Systems read from standard input (unnamed): the paired tests' first row is "Baseline",
  // not "Baseline: NAME".
  bool unnamed_baseline = false;
  int width = 1;            // -w
  bool score_only = false;  // -b
  bool short_signature = false;  // --short
  bool confidence = false;  // --confidence (one system)
  size_t confidence_n = 1000;
  PairedTest paired = PairedTest::kNone;
  size_t paired_bs_n = 1000;   // --paired-bs-n
  size_t paired_ar_n = 10000;  // --paired-ar-n
  TestSeed seed;               // SACREBLEU_SEED
};

struct NamedSystem {
  std::string name;  // the file name, as sacreBLEU names systems
  std::vector<std::string> lines;
};

// The whole output of `sacrebleu REFS -i SYSTEMS... OPTIONS` (corpus level). Every system and
// reference stream must have the same number of lines (the caller reports mismatches).
// Throws UsageError where sacreBLEU refuses the combination (e.g. --confidence with several
// systems, a paired test with one).
std::string sacrebleu_report(const std::vector<NamedSystem>& systems,
                             const std::vector<std::vector<std::string>>& refs_per_stream,
                             const ReportOptions& options);

// The signature with sacreBLEU's test fields after "nrefs:N" (those given), e.g.
// "nrefs:1|bs:1000|seed:12345|case:mixed|...".
std::string with_test_fields(const std::string& signature, const std::string& fields);
// Signature.format(short=True): "#:1|c:mixed|e:no|tok:13a|s:exp|v:2.6.0" (`metric` is the
// score's name: BLEU, chrF2..., TER, whose keys abbreviate differently).
std::string short_signature(const std::string& signature, const std::string& metric);

// The same table as tabulate(..., tablefmt="latex_booktabs"): widths from the raw text, then
// LaTeX's special characters escaped (\& \% \_ \textbackslash{} ...).
std::string latex_booktabs(const std::vector<std::string>& headers, const std::vector<std::vector<std::string>>& rows);

// Python's repr() of a float ("61.5", "62.0", "1e-05", "1.2345678901234567e+16").
std::string python_float_repr(double value);
// json.dumps of a string.
std::string python_json_string(const std::string& utf8, bool ensure_ascii);
// tabulate(rows, headers, tablefmt="fancy_grid", colalign=("right",), stralign="center"):
// the first column right-aligned, the others centred; cells may hold several lines.
std::string fancy_grid(const std::vector<std::string>& headers, const std::vector<std::vector<std::string>>& rows);

}  // namespace nmt::metrics
