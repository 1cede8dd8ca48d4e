// nmt_score._core: nmt's sacreBLEU 2.6.0 port (lib/nmt/metrics, torch-free) for Python. The
// sacreBLEU-shaped API (classes, argument checks, signatures) is Python in nmt_score/; this file
// only converts lists of str to C++ once per call and scores with the GIL released.
#include <optional>
#include <string>
#include <string_view>
#include <tuple>
#include <type_traits>
#include <vector>

#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include "nmt/metrics/bleu.h"
#include "nmt/metrics/chrf.h"
#include "nmt/metrics/sacrebleu_report.h"
#include "nmt/metrics/significance.h"
#include "nmt/metrics/ter.h"
#include "nmt/metrics/tokenizer.h"
#include "nmt/util/error.h"

namespace py = pybind11;
using namespace nmt::metrics;

namespace {

// References as sacreBLEU takes them: streams of lines, a line None where a segment has fewer
// references ("variable number of references").
using Streams = std::vector<std::vector<std::optional<std::string>>>;

// Segment i's references: line i of each stream, the None lines left out.
struct SegmentReferences {
  std::vector<std::vector<std::string>> segments;
  long num_refs = 0;  // -1: varies between segments (signature "nrefs:var")
  bool rectangular = true;  // no None: the streams can go to corpus_score as they are
};

SegmentReferences by_segment(const std::string& metric, const Streams& streams, size_t n_hyps) {
  SegmentReferences out;
  for (size_t k = 0; k < streams.size(); ++k)
    if (streams[k].size() != n_hyps)
      throw py::value_error(metric + ": " + std::to_string(n_hyps) + " hypotheses but reference stream " +
                            std::to_string(k + 1) + " has " + std::to_string(streams[k].size()) + " lines");
  out.segments.resize(n_hyps);
  for (size_t i = 0; i < n_hyps; ++i) {
    for (const auto& stream : streams)
      if (stream[i]) out.segments[i].push_back(*stream[i]);
      else out.rectangular = false;
    const long n = static_cast<long>(out.segments[i].size());
    out.num_refs = i == 0 ? n : (n == out.num_refs ? n : -1);
  }
  return out;
}

// The streams as the resampling code takes them: every line present. (Called where by_segment
// found no None, or by the tests, which refuse a None instead of reading through it.)
std::vector<std::vector<std::string>> rectangular_streams(const Streams& streams) {
  std::vector<std::vector<std::string>> out(streams.size());
  for (size_t k = 0; k < streams.size(); ++k)
    for (const auto& line : streams[k]) {
      if (!line)
        throw py::value_error("bootstrap and paired tests need every reference line: reference stream " +
                              std::to_string(k + 1) + " holds None (a variable number of references)");
      out[k].push_back(*line);
    }
  return out;
}

using BleuTuple = std::tuple<double, std::vector<int64_t>, std::vector<int64_t>, std::vector<double>, double, double,
                             int64_t, int64_t>;
BleuTuple as_tuple(const BleuScore& s) {
  return {s.score, s.counts, s.totals, s.precisions, s.bp, s.ratio, s.sys_len, s.ref_len};
}

// A str's UTF-8 bytes, held by the str itself (no copy). A str that has none (a lone
// surrogate) raises TypeError, as pybind11's string caster does, which the Python side turns
// into a message naming the line.
std::string_view utf8_of(py::handle text) {
  Py_ssize_t size = 0;
  const char* data = PyUnicode_Check(text.ptr()) ? PyUnicode_AsUTF8AndSize(text.ptr(), &size) : nullptr;
  if (!data) {
    PyErr_Clear();
    throw py::type_error("expected a str that can be encoded as UTF-8");
  }
  return {data, static_cast<size_t>(size)};
}

template <typename T>
py::list list_of(const std::vector<T>& values) {
  py::list out(values.size());
  for (size_t i = 0; i < values.size(); ++i) {
    PyObject* item = std::is_floating_point_v<T> ? PyFloat_FromDouble(static_cast<double>(values[i]))
                                                 : PyLong_FromLongLong(static_cast<long long>(values[i]));
    if (!item) throw py::error_already_set();
    PyList_SET_ITEM(out.ptr(), static_cast<Py_ssize_t>(i), item);
  }
  return out;
}

// BLEU.sentence_score's C++ half, _core.bleu_sentence(scorer, hyp, refs) -> (score, counts,
// totals, precisions, bp, ratio, sys_len, ref_len), refs a list of str. Called once per
// sentence, so it is a plain CPython fast-call function: pybind11's dispatcher and generic
// casters took 1.3 us of a 3.3 us call on Multi30k's sentences.
PyObject* bleu_sentence(PyObject*, PyObject* const* args, Py_ssize_t nargs) {
  try {
    if (nargs != 3 || !PyList_Check(args[2])) throw py::type_error("bleu_sentence(scorer, hyp, refs: list of str)");
    const BleuScorer& scorer = py::handle(args[0]).cast<const BleuScorer&>();
    const std::string_view hypothesis = utf8_of(args[1]);
    thread_local std::vector<std::string_view> references;
    references.clear();
    for (Py_ssize_t k = 0; k < PyList_GET_SIZE(args[2]); ++k) references.push_back(utf8_of(PyList_GET_ITEM(args[2], k)));
    const BleuOptions& o = scorer.options();  // sentence_score without its signature string
    const BleuScore s = compute_bleu(scorer.segment_stats_of_views(hypothesis, references), o.smooth_method,
                                     o.smooth_value, o.effective_order, o.max_ngram_order);
    return py::make_tuple(s.score, list_of(s.counts), list_of(s.totals), list_of(s.precisions), s.bp, s.ratio,
                          s.sys_len, s.ref_len)
        .release()
        .ptr();
  } catch (py::error_already_set& e) {
    e.restore();
  } catch (py::builtin_exception& e) {
    e.set_error();
  } catch (const std::exception& e) {  // nmt's UsageError and Utf8Error: messages for the user
    PyErr_SetString(PyExc_ValueError, e.what());
  }
  return nullptr;
}

PyMethodDef kBleuSentence = {"bleu_sentence", reinterpret_cast<PyCFunction>(reinterpret_cast<void*>(&bleu_sentence)),
                             METH_FASTCALL, "BLEU of one sentence: (scorer, hyp, refs) -> tuple"};

BleuScorer make_bleu(const std::string& tokenize, bool lowercase, const std::string& smooth_method,
                     std::optional<double> smooth_value, bool effective_order, int max_ngram_order) {
  BleuOptions o;
  o.tokenize = parse_tokenizer(tokenize);
  o.lowercase = lowercase;
  o.smooth_method = parse_smooth_method(smooth_method);
  o.smooth_value = smooth_value;
  o.effective_order = effective_order;
  o.max_ngram_order = max_ngram_order;
  return BleuScorer(o);
}

// Corpus statistics summed over segments (the None-aware path; corpus_score is the fast one).
template <typename Scorer, typename Stats>
Stats summed_stats(const Scorer& scorer, const std::vector<std::string>& hyps, const SegmentReferences& refs) {
  Stats total;
  for (size_t i = 0; i < hyps.size(); ++i) total += scorer.segment_stats(hyps[i], refs.segments[i]);
  return total;
}

BleuTuple bleu_corpus(const BleuScorer& scorer, const std::vector<std::string>& hyps, const Streams& streams) {
  const SegmentReferences refs = by_segment("BLEU", streams, hyps.size());
  py::gil_scoped_release unlocked;
  if (refs.rectangular) return as_tuple(scorer.corpus_score(hyps, rectangular_streams(streams)));
  BleuStats total = summed_stats<BleuScorer, BleuStats>(scorer, hyps, refs);
  const BleuOptions& o = scorer.options();
  return as_tuple(compute_bleu(total, o.smooth_method, o.smooth_value, o.effective_order, o.max_ngram_order));
}

double chrf_corpus(const ChrfScorer& scorer, const std::vector<std::string>& hyps, const Streams& streams) {
  const SegmentReferences refs = by_segment("CHRF", streams, hyps.size());
  py::gil_scoped_release unlocked;
  if (refs.rectangular) return scorer.corpus_score(hyps, rectangular_streams(streams)).score;
  ChrfStats total;
  total.values.assign(3 * (scorer.options().char_order + scorer.options().word_order), 0);
  for (size_t i = 0; i < hyps.size(); ++i) total += scorer.segment_stats(hyps[i], refs.segments[i]);
  return scorer.f_score(total);
}

std::tuple<double, double, double> ter_corpus(const TerScorer& scorer, const std::vector<std::string>& hyps,
                                              const Streams& streams) {
  const SegmentReferences refs = by_segment("TER", streams, hyps.size());
  py::gil_scoped_release unlocked;
  TerStats total;
  for (size_t i = 0; i < hyps.size(); ++i) {
    const TerStats s = scorer.segment_stats(hyps[i], refs.segments[i]);
    total.num_edits += s.num_edits;
    total.ref_length += s.ref_length;
  }
  const TerScore score = scorer.score_from_stats(total, refs.segments.empty() ? 1 : refs.segments[0].size());
  return {score.score, total.num_edits, total.ref_length};
}

std::unique_ptr<ResamplingMetric> resampling(const py::object& scorer, const std::vector<std::vector<std::string>>& refs) {
  if (py::isinstance<BleuScorer>(scorer)) return make_bleu_metric(scorer.cast<const BleuScorer&>(), refs);
  if (py::isinstance<ChrfScorer>(scorer)) return make_chrf_metric(scorer.cast<const ChrfScorer&>(), refs);
  return make_ter_metric(scorer.cast<const TerScorer&>(), refs);
}

py::object number(const std::optional<PyNumber>& n) { return n ? py::object(py::float_(n->value)) : py::object(py::none()); }

// PairedTest: one (score, p_value, mean, ci) per system, systems[0] the baseline.
std::vector<py::tuple> paired_test(const py::object& scorer, const Streams& streams,
                                   const std::vector<std::vector<std::string>>& systems, const std::string& test_type,
                                   size_t n) {
  for (const auto& s : systems) by_segment("PairedTest", streams, s.size());
  const std::vector<std::vector<std::string>> refs = rectangular_streams(streams);
  const std::unique_ptr<ResamplingMetric> metric = resampling(scorer, refs);
  const TestSeed seed = test_seed_from_environment();
  std::vector<PairedResult> results;
  {
    py::gil_scoped_release unlocked;
    std::vector<SegmentStats> stats;
    for (const auto& s : systems) stats.push_back(metric->statistics(s));
    results = test_type == "bs" ? paired_bootstrap(*metric, stats, n, seed)
                                : paired_approximate_randomization(*metric, stats, n, seed);
  }
  std::vector<py::tuple> out;
  for (const PairedResult& r : results)
    out.push_back(py::make_tuple(r.score, r.p_value ? py::float_(*r.p_value) : py::object(py::none()), number(r.mean),
                                 number(r.ci)));
  return out;
}

// Metric.corpus_score(n_bootstrap=n): (mean, ci, seed label).
std::tuple<double, double, std::string> bootstrap_ci(const py::object& scorer, const Streams& streams,
                                                     const std::vector<std::string>& hyps, size_t n) {
  by_segment("bootstrap", streams, hyps.size());
  const std::vector<std::vector<std::string>> refs = rectangular_streams(streams);
  const std::unique_ptr<ResamplingMetric> metric = resampling(scorer, refs);
  const TestSeed seed = test_seed_from_environment();
  py::gil_scoped_release unlocked;
  const ConfidenceInterval ci = bootstrap_confidence(*metric, metric->statistics(hyps), n, seed);
  return {ci.mean.value, ci.ci.value, seed.label()};
}

}  // namespace

PYBIND11_MODULE(_core, m) {
  m.doc() = "nmt's sacreBLEU 2.6.0 metrics in C++ (use the nmt_score package, not this module)";
  py::register_exception_translator([](std::exception_ptr p) {
    try {
      if (p) std::rethrow_exception(p);
    } catch (const nmt::UsageError& e) {
      PyErr_SetString(PyExc_ValueError, e.what());
    } catch (const nmt::RuntimeError& e) {
      PyErr_SetString(PyExc_ValueError, e.what());
    }
  });

  py::class_<BleuScorer>(m, "BleuScorer")
      .def(py::init(&make_bleu), py::arg("tokenize"), py::arg("lowercase"), py::arg("smooth_method"),
           py::arg("smooth_value"), py::arg("effective_order"), py::arg("max_ngram_order"))
      .def("signature", [](const BleuScorer& s, size_t n) { return s.signature(n); })
      .def("corpus", &bleu_corpus)

      .def("tokenize", [](const BleuScorer& s, const std::string& line) {
        return tokenize(s.options().tokenize, line);
      });
  m.add_object("bleu_sentence", py::reinterpret_steal<py::object>(PyCFunction_New(&kBleuSentence, nullptr)));
  m.def("compute_bleu", [](const std::vector<int64_t>& correct, const std::vector<int64_t>& total, int64_t sys_len,
                           int64_t ref_len, const std::string& smooth_method, std::optional<double> smooth_value,
                           bool effective_order, int max_ngram_order) {
    BleuStats stats;
    stats.counts = correct;
    stats.totals = total;
    stats.sys_len = sys_len;
    stats.ref_len = ref_len;
    stats.counts.resize(static_cast<size_t>(max_ngram_order), 0);
    stats.totals.resize(static_cast<size_t>(max_ngram_order), 0);
    return as_tuple(compute_bleu(stats, parse_smooth_method(smooth_method), smooth_value, effective_order, max_ngram_order));
  });

  py::class_<ChrfScorer>(m, "ChrfScorer")
      .def(py::init([](int char_order, int word_order, int beta, bool lowercase, bool whitespace, bool eps_smoothing) {
             return ChrfScorer(ChrfOptions{char_order, word_order, beta, lowercase, whitespace, eps_smoothing});
           }),
           py::arg("char_order"), py::arg("word_order"), py::arg("beta"), py::arg("lowercase"), py::arg("whitespace"),
           py::arg("eps_smoothing"))
      .def("signature", [](const ChrfScorer& s, size_t n) { return s.signature(n); })
      .def("name", &ChrfScorer::name)
      .def("corpus", &chrf_corpus)
      .def("sentence", [](const ChrfScorer& s, const std::string& hyp, const std::vector<std::string>& refs) {
        return s.sentence_score(hyp, refs).score;
      });

  py::class_<TerScorer>(m, "TerScorer")
      .def(py::init([](bool normalized, bool no_punct, bool asian_support, bool case_sensitive) {
             return TerScorer(TerOptions{normalized, no_punct, asian_support, case_sensitive});
           }),
           py::arg("normalized"), py::arg("no_punct"), py::arg("asian_support"), py::arg("case_sensitive"))
      .def("signature", [](const TerScorer& s, size_t n) { return s.signature(n); })
      .def("corpus", &ter_corpus)
      .def("sentence", [](const TerScorer& s, const std::string& hyp, const std::vector<std::string>& refs) {
        const TerStats st = s.segment_stats(hyp, refs);
        return std::make_tuple(s.score_from_stats(st, refs.size()).score, st.num_edits, st.ref_length);
      })
      .def("tokenize", [](const TerScorer& s, const std::string& line) { return tercom_tokenize(line, s.options()); });

  m.def("paired_test", &paired_test);
  m.def("bootstrap_ci", &bootstrap_ci);
  m.def("short_signature", &short_signature);
  m.attr("SACREBLEU_VERSION") = kSacreBleuVersion;
}
