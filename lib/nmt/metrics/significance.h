#pragma once
// Bootstrap confidence intervals and paired significance tests as sacreBLEU 2.6.0 runs them
// (sacrebleu/significance.py and Metric.corpus_score(n_bootstrap=...)), reproducing its figures
// to the bit with numpy 2.x:
//
//  * the same resampled segments (numpy_random.h: default_rng(seed), choice, integers);
//  * per-segment sufficient statistics extracted once; a bootstrap sample sums them in numpy
//    float32, row after row, as `stats_np[idxs].sum(0)` does, and the score is computed from the
//    float32 sums with numpy 2's promotion rules (a Python float meeting a float32 becomes
//    float32, so chrF and TER resampled scores are float32 numbers, BLEU's are doubles);
//  * the CI mean as sacreBLEU takes it: statistics.mean (exact, then rounded) for one system,
//    numpy's pairwise-summed mean for the paired tests; p-values compare in the array's dtype.
//
// Approximate randomisation sums statistics as integers (BLEU, chrF) and so is exact; TER's
// average reference lengths are floats there, summed by numpy's matmul (BLAS): with several
// references of different lengths the last bits of those sums may differ from sacreBLEU's.
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "nmt/metrics/bleu.h"
#include "nmt/metrics/chrf.h"
#include "nmt/metrics/numpy_random.h"
#include "nmt/metrics/ter.h"

namespace nmt::metrics {

// A number as sacreBLEU's resampling code leaves it: a Python float, or a numpy float32.
struct PyNumber {
  double value = 0.0;
  bool f32 = false;
};

// Per-segment sufficient statistics of one system: rows x width, row-major, Python numbers.
struct SegmentStats {
  size_t width = 0;
  std::vector<double> values;
  size_t rows() const { return width ? values.size() / width : 0; }
  const double* row(size_t i) const { return values.data() + i * width; }
};

// A metric as the tests see it: statistics per segment, and the score of summed statistics.
class ResamplingMetric {
 public:
  virtual ~ResamplingMetric() = default;
  // "BLEU", "chrF2", "chrF2++", "TER": the name sacreBLEU's tables and signatures use.
  virtual std::string name() const = 0;
  virtual std::string signature() const = 0;  // without test fields (bs, ar, seed)
  // The segments' statistics against the references given at construction.
  virtual SegmentStats statistics(const std::vector<std::string>& hyps) const = 0;
  // _compute_score_from_stats on Python numbers (or numpy int64/float64, which act alike).
  virtual double score(const double* summed) const = 0;
  // The same on a numpy float32 row; may change the row (add-k smoothing adds in place).
  virtual PyNumber score_f32(float* summed) const = 0;
  // The CLI line for the corpus ("BLEU|<signature> = 61.54 <verbose>"), `score_text` being
  // what goes after "= " before the metric's verbose part.
  virtual std::string text_line(const double* summed, const std::string& signature,
                                const std::string& score_text) const = 0;
  // sacreBLEU's `_verbose` part of a score (BLEU's precisions and lengths; "" otherwise).
  virtual std::string verbose(const double* summed) const = 0;
};

// refs_per_stream[k][i] is reference k of segment i.
std::unique_ptr<ResamplingMetric> make_bleu_metric(const BleuScorer& scorer,
                                                   const std::vector<std::vector<std::string>>& refs_per_stream);
std::unique_ptr<ResamplingMetric> make_chrf_metric(const ChrfScorer& scorer,
                                                   const std::vector<std::vector<std::string>>& refs_per_stream);
std::unique_ptr<ResamplingMetric> make_ter_metric(const TerScorer& scorer,
                                                  const std::vector<std::vector<std::string>>& refs_per_stream);

// utils.sum_of_lists: the statistics summed left to right in doubles.
std::vector<double> sum_statistics(const SegmentStats& stats);

// SACREBLEU_SEED as sacreBLEU reads it: unset -> 12345, "none" (any case) -> fresh entropy.
struct TestSeed {
  std::optional<NumpySeed> seed;  // nullopt: draw from the operating system
  std::string label() const;      // the signature's "seed:" value: "12345" or "none"
};
// Reads SACREBLEU_SEED; throws UsageError naming it when it is not an integer or "none".
TestSeed test_seed_from_environment();

struct ConfidenceInterval {
  PyNumber mean;
  PyNumber ci;  // half the width of the 95% interval
};

// Metric.corpus_score(n_bootstrap=n): `n` resamples, Score.estimate_ci (sorted scores and
// statistics.mean, exact then rounded to the scores' type).
ConfidenceInterval bootstrap_confidence(const ResamplingMetric& metric, const SegmentStats& stats, size_t n,
                                        const TestSeed& seed);

// One row of sacreBLEU's paired-test table for one metric.
struct PairedResult {
  double score = 0.0;
  std::optional<double> p_value;          // absent for the baseline
  std::optional<PyNumber> mean, ci;       // bootstrap estimate (paired bootstrap only)
};

// PairedTest(test_type='bs'): systems[0] is the baseline; one result per system.
std::vector<PairedResult> paired_bootstrap(const ResamplingMetric& metric, const std::vector<SegmentStats>& systems,
                                           size_t n_samples, const TestSeed& seed);
// PairedTest(test_type='ar'), without the optional bootstrap CI (the CLI never asks for it).
std::vector<PairedResult> paired_approximate_randomization(const ResamplingMetric& metric,
                                                           const std::vector<SegmentStats>& systems,
                                                           size_t n_trials, const TestSeed& seed);

// The exact mean of doubles rounded once to the nearest double (statistics.mean on floats).
double exact_mean(const std::vector<double>& values);
// numpy's pairwise summation (add.reduce on a contiguous 1-D array), in float or double.
float numpy_pairwise_sum(const float* values, size_t n);
double numpy_pairwise_sum(const double* values, size_t n);

}  // namespace nmt::metrics
