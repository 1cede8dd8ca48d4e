// nmt._translate: nmt's translation service (lib/nmt/decode/service.h) on its CPU engine, for
// Python, without LibTorch. The Python API (argument checks, result classes, docstrings) is
// lib/python/nmt/_translator.py; this file converts once per call and translates with the GIL
// released, so Python threads sharing one translator decode in parallel.
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include <Python.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>
#include <nlohmann/json.hpp>

#include "nmt/decode/documents.h"
#include "nmt/decode/service.h"
#include "nmt/doc/html.h"
#include "nmt/models/architecture.h"
#include "nmt/models/marian_import.h"
#include "nmt/tensor/threads.h"
#include "nmt/util/error.h"
#include "nmt/util/io.h"
#include "nmt/version.h"

namespace py = pybind11;
using namespace nmt;

namespace {

// The search options from keyword arguments named as config files and the server name them
// (search_options.h: beam, nbest, alpha, length_penalty, max_len_a, ...), checked as the CLI
// checks its flags (ValueError naming the argument).
decode::SearchOptions search_options_of(const std::string& json) {
  decode::SearchOptions search;
  const auto given = nlohmann::json::parse(json);
  try {
    for (const auto& spec : decode::search_option_specs()) spec.from_json(search, given);
  } catch (const RuntimeError& e) {  // a value of the wrong kind: the caller's argument
    throw UsageError(e.what());
  }
  decode::validate_search_options(search, [](const std::string& key) { return key; });
  return search;
}

// A hypothesis as translate_batch's Translation takes it; without `scores`, the figures that
// need every token's log-probability are None (greedy search does not compute them then).
py::dict result_dict(const decode::TranslationResult& r, bool alignment, bool scores) {
  py::dict d;
  const auto figure = [scores](double v) { return scores ? py::object(py::float_(v)) : py::object(py::none()); };
  d["text"] = r.text;
  d["tokens"] = r.tokens;
  d["token_ids"] = r.token_ids;
  d["score"] = figure(r.score);
  d["log_prob"] = figure(r.log_prob);
  d["confidence"] = figure(r.confidence);
  d["token_log_probs"] = scores ? py::cast(r.token_log_probs) : py::object(py::none());
  d["repetition"] = r.repetition;
  d["unmet_constraints"] = r.unmet_constraints;
  d["alignment"] = alignment ? py::object(py::str(r.alignment)) : py::object(py::none());
  d["warnings"] = r.warnings;
  return d;
}

// One loaded model or ensemble. Read-only once built: Python threads share it.
class Service {
 public:
  Service(const std::vector<std::string>& dirs, bool int8, int threads) {
    RuntimeOptions runtime;
    runtime.int8 = int8;
    runtime.threads = threads;
    runtime.device = "cpu";
    runtime.engine = "native";
    set_threads(threads);
    py::gil_scoped_release released;
    service_ = std::make_unique<decode::TranslationService>(dirs, runtime);
  }

  std::vector<std::vector<py::dict>> translate(const std::vector<std::string>& texts,
                                               const std::vector<std::string>& prefixes,
                                               const std::vector<std::vector<std::string>>& include,
                                               const std::vector<std::vector<std::string>>& avoid,
                                               const std::string& search_json, bool alignment, bool markup,
                                               bool split_sentences, bool scores) {
    decode::SearchOptions search = search_options_of(search_json);
    std::vector<decode::TranslationRequest> requests(texts.size());
    bool constrained = false;
    for (size_t i = 0; i < texts.size(); ++i) {
      requests[i].source = texts[i];
      if (!prefixes.empty()) requests[i].prefix = prefixes[i];
      if (!include.empty()) requests[i].constraints.include = include[i];
      if (!avoid.empty()) requests[i].constraints.avoid = avoid[i];
      constrained |= !requests[i].constraints.include.empty();
      if (!requests[i].constraints.empty()) service_->check_phrases(requests[i].constraints);
    }
    decode::ResultOptions fields;
    fields.constrained = constrained;
    fields.token_log_probs = scores;
    fields.alignment = alignment;
    fields.markup = markup;
    fields.split_sentences = split_sentences && !markup;
    fields.on_batch_done = [](size_t) {  // Ctrl-C stops the call between batches
      py::gil_scoped_acquire held;
      if (PyErr_CheckSignals() != 0) throw py::error_already_set();
    };
    std::vector<decode::Nbest> results;
    {
      py::gil_scoped_release released;
      results = service_->translate(requests, search, fields);
    }
    std::vector<std::vector<py::dict>> out(results.size());
    for (size_t i = 0; i < results.size(); ++i)
      for (const auto& r : results[i]) out[i].push_back(result_dict(r, alignment, scores));
    return out;
  }

  std::vector<std::pair<double, std::vector<double>>> score(const std::vector<std::string>& sources,
                                                            const std::vector<std::string>& targets,
                                                            const std::string& search_json) {
    const decode::SearchOptions search = search_options_of(search_json);
    std::vector<decode::PairScore> scores;
    {
      py::gil_scoped_release released;
      scores = service_->score(sources, targets, search);
    }
    std::vector<std::pair<double, std::vector<double>>> out;
    for (auto& s : scores) out.emplace_back(s.log_prob, std::move(s.token_log_probs));
    return out;
  }

  // An HTML page with its text translated (doc/html.h).
  std::string translate_html(const std::string& html, const std::string& search_json) {
    const decode::SearchOptions search = search_options_of(search_json);
    py::gil_scoped_release released;
    return decode::translate_html_page(*service_, doc::plan_html(html), search);
  }

  py::dict info() const {
    py::dict d;
    std::vector<std::string> dirs, types;
    for (const auto& m : service_->members()) {
      dirs.push_back(m.dir);
      types.push_back(m.model_config.type);
    }
    d["models"] = dirs;
    d["types"] = types;
    d["weights"] = service_->int8_note().empty() ? "float32" : "int8";
    d["source_language"] = service_->source_language();
    d["target_language"] = service_->target_language();
    return d;
  }

 private:
  std::unique_ptr<decode::TranslationService> service_;
};

}  // namespace

PYBIND11_MODULE(_translate, m) {
  m.doc() = "nmt's translation service on its CPU engine (the API is nmt.Translator)";
  m.attr("version") = kVersion;
  m.attr("decoder") = decode::decoder_library();
  // nmt's one-line errors as Python's: a usage error is a ValueError, the rest RuntimeError (a
  // missing model directory is checked in Python, FileNotFoundError).
  py::register_exception_translator([](std::exception_ptr p) {
    try {
      if (p) std::rethrow_exception(p);
    } catch (const UsageError& e) {
      PyErr_SetString(PyExc_ValueError, first_line(e.what()).c_str());
    } catch (const RuntimeError& e) {
      PyErr_SetString(PyExc_RuntimeError, first_line(e.what()).c_str());
    } catch (const nlohmann::json::exception& e) {
      PyErr_SetString(PyExc_ValueError, e.what());
    }
  });
  // `nmt import`: the summary as a dict; the GIL released while the weights are read and written.
  m.def(
      "import_marian",
      [](const std::string& hf_dir, const std::string& out_dir, bool force) {
        models::ImportSummary s;
        {
          py::gil_scoped_release release;
          s = models::import_marian(hf_dir, out_dir, force);
        }
        py::dict d;
        d["weights_file"] = s.weights_file;
        d["parameters"] = s.parameters;
        d["vocabulary"] = s.vocabulary;
        d["notes"] = s.notes;
        d["seconds"] = s.seconds;
        return d;
      },
      py::arg("hf_dir"), py::arg("out_dir"), py::arg("force"));
  py::class_<Service>(m, "Service")
      .def(py::init<const std::vector<std::string>&, bool, int>(), py::arg("dirs"), py::arg("int8"), py::arg("threads"))
      .def("translate", &Service::translate)
      .def("score", &Service::score)
      .def("translate_html", &Service::translate_html)
      .def("info", &Service::info);
}
