// `nmt serve`: the options, the models loaded as a serve::Backend over the translation service, and
// lib/nmt/serve/server.h's HTTP server started on them. The workers share the loaded models
// read-only: loaded in evaluation mode and never switched (decode/search.cc's EvalModeGuard only
// reads the mode then), with every per-request choice (search options, which attention is
// recorded) in the request's decoding options and decoder state.
#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <map>
#include <memory>

#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "commands.h"
#include "option_binder.h"
#include "nmt/decode/service.h"
#include "nmt/serve/api.h"
#include "nmt/serve/options.h"
#include "nmt/serve/server.h"
#include "nmt/tensor/threads.h"
#include "nmt/text/unicode.h"
#include "nmt/util/error.h"
#include "nmt/util/io.h"
#include "nmt/util/runtime_options.h"
#include "nmt/version.h"

namespace nmt::cli {

namespace {

// What `nmt serve` is told: its own options (serve/options.h), the search options requests may
// leave out (--beam: the default of requests that name none), and the runtime options (--threads:
// each decoding worker's).
struct ServeArgs : serve::ServeOptions {
  std::vector<std::string> model_dirs;
  decode::SearchOptions search;
  RuntimeOptions runtime;
};

class ServeFlags {
 public:
  explicit ServeFlags(CLI::App* cmd)
      : model_(add_model_option(cmd, dirs_, ModelList::kServed)),
        server_(cmd, serve::serve_option_specs()),
        search_(cmd, decode::search_option_specs(), {},
                // nbest is the request's; batches are --max-batch; no sampling.
                OptionUse{{},
                          {"nbest", "batch_size", "sampling", "temperature", "seed"},
                          {{"beam", "Beam size when a request names none (1 = greedy decoding)"}}}),
        runtime_(cmd, runtime_option_specs(), {},
                 OptionUse{{},
                           {},
                           {{"threads", "Each decoding worker's LibTorch/BLAS threads (0 = default)"},
                            {"quiet", "No log line per request on stderr (start, stop and errors still shown)"}}}) {}

  // The options given, checked before any model is loaded.
  ServeArgs args() const {
    ServeArgs a;
    a.model_dirs = dirs_;
    server_.apply(a);
    search_.apply(a.search);
    a.runtime = runtime_.checked();
    decode::validate_search_options(a.search, flag_of);
    serve::validate_serve_options(a, a.search.beam, flag_of);
    return a;
  }

 private:
  std::vector<std::string> dirs_;
  CLI::Option* model_;
  OptionBinder<serve::ServeOptions> server_;
  OptionBinder<decode::SearchOptions> search_;
  OptionBinder<RuntimeOptions> runtime_;
};

// The bearer token every request must carry, or "" for none. A key file's first line, so that
// the key need not appear in `ps` output or the shell's history.
std::string read_api_key(const ServeArgs& a) {
  std::string key = a.api_key;
  if (!a.api_key_file.empty()) {
    const std::string text = read_file(a.api_key_file);
    key = std::string(text::python_strip(std::string_view(text).substr(0, text.find('\n'))));
    if (key.empty()) throw UsageError(fmt::format("--api-key-file {}: the first line is empty", a.api_key_file));
  }
  return key;
}

// A model's name in requests: its directory's name (`-m runs/en-fr/` is "en-fr").
std::string model_name(const std::string& dir) {
  auto p = std::filesystem::path(dir).lexically_normal();
  if (p.filename().empty()) p = p.parent_path();
  return p.filename().string();
}

std::string joined(const std::vector<std::string>& names) {
  std::string s;
  for (const auto& n : names) s += (s.empty() ? "" : ", ") + n;
  return s;
}

struct ServedModel {
  std::string name, dir;
  std::unique_ptr<decode::TranslationService> service;
};

// One batch for the Batcher, exactly as `nmt translate` would translate those lines with the
// same options (greedy for beam 1 and nbest 1, beam search otherwise).
std::vector<serve::Nbest> decode_batch(decode::TranslationService& service, const ServeArgs& a,
                                       const serve::DecodeKey& key, const std::vector<serve::Sentence>& sentences) {
  decode::SearchOptions search = a.search;  // the server's length limit, length penalty, α and shrinking
  search.beam = key.beam;
  search.nbest = key.nbest;
  if (!key.search.empty()) {  // the request's own, checked when it was read (serve/api.cc)
    const auto own = nlohmann::json::parse(key.search);
    for (const auto& spec : decode::search_option_specs()) spec.from_json(search, own);
  }
  search.batch_size = std::max<int64_t>(1, static_cast<int64_t>(sentences.size()));  // the batcher's batch, decoded as one
  std::vector<decode::TranslationRequest> requests;
  for (const auto& s : sentences) requests.push_back({s.text, s.prefix, s.constraints});
  decode::ResultOptions fields;
  fields.constrained = key.constrained;
  fields.token_log_probs = true;  // each answer's confidence
  fields.split_sentences = true;  // a text may be a paragraph
  fields.markup = key.markup;
  fields.alignment = key.alignment;
  return service.translate(requests, search, fields);
}

// Every phrase of the request in the model's subwords, before it is queued: a phrase the model
// cannot write is the client's error (400), not a failure of the batch it would share.
void check_constraints(const serve::TranslateRequest& r, const decode::TranslationService& service) {
  for (size_t i = 0; i < r.sentences.size(); ++i) {
    if (r.sentences[i].constraints.empty()) continue;
    try {
      service.check_phrases(r.sentences[i].constraints);
    } catch (const UsageError& e) {
      throw serve::ApiError(400, r.list ? fmt::format("sentence {}: {}", i, e.what()) : std::string(e.what()));
    }
  }
}

// The served models over the translation service, for serve::Server.
class TranslatorBackend : public serve::Backend {
 public:
  explicit TranslatorBackend(const ServeArgs& a) : args_(a) {
    for (const auto& dir : a.model_dirs) {
      const std::string name = model_name(dir);
      if (models_.count(name))
        throw UsageError(fmt::format("two -m directories are named \"{}\"; each model is known by its folder's name", name));
      models_[name] = ServedModel{name, dir, nullptr};
      info_.push_back({name, dir, "", "", "", ""});
    }
    for (auto& info : info_) {
      ServedModel& served = models_.at(info.name);
      served.service = std::make_unique<decode::TranslationService>(std::vector<std::string>{served.dir}, a.runtime);
      served.service->translate({{"Warm-up.", {}, {}}}, decode::SearchOptions{});  // the first decode allocates; not a client's
      const models::ModelInfo& loaded = served.service->members().front();
      info.type = loaded.model_config.type;
      info.weights = loaded.quantization.empty() ? std::string("fp32") : loaded.quantization;
      info.source_language = served.service->source_language();
      info.target_language = served.service->target_language();
    }
  }
  const std::vector<serve::ServedModelInfo>& models() const override { return info_; }
  void check(const serve::TranslateRequest& r) const override { check_constraints(r, *models_.at(r.key.model).service); }
  std::vector<serve::Nbest> decode(const serve::DecodeKey& key, const std::vector<serve::Sentence>& s) override {
    return decode_batch(*models_.at(key.model).service, args_, key, s);
  }
  void on_worker_start() override { set_threads(args_.runtime.threads); }  // OpenMP's settings are per thread

 private:
  const ServeArgs& args_;
  std::map<std::string, ServedModel> models_;
  std::vector<serve::ServedModelInfo> info_;  // in -m order: the first is the default
};

void run_server(const ServeArgs& a) {
  serve::ServerSettings settings;
  settings.options = a;
  settings.api_key = read_api_key(a);
  settings.default_beam = static_cast<int>(a.search.beam);
  settings.search = a.search;
  settings.version = fmt::format("nmt {} ({})", kVersion, decode::decoder_library());
  settings.quiet = a.runtime.quiet;
  set_threads(a.runtime.threads);
  TranslatorBackend backend(a);
  serve::Server server(settings, backend);
  const int port = server.bind();
  std::vector<std::string> names;
  for (const auto& m : backend.models()) names.push_back(m.name);
  std::fprintf(stderr, "nmt serve: listening on http://%s:%d (models: %s; max batch %zu, batch wait %.1f ms, %d worker(s))\n",
               a.host.c_str(), port, joined(names).c_str(), a.max_batch, a.batch_wait_ms, a.workers);
  server.serve_until_signal();
  const auto s = server.batches();
  std::fprintf(stderr, "nmt serve: stopped after %zu requests (%zu sentences in %zu batches)\n", server.requests(),
               s.sentences, s.batches);
}

}  // namespace

void add_serve_command(CLI::App& app) {
  auto* cmd = app.add_subcommand("serve", "Serve translations over HTTP (JSON API; concurrent requests share decoding batches)");
  auto flags = std::make_shared<ServeFlags>(cmd);
  cmd->callback([flags] { run_server(flags->args()); });
}

}  // namespace nmt::cli
