#include "nmt/metrics/significance.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <random>

#include <fmt/format.h>

#include "nmt/util/error.h"
#include "nmt/util/vectorize.h"

namespace nmt::metrics {
namespace {

// ---- numpy 2 scalar arithmetic ------------------------------------------------------------
// A Python float (or int) meeting a float32 is converted to float32 and the operation runs in
// float32 (NEP 50); two Python numbers stay in double.

PyNumber py(double v) { return PyNumber{v, false}; }
PyNumber f32(float v) { return PyNumber{v, true}; }

template <typename Op>
PyNumber apply(PyNumber a, PyNumber b, Op op) {
  if (a.f32 || b.f32) return f32(op(static_cast<float>(a.value), static_cast<float>(b.value)));
  return py(op(a.value, b.value));
}
PyNumber operator+(PyNumber a, PyNumber b) { return apply(a, b, [](auto x, auto y) { return x + y; }); }
PyNumber operator-(PyNumber a, PyNumber b) { return apply(a, b, [](auto x, auto y) { return x - y; }); }
PyNumber operator*(PyNumber a, PyNumber b) { return apply(a, b, [](auto x, auto y) { return x * y; }); }
PyNumber operator/(PyNumber a, PyNumber b) { return apply(a, b, [](auto x, auto y) { return x / y; }); }

// The comparison `array > python_float` numpy makes: the float is cast to the array's type.
bool greater(PyNumber a, double b) {
  return a.f32 ? static_cast<float>(a.value) > static_cast<float>(b) : a.value > b;
}

// ---- the metrics ------------------------------------------------------------------------

std::string nrefs_checked(const std::vector<std::vector<std::string>>& refs) {
  if (refs.empty()) throw UsageError("no reference stream given");
  return {};
}

class BleuMetric : public ResamplingMetric {
 public:
  BleuMetric(const BleuScorer& scorer, const std::vector<std::vector<std::string>>& refs)
      : scorer_(scorer),
        num_refs_((nrefs_checked(refs), refs.size())),
        references_(scorer, refs),
        order_(scorer.options().max_ngram_order) {}
  std::string name() const override { return "BLEU"; }
  std::string signature() const override { return scorer_.signature(num_refs_); }

  SegmentStats statistics(const std::vector<std::string>& hyps) const override {
    SegmentStats out{static_cast<size_t>(2 + 2 * order_), {}};
    out.values.reserve(hyps.size() * out.width);
    for (size_t i = 0; i < hyps.size(); ++i) {
      const BleuStats s = references_.segment_stats(i, hyps[i]);
      out.values.push_back(static_cast<double>(s.sys_len));
      out.values.push_back(static_cast<double>(s.ref_len));
      for (int64_t c : s.counts) out.values.push_back(static_cast<double>(c));
      for (int64_t t : s.totals) out.values.push_back(static_cast<double>(t));
    }
    return out;
  }

  BleuScore full_score(const double* summed) const {
    BleuStats s;
    s.sys_len = static_cast<int64_t>(summed[0]);
    s.ref_len = static_cast<int64_t>(summed[1]);
    for (int n = 0; n < order_; ++n) {
      s.counts.push_back(static_cast<int64_t>(summed[2 + n]));
      s.totals.push_back(static_cast<int64_t>(summed[2 + order_ + n]));
    }
    const BleuOptions& o = scorer_.options();
    return compute_bleu(s, o.smooth_method, o.smooth_value, o.effective_order, order_);
  }

  double score(const double* summed) const override { return full_score(summed).score; }

  PyNumber score_f32(float* stats) const override {
    // BLEU.compute_bleu on a float32 row: precisions become float32, the score a double.
    const BleuOptions& o = scorer_.options();
    const int64_t sys_len = static_cast<int64_t>(stats[0]), ref_len = static_cast<int64_t>(stats[1]);
    float* correct = stats + 2;
    float* total = stats + 2 + order_;
    double bp = 1.0;
    if (sys_len < ref_len)
      bp = sys_len > 0 ? std::exp(1.0 - static_cast<double>(ref_len) / static_cast<double>(sys_len)) : 0.0;
    if (std::all_of(correct, correct + order_, [](float c) { return c == 0.0f; })) return py(0.0);
    const double sv = o.smooth_value ? *o.smooth_value : default_smooth_value(o.smooth_method).value_or(0.0);
    std::vector<PyNumber> precisions(order_, py(0.0));
    double smooth_mteval = 1.0;
    int eff_order = order_;
    for (int n = 1; n <= order_; ++n) {
      if (o.smooth_method == SmoothMethod::kAddK && n > 1) {
        correct[n - 1] = correct[n - 1] + static_cast<float>(sv);
        total[n - 1] = total[n - 1] + static_cast<float>(sv);
      }
      if (total[n - 1] == 0.0f) break;
      if (o.effective_order) eff_order = n;
      const PyNumber c = f32(correct[n - 1]), t = f32(total[n - 1]);
      if (correct[n - 1] == 0.0f) {
        if (o.smooth_method == SmoothMethod::kExp) {
          smooth_mteval *= 2;
          precisions[n - 1] = py(100.0) / (py(smooth_mteval) * t);
        } else if (o.smooth_method == SmoothMethod::kFloor) {
          precisions[n - 1] = py(100.0 * sv) / t;
        }
      } else {
        precisions[n - 1] = py(100.0) * c / t;
      }
    }
    double log_sum = 0.0;
    for (int i = 0; i < eff_order; ++i)
      log_sum += precisions[i].value == 0.0 ? -9999999999.0 : std::log(precisions[i].value);
    return py(bp * std::exp(log_sum / eff_order));
  }

  std::string verbose(const double* summed) const override {
    const std::string line = full_score(summed).text_line(0);
    return line.substr(line.find(' ', line.find(" = ") + 3) + 1);  // after "= <score> "
  }

  std::string text_line(const double* summed, const std::string& signature,
                        const std::string& score_text) const override {
    return fmt::format("BLEU|{} = {} {}", signature, score_text, verbose(summed));
  }

 private:
  BleuScorer scorer_;
  size_t num_refs_;
  BleuReferences references_;  // extracted once for every system
  int order_;
};

class ChrfMetric : public ResamplingMetric {
 public:
  ChrfMetric(const ChrfScorer& scorer, const std::vector<std::vector<std::string>>& refs)
      : scorer_(scorer), num_refs_((nrefs_checked(refs), refs.size())), references_(scorer, refs) {}
  std::string name() const override { return scorer_.name(); }
  std::string signature() const override { return scorer_.signature(num_refs_); }
  size_t width() const { return 3 * static_cast<size_t>(scorer_.options().char_order + scorer_.options().word_order); }

  SegmentStats statistics(const std::vector<std::string>& hyps) const override {
    SegmentStats out{width(), {}};
    out.values.reserve(hyps.size() * out.width);
    for (size_t i = 0; i < hyps.size(); ++i) {
      const ChrfStats s = references_.segment_stats(i, hyps[i]);
      for (size_t j = 0; j < out.width; ++j) out.values.push_back(j < s.values.size() ? s.values[j] : 0.0);
    }
    return out;
  }

  double score(const double* summed) const override {
    ChrfStats s;
    for (size_t j = 0; j < width(); ++j) s.values.push_back(static_cast<int64_t>(summed[j]));
    return scorer_.f_score(s);
  }

  PyNumber score_f32(float* stats) const override {
    // CHRF._compute_f_score, operation by operation, on float32 statistics.
    const ChrfOptions& o = scorer_.options();
    const PyNumber eps = py(1e-16);
    const PyNumber factor = py(static_cast<double>(o.beta) * o.beta);
    const int order = o.char_order + o.word_order;
    PyNumber score = py(0.0), avg_prec = py(0.0), avg_rec = py(0.0);
    int effective_order = 0;
    for (int i = 0; i < order; ++i) {
      const PyNumber n_hyp = f32(stats[3 * i]), n_ref = f32(stats[3 * i + 1]), n_match = f32(stats[3 * i + 2]);
      const PyNumber prec = n_hyp.value > 0 ? n_match / n_hyp : eps;
      const PyNumber rec = n_ref.value > 0 ? n_match / n_ref : eps;
      const PyNumber denom = factor * prec + rec;
      score = score + (denom.value > 0 ? (py(1) + factor) * prec * rec / denom : eps);
      if (n_hyp.value > 0 && n_ref.value > 0) {
        avg_prec = avg_prec + prec;
        avg_rec = avg_rec + rec;
        ++effective_order;
      }
    }
    if (o.eps_smoothing) return py(100) * score / py(order);
    if (effective_order == 0) {
      avg_prec = avg_rec = py(0.0);
    } else {
      avg_prec = avg_prec / py(effective_order);
      avg_rec = avg_rec / py(effective_order);
    }
    if ((avg_prec + avg_rec).value != 0) {
      score = (py(1) + factor) * avg_prec * avg_rec;
      score = score / ((factor * avg_prec) + avg_rec);
      return py(100) * score;
    }
    return py(0.0);
  }

  std::string verbose(const double*) const override { return ""; }

  std::string text_line(const double*, const std::string& signature, const std::string& score_text) const override {
    return fmt::format("{}|{} = {}", name(), signature, score_text);
  }

 private:
  ChrfScorer scorer_;
  size_t num_refs_;
  ChrfReferences references_;  // extracted once for every system
};

class TerMetric : public ResamplingMetric {
 public:
  TerMetric(const TerScorer& scorer, const std::vector<std::vector<std::string>>& refs) : scorer_(scorer) {
    nrefs_checked(refs);
    num_refs_ = refs.size();
    // The references' words, tokenized once for all systems (sacreBLEU's reference cache).
    ref_words_.resize(refs[0].size());
    for (size_t i = 0; i < refs[0].size(); ++i)
      for (const std::vector<std::string>& stream : refs) ref_words_[i].push_back(scorer_.preprocess(stream[i]));
  }
  std::string name() const override { return "TER"; }
  std::string signature() const override { return scorer_.signature(num_refs_); }

  SegmentStats statistics(const std::vector<std::string>& hyps) const override {
    SegmentStats out{2, {}};
    out.values.reserve(hyps.size() * 2);
    for (size_t i = 0; i < hyps.size(); ++i) {
      const TerStats s = scorer_.segment_stats(scorer_.preprocess(hyps[i]), ref_words_.at(i));
      out.values.push_back(s.num_edits);
      out.values.push_back(s.ref_length);
    }
    return out;
  }

  double score(const double* summed) const override {
    return scorer_.score_from_stats(TerStats{summed[0], summed[1]}, num_refs_).score;
  }

  PyNumber score_f32(float* stats) const override {
    const PyNumber edits = f32(stats[0]), length = f32(stats[1]);
    PyNumber score = py(0.0);
    if (length.value > 0) score = edits / length;
    else if (edits.value > 0) score = py(1.0);
    return py(100) * score;
  }

  std::string verbose(const double*) const override { return ""; }

  std::string text_line(const double*, const std::string& signature, const std::string& score_text) const override {
    return fmt::format("TER|{} = {}", signature, score_text);
  }

 private:
  TerScorer scorer_;
  size_t num_refs_ = 0;
  std::vector<std::vector<std::vector<std::string>>> ref_words_;  // [segment][reference] -> words
};

// ---- resampling -------------------------------------------------------------------------

NumpySeed os_entropy_seed() {
  std::random_device device;
  NumpySeed seed;
  seed.words.clear();
  for (int i = 0; i < 4; ++i) seed.words.push_back(device());  // 128 bits, as numpy draws
  return seed;
}

// Eight float32 columns, one vector register (two SSE ones without AVX2).
typedef float Columns8 __attribute__((vector_size(32)));

// Adds rows[pick[i]] for i in [0, n) to the first 8 * kBlocks columns of `sum`, one row after
// the other: each column adds in numpy's order. The column sums stay in registers through all
// the rows; summing through memory chained every row to the previous one's store, 3x slower.
template <size_t kBlocks>
__attribute__((always_inline)) inline void add_picked_columns(const float* rows, size_t stride, const int64_t* pick,
                                                              size_t n, float* sum) {
  Columns8 acc[kBlocks];
  std::memcpy(acc, sum, sizeof acc);
  for (size_t i = 0; i < n; ++i) {
    const float* row = rows + static_cast<size_t>(pick[i]) * stride;
    for (size_t b = 0; b < kBlocks; ++b) {
      Columns8 x;
      std::memcpy(&x, row + 8 * b, sizeof x);
      acc[b] += x;
    }
  }
  std::memcpy(sum, acc, sizeof acc);
}

// The same for `stride` columns (a multiple of 8), 64 at a time.
NMT_AVX2_CLONE void add_picked_rows(const float* rows, size_t stride, const int64_t* pick, size_t n, float* sum) {
  for (size_t first = 0; first < stride; first += 64) {
    const float* r = rows + first;
    float* s = sum + first;
    switch ((stride - first) / 8) {
      case 1: add_picked_columns<1>(r, stride, pick, n, s); break;
      case 2: add_picked_columns<2>(r, stride, pick, n, s); break;
      case 3: add_picked_columns<3>(r, stride, pick, n, s); break;
      case 4: add_picked_columns<4>(r, stride, pick, n, s); break;
      case 5: add_picked_columns<5>(r, stride, pick, n, s); break;
      case 6: add_picked_columns<6>(r, stride, pick, n, s); break;
      case 7: add_picked_columns<7>(r, stride, pick, n, s); break;
      default: add_picked_columns<8>(r, stride, pick, n, s); break;
    }
  }
}

// Four float64 columns, one vector register (two SSE ones without AVX2).
typedef double Columns4 __attribute__((vector_size(32)));

// sum[0..4 * kBlocks) = the sum of rows[i] over the i with selected[i] (0 or 1), in row order.
// Multiplying by the 0/1 selector instead of branching on it, which was mispredicted half the
// time: x * 1 is x, and x * 0 is a zero, which adds nothing.
template <size_t kBlocks>
__attribute__((always_inline)) inline void add_selected_columns(const double* rows, size_t stride,
                                                                const uint8_t* selected, size_t n, double* sum) {
  Columns4 acc[kBlocks] = {};
  for (size_t i = 0; i < n; ++i) {
    const double* row = rows + i * stride;
    const double m = selected[i];
    for (size_t b = 0; b < kBlocks; ++b) {
      Columns4 x;
      std::memcpy(&x, row + 4 * b, sizeof x);
      acc[b] += x * m;
    }
  }
  std::memcpy(sum, acc, sizeof acc);
}

// The same for `stride` columns (a multiple of 4), 32 at a time.
NMT_AVX2_CLONE void sum_selected_rows(const double* rows, size_t stride, const uint8_t* selected, size_t n,
                                      double* sum) {
  for (size_t first = 0; first < stride; first += 32) {
    const double* r = rows + first;
    double* s = sum + first;
    switch ((stride - first) / 4) {
      case 1: add_selected_columns<1>(r, stride, selected, n, s); break;
      case 2: add_selected_columns<2>(r, stride, selected, n, s); break;
      case 3: add_selected_columns<3>(r, stride, selected, n, s); break;
      case 4: add_selected_columns<4>(r, stride, selected, n, s); break;
      case 5: add_selected_columns<5>(r, stride, selected, n, s); break;
      case 6: add_selected_columns<6>(r, stride, selected, n, s); break;
      case 7: add_selected_columns<7>(r, stride, selected, n, s); break;
      default: add_selected_columns<8>(r, stride, selected, n, s); break;
    }
  }
}

// Whether every statistic is an integer small enough for any sum or difference of sums of the
// rows to be exact in a double, whatever the order of the additions (BLEU's and chrF's counts;
// TER's averaged reference lengths may not be).
bool sums_are_exact(const SegmentStats& a, const SegmentStats& b) {
  const double limit = std::ldexp(1.0, 50) / static_cast<double>(a.rows() + 1);
  const auto exact = [&](double v) { return std::abs(v) <= limit && v == std::floor(v); };
  return std::all_of(a.values.begin(), a.values.end(), exact) && std::all_of(b.values.begin(), b.values.end(), exact);
}

// stats_np[idxs[s]].sum(0) for every sample of idxs = default_rng(seed).choice(n, size=(samples,
// n)), then the metric's float32 score of each, for several systems resampled with the same
// indices: their rows are laid side by side so one pass over the picks serves them all. The
// indices are drawn one sample at a time, which gives the same numbers as numpy's single call
// without holding samples x n of them (8 MB for 1,000 x 1,000, whose page faults alone took
// ~5 ms, more than drawing them).
std::vector<std::vector<PyNumber>> resampled_scores(const ResamplingMetric& metric,
                                                    const std::vector<const SegmentStats*>& systems,
                                                    const NumpySeed& seed, size_t samples) {
  const size_t n = systems[0]->rows(), w = systems[0]->width;
  const size_t stride = (w * systems.size() + 7) / 8 * 8;  // the columns of all systems, zero-padded
  std::vector<float> rows(n * stride, 0.0f);
  for (size_t i = 0; i < n; ++i)
    for (size_t k = 0; k < systems.size(); ++k)
      for (size_t j = 0; j < w; ++j) rows[i * stride + k * w + j] = static_cast<float>(systems[k]->row(i)[j]);
  std::vector<std::vector<PyNumber>> scores(systems.size(), std::vector<PyNumber>(samples));
  std::vector<float> sum(stride);
  std::vector<int64_t> pick(n);
  Generator rng(seed);
  for (size_t s = 0; s < samples; ++s) {
    rng.choice(static_cast<int64_t>(n), n, pick.data());
    std::fill(sum.begin(), sum.end(), 0.0f);
    add_picked_rows(rows.data(), stride, pick.data(), n, sum.data());
    for (size_t k = 0; k < systems.size(); ++k) scores[k][s] = metric.score_f32(sum.data() + k * w);
  }
  return scores;
}

std::vector<PyNumber> resampled_scores(const ResamplingMetric& metric, const SegmentStats& stats,
                                       const NumpySeed& seed, size_t samples) {
  return resampled_scores(metric, std::vector<const SegmentStats*>{&stats}, seed, samples)[0];
}

// np.array(scores): float32 only when every score is a float32.
bool all_f32(const std::vector<PyNumber>& values) {
  return std::all_of(values.begin(), values.end(), [](const PyNumber& p) { return p.f32; });
}

// ndarray.mean() of an array of the given type.
PyNumber array_mean(const std::vector<double>& values, bool is_f32) {
  if (is_f32) {
    std::vector<float> f(values.begin(), values.end());
    const float sum = numpy_pairwise_sum(f.data(), f.size());
    // np.float32 sum / np.intp count is computed in double, then cast back to float32.
    return f32(static_cast<float>(static_cast<double>(sum) / static_cast<double>(values.size())));
  }
  return py(numpy_pairwise_sum(values.data(), values.size()) / static_cast<double>(values.size()));
}

std::vector<double> values_of(const std::vector<PyNumber>& numbers) {
  std::vector<double> out;
  out.reserve(numbers.size());
  for (const PyNumber& p : numbers) out.push_back(p.value);
  return out;
}

// significance.estimate_ci: sorted numpy array, its mean, half the 95% interval.
ConfidenceInterval numpy_estimate_ci(const std::vector<PyNumber>& scores) {
  const bool is_f32 = all_f32(scores);
  std::vector<double> sorted = values_of(scores);
  std::sort(sorted.begin(), sorted.end());
  const size_t lower = sorted.size() / 40, upper = sorted.size() - lower - 1;
  const PyNumber lo{sorted[lower], is_f32}, hi{sorted[upper], is_f32};
  return ConfidenceInterval{array_mean(sorted, is_f32), py(0.5) * (hi - lo)};
}

// significance._compute_p_value.
double p_value(const std::vector<PyNumber>& stats, double real_difference) {
  size_t c = 0;
  for (const PyNumber& s : stats) c += greater(s, real_difference);
  return static_cast<double>(c + 1) / static_cast<double>(stats.size() + 1);
}

void check_systems(const std::vector<SegmentStats>& systems) {
  if (systems.size() < 2) throw UsageError("paired tests need a baseline and at least one more system");
}

}  // namespace

std::unique_ptr<ResamplingMetric> make_bleu_metric(const BleuScorer& scorer,
                                                   const std::vector<std::vector<std::string>>& refs_per_stream) {
  return std::make_unique<BleuMetric>(scorer, refs_per_stream);
}
std::unique_ptr<ResamplingMetric> make_chrf_metric(const ChrfScorer& scorer,
                                                   const std::vector<std::vector<std::string>>& refs_per_stream) {
  return std::make_unique<ChrfMetric>(scorer, refs_per_stream);
}
std::unique_ptr<ResamplingMetric> make_ter_metric(const TerScorer& scorer,
                                                  const std::vector<std::vector<std::string>>& refs_per_stream) {
  return std::make_unique<TerMetric>(scorer, refs_per_stream);
}

std::vector<double> sum_statistics(const SegmentStats& stats) {
  std::vector<double> total(stats.width, 0.0);
  for (size_t i = 0; i < stats.rows(); ++i)
    for (size_t k = 0; k < stats.width; ++k) total[k] += stats.row(i)[k];
  return total;
}

std::string TestSeed::label() const { return seed ? seed->to_string() : "none"; }

TestSeed test_seed_from_environment() {
  const char* env = std::getenv("SACREBLEU_SEED");
  if (!env) return TestSeed{NumpySeed{{12345}}};
  std::string value(env);
  std::string lower = value;
  for (char& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  if (lower == "none") return TestSeed{std::nullopt};
  bool negative = false;
  std::optional<NumpySeed> seed = parse_numpy_seed(value, &negative);
  if (!seed) throw UsageError(fmt::format("SACREBLEU_SEED: '{}' is not an integer or 'None'", value));
  if (negative) throw UsageError(fmt::format("SACREBLEU_SEED: '{}' is negative; numpy seeds are >= 0", value));
  return TestSeed{seed};
}

ConfidenceInterval bootstrap_confidence(const ResamplingMetric& metric, const SegmentStats& stats, size_t n,
                                        const TestSeed& seed) {
  const std::vector<PyNumber> scores = resampled_scores(metric, stats, seed.seed ? *seed.seed : os_entropy_seed(), n);
  // Score.estimate_ci: Python's sorted() and statistics.mean, which sums exactly and rounds
  // once to the scores' type (a float32 mean goes through the double first, as numpy's
  // float32(Fraction) does).
  std::vector<double> sorted = values_of(scores);
  std::sort(sorted.begin(), sorted.end());
  const size_t lower = n / 40, upper = n - lower - 1;
  const bool is_f32 = all_f32(scores);
  PyNumber lo{sorted[lower], false}, hi{sorted[upper], false};
  for (const PyNumber& s : scores) {  // the type each bound had in the list
    if (s.value == sorted[lower]) lo.f32 = s.f32;
    if (s.value == sorted[upper]) hi.f32 = s.f32;
  }
  const double mean = exact_mean(sorted);
  return ConfidenceInterval{is_f32 ? f32(static_cast<float>(mean)) : py(mean), py(0.5) * (hi - lo)};
}

std::vector<PairedResult> paired_bootstrap(const ResamplingMetric& metric, const std::vector<SegmentStats>& systems,
                                           size_t n_samples, const TestSeed& seed) {
  check_systems(systems);
  std::vector<PairedResult> results;
  // The baseline's CI comes from _bootstrap_resample (seeded from SACREBLEU_SEED); each
  // system's test from default_rng(seed if seed else None), so a zero seed draws fresh entropy
  // per system. With a non-zero seed every draw is the same: one pass resamples all systems.
  const std::vector<double> bl_sum = sum_statistics(systems[0]);
  const double bl_score = metric.score(bl_sum.data());
  const bool reuse = seed.seed && !seed.seed->is_zero();
  const NumpySeed bl_seed = seed.seed ? *seed.seed : os_entropy_seed();
  std::vector<std::vector<PyNumber>> shared;
  if (reuse) {
    std::vector<const SegmentStats*> all;
    for (const SegmentStats& s : systems) all.push_back(&s);
    shared = resampled_scores(metric, all, bl_seed, n_samples);
  } else {
    shared.push_back(resampled_scores(metric, systems[0], bl_seed, n_samples));
  }
  {
    const ConfidenceInterval ci = numpy_estimate_ci(shared[0]);
    results.push_back(PairedResult{bl_score, std::nullopt, ci.mean, ci.ci});
  }
  for (size_t k = 1; k < systems.size(); ++k) {
    std::vector<std::vector<PyNumber>> fresh;
    if (!reuse)
      fresh = resampled_scores(metric, {&systems[0], &systems[k]}, os_entropy_seed(), n_samples);
    const std::vector<PyNumber>& scores_bl = reuse ? shared[0] : fresh[0];
    const std::vector<PyNumber>& scores_sys = reuse ? shared[k] : fresh[1];
    const std::vector<double> sys_sum = sum_statistics(systems[k]);
    const double sys_score = metric.score(sys_sum.data());
    const double diff = std::abs(bl_score - sys_score);
    const ConfidenceInterval ci = numpy_estimate_ci(scores_sys);

    // np.abs(scores_sys - scores_bl), minus its mean, in the arrays' common type.
    const bool is_f32 = all_f32(scores_bl) && all_f32(scores_sys);
    std::vector<PyNumber> sample_diffs(n_samples);
    for (size_t s = 0; s < n_samples; ++s) {
      const PyNumber d = PyNumber{scores_sys[s].value, is_f32} - PyNumber{scores_bl[s].value, is_f32};
      sample_diffs[s] = PyNumber{std::abs(d.value), is_f32};
    }
    const PyNumber mean = array_mean(values_of(sample_diffs), is_f32);
    for (PyNumber& s : sample_diffs) s = s - mean;
    results.push_back(PairedResult{sys_score, p_value(sample_diffs, diff), ci.mean, ci.ci});
  }
  return results;
}

std::vector<PairedResult> paired_approximate_randomization(const ResamplingMetric& metric,
                                                           const std::vector<SegmentStats>& systems,
                                                           size_t n_trials, const TestSeed& seed) {
  check_systems(systems);
  const size_t n = systems[0].rows(), w = systems[0].width;
  std::vector<PairedResult> results;
  const std::vector<double> bl_sum = sum_statistics(systems[0]);
  const double bl_score = metric.score(bl_sum.data());
  results.push_back(PairedResult{bl_score, std::nullopt, std::nullopt, std::nullopt});
  const SegmentStats& bl = systems[0];
  std::vector<uint8_t> pos(n_trials * n);
  std::vector<double> a(w), b(w), a2(w), b2(w);
  for (size_t k = 1; k < systems.size(); ++k) {
    Generator rng(seed.seed && !seed.seed->is_zero() ? *seed.seed : os_entropy_seed());
    rng.booleans(pos.size(), pos.data());
    const SegmentStats& sys = systems[k];
    const std::vector<double> sys_sum = sum_statistics(sys);
    const double sys_score = metric.score(sys_sum.data());
    const double diff_score = std::abs(bl_score - sys_score);
    size_t count = 0;
    if (sums_are_exact(bl, sys)) {
      // Exact integer sums: shuf_a = sys total + the sum over swapped segments of (bl - sys)
      // and shuf_b = bl total - that sum, equal to the two products below to the bit.
      const size_t stride = (w + 3) / 4 * 4;
      std::vector<double> bl_minus_sys(n * stride, 0.0), swapped(stride);
      for (size_t i = 0; i < n; ++i)
        for (size_t j = 0; j < w; ++j) bl_minus_sys[i * stride + j] = bl.row(i)[j] - sys.row(i)[j];
      for (size_t t = 0; t < n_trials; ++t) {
        sum_selected_rows(bl_minus_sys.data(), stride, pos.data() + t * n, n, swapped.data());
        for (size_t j = 0; j < w; ++j) a[j] = sys_sum[j] + swapped[j], b[j] = bl_sum[j] - swapped[j];
        count += std::abs(metric.score(a.data()) - metric.score(b.data())) > diff_score;
      }
    } else {
      for (size_t t = 0; t < n_trials; ++t) {
        // shuf_a = pos @ bl + neg @ sys, shuf_b = neg @ bl + pos @ sys: each product summed on
        // its own, then the two added.
        std::fill(a.begin(), a.end(), 0.0);
        std::fill(a2.begin(), a2.end(), 0.0);
        std::fill(b.begin(), b.end(), 0.0);
        std::fill(b2.begin(), b2.end(), 0.0);
        const uint8_t* sel = pos.data() + t * n;
        for (size_t i = 0; i < n; ++i) {
          const double* x = bl.row(i);
          const double* y = sys.row(i);
          if (sel[i]) {
            for (size_t j = 0; j < w; ++j) a[j] += x[j], b2[j] += y[j];
          } else {
            for (size_t j = 0; j < w; ++j) a2[j] += y[j], b[j] += x[j];
          }
        }
        for (size_t j = 0; j < w; ++j) a[j] += a2[j], b[j] += b2[j];
        count += std::abs(metric.score(a.data()) - metric.score(b.data())) > diff_score;
      }
    }
    const double p = static_cast<double>(count + 1) / static_cast<double>(n_trials + 1);
    results.push_back(PairedResult{sys_score, p, std::nullopt, std::nullopt});
  }
  return results;
}

double exact_mean(const std::vector<double>& values) {
  // Every value is m * 2^e with a 53-bit m; shifted to the smallest exponent they add up
  // exactly in a wide integer, which is then divided by the count and rounded once (half to
  // even), as Fraction arithmetic then float() do.
  if (values.empty()) return 0.0;
  int min_exp = 0;
  bool any = false;
  for (double v : values) {
    if (v < 0 || !std::isfinite(v)) {  // scores are never negative; stay defined anyway
      long double s = 0;
      for (double x : values) s += x;
      return static_cast<double>(s / values.size());
    }
    if (v == 0) continue;
    int e;
    std::frexp(v, &e);
    min_exp = any ? std::min(min_exp, e - 53) : e - 53;
    any = true;
  }
  if (!any) return 0.0;
  using u128 = unsigned __int128;
  std::vector<uint64_t> acc(4, 0);
  const auto add_at = [&](uint64_t m, size_t shift) {
    size_t limb = shift / 64 + 2;  // two spare limbs below, for the division's precision
    const unsigned bit = shift % 64;
    u128 part = static_cast<u128>(m) << bit;
    while (part) {
      if (acc.size() <= limb + 2) acc.resize(limb + 3, 0);
      u128 cur = static_cast<u128>(acc[limb]) + static_cast<uint64_t>(part);
      acc[limb] = static_cast<uint64_t>(cur);
      part = (part >> 64) + (cur >> 64);
      ++limb;
    }
  };
  for (double v : values) {
    if (v == 0) continue;
    int e;
    const double f = std::frexp(v, &e);
    add_at(static_cast<uint64_t>(std::ldexp(f, 53)), static_cast<size_t>(e - 53 - min_exp));
  }
  // Divide by the count, most significant limb first.
  const uint64_t count = values.size();
  std::vector<uint64_t> q(acc.size());
  u128 rem = 0;
  for (size_t i = acc.size(); i-- > 0;) {
    const u128 cur = (rem << 64) | acc[i];
    q[i] = static_cast<uint64_t>(cur / count);
    rem = cur % count;
  }
  size_t top = q.size() - 1;
  while (top > 0 && q[top] == 0) --top;
  const int top_bit = 63 - __builtin_clzll(q[top]);
  const long high = static_cast<long>(top) * 64 + top_bit;  // index of the leading bit
  const auto bit_at = [&](long i) -> unsigned { return i < 0 ? 0 : (q[i / 64] >> (i % 64)) & 1u; };
  uint64_t mant = 0;
  for (long i = high; i > high - 53; --i) mant = (mant << 1) | bit_at(i);
  const unsigned round = bit_at(high - 53);
  bool sticky = rem != 0;
  for (long i = high - 54; i >= 0 && !sticky; --i) sticky = bit_at(i);
  if (round && (sticky || (mant & 1))) ++mant;
  // value = q * 2^(min_exp - 128); mant holds bits high..high-52
  return std::ldexp(static_cast<double>(mant), static_cast<int>(high - 52) + min_exp - 128);
}

namespace {
template <typename T>
T pairwise(const T* a, size_t n) {
  // numpy/_core/src/umath/loops_utils.h.src: @TYPE@_pairwise_sum.
  if (n < 8) {
    T res = 0;
    for (size_t i = 0; i < n; ++i) res += a[i];
    return res;
  }
  if (n <= 128) {
    T r[8];
    for (int j = 0; j < 8; ++j) r[j] = a[j];
    size_t i = 8;
    for (; i < n - (n % 8); i += 8)
      for (int j = 0; j < 8; ++j) r[j] += a[i + j];
    T res = ((r[0] + r[1]) + (r[2] + r[3])) + ((r[4] + r[5]) + (r[6] + r[7]));
    for (; i < n; ++i) res += a[i];
    return res;
  }
  size_t n2 = n / 2;
  n2 -= n2 % 8;
  return pairwise(a, n2) + pairwise(a + n2, n - n2);
}
}  // namespace

float numpy_pairwise_sum(const float* values, size_t n) { return pairwise(values, n); }
double numpy_pairwise_sum(const double* values, size_t n) { return pairwise(values, n); }

}  // namespace nmt::metrics
