// `nmt serve`: translation over HTTP/1.1 with a JSON API. The HTTP side is cpp-httplib
// (Debian's libcpp-httplib-dev; the README says why), the JSON side lib/nmt/serve/api.h, and
// concurrent requests share decoding batches through lib/nmt/serve/batcher.h: handler threads
// queue sentences and wait, and --workers decoding threads search them. The workers share the
// loaded models read-only: loaded in evaluation mode and never switched (decode/search.cc's
// EvalModeGuard only reads the mode then), with every per-request choice (search options,
// which attention is recorded) in the request's decoding options and decoder state.
#include <fcntl.h>
#include <malloc.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cmath>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <thread>

#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <httplib.h>
#include <nlohmann/json.hpp>
#include <torch/version.h>

#include "commands.h"
#include "run_app.h"
#include "option_binder.h"
#include "nmt/decode/strategy.h"
#include "nmt/models/quantize.h"
#include "nmt/serve/options.h"
#include "nmt/util/runtime_options.h"
#include "nmt/decode/translator.h"
#include "nmt/serve/api.h"
#include "nmt/serve/batcher.h"
#include "nmt/tensor/device.h"
#include "nmt/text/unicode.h"
#include "nmt/text/repetition.h"
#include "nmt/tensor/threads.h"
#include "nmt/util/error.h"
#include "nmt/version.h"
#include "nmt/util/io.h"

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
  std::unique_ptr<decode::Translator> translator;
};

// Decodes one batch for the Batcher, exactly as `nmt translate` would decode those lines with
// the same options (greedy for beam 1 and nbest 1, beam search otherwise).
std::vector<serve::Nbest> decode_batch(std::map<std::string, ServedModel>& models, const ServeArgs& a,
                                       const serve::DecodeKey& key, const std::vector<serve::Sentence>& sentences) {
  decode::Translator& t = *models.at(key.model).translator;
  decode::SearchOptions search = a.search;  // the server's length limit, length penalty, α and shrinking
  search.beam = key.beam;
  search.nbest = key.nbest;
  search.batch_size = static_cast<int64_t>(a.max_batch);
  std::vector<std::string> lines;
  std::vector<text::PhraseConstraints> constraints;
  bool any_constraints = false;
  for (const auto& s : sentences) {
    lines.push_back(s.text);
    constraints.push_back(s.constraints);
    any_constraints |= !s.constraints.empty();
  }
  auto options = decode::decode_options(search);
  options.return_token_log_probs = true;  // each answer's confidence
  std::vector<serve::Nbest> out;
  out.reserve(lines.size());
  for (auto& n : t.translate(lines, options, *decode::make_search_strategy(search, key.constrained), nullptr, nullptr,
                             any_constraints ? &constraints : nullptr)) {
    serve::Nbest list;
    for (auto& s : n) list.push_back(decode::scored_text(std::move(s), t.subwords().target));
    out.push_back(std::move(list));
  }
  return out;
}

// Every phrase of the request in the model's subwords, before it is queued: a phrase the model
// cannot write is the client's error (400), not a failure of the batch it would share.
void check_constraints(const serve::TranslateRequest& r, const decode::Translator& translator) {
  for (size_t i = 0; i < r.sentences.size(); ++i) {
    if (r.sentences[i].constraints.empty()) continue;
    try {
      translator.encode_constraints(r.sentences[i].constraints);
    } catch (const UsageError& e) {
      throw serve::ApiError(400, r.list ? fmt::format("sentence {}: {}", i, e.what()) : std::string(e.what()));
    }
  }
}

const char* reason(int status) {
  switch (status) {
    case 400: return "bad request";
    case 401: return "a bearer token is required (Authorization: Bearer KEY)";
    case 404: return "no such endpoint (POST /translate, GET /health, GET /models)";
    case 408: return "request timeout";
    case 413: return "request too large";
    case 414: return "request URI too long";
    case 431: return "request headers too large";
    case 503: return "the server is shutting down";
    default: return status >= 500 ? "internal error" : "request refused";
  }
}

void send_json(httplib::Response& res, int status, const std::string& body) {
  res.status = status;
  res.set_content(body, "application/json");
}

// What the request log line reports, set by the handler on its worker thread (httplib runs a
// request's handler and its logger on one thread).
thread_local std::chrono::steady_clock::time_point request_start;
thread_local bool request_started = false;
thread_local size_t request_sentences = 0;

// SIGINT/SIGTERM write a byte here; a watcher thread then stops the server. (A signal handler
// may run on any thread, OpenBLAS's and LibTorch's included, and may do next to nothing.)
int signal_pipe[2] = {-1, -1};
void on_stop_signal(int) {
  const char c = 's';
  [[maybe_unused]] auto n = ::write(signal_pipe[1], &c, 1);
}

// More descriptors (1,000 clients at once need 1,000 sockets; the soft limit is often 1,024).
void raise_descriptor_limit() {
  rlimit r{};
  if (::getrlimit(RLIMIT_NOFILE, &r) == 0 && r.rlim_cur < r.rlim_max) {
    r.rlim_cur = r.rlim_max;
    ::setrlimit(RLIMIT_NOFILE, &r);
  }
}

// The -m directories by name, loaded, on the device, warmed up.
struct ServedModels {
  std::map<std::string, ServedModel> by_name;
  std::vector<std::string> names;  // in -m order: the first is the default
};

ServedModels load_served_models(const ServeArgs& a) {
  ServedModels m;
  for (const auto& dir : a.model_dirs) {
    const std::string name = model_name(dir);
    if (m.by_name.count(name)) throw UsageError(fmt::format("two -m directories are named \"{}\"; each model is known by its folder's name", name));
    m.names.push_back(name);
    m.by_name[name] = ServedModel{name, dir, nullptr};
  }
  for (auto& [name, served] : m.by_name) {
    served.translator = std::make_unique<decode::Translator>(decode::load_translator({served.dir}, a.runtime));
    served.translator->translate({"Warm-up."}, decode::DecodeOptions{});  // the first decode allocates; not a client's
  }
  return m;
}

// Bytes malloc has handed out and not had back, over all arenas (tensors included: LibTorch's
// CPU allocator is malloc). Beside the process's RSS it tells a leak (this grows) from
// fragmentation or arenas warming up (RSS grows, this does not).
size_t heap_in_use_bytes() {
#if defined(__GLIBC__) && (__GLIBC__ > 2 || (__GLIBC__ == 2 && __GLIBC_MINOR__ >= 33))
  const struct mallinfo2 m = ::mallinfo2();
  return m.uordblks + m.hblkhd;
#else
  return 0;
#endif
}

// What the request handlers share; it outlives the server.
struct ServerContext {
  const ServeArgs& args;
  ServedModels& models;
  serve::Batcher& batcher;
  std::string api_key;
  serve::ApiDefaults defaults;
  serve::ApiLimits limits;
  std::string version = fmt::format("nmt {} (LibTorch {})", kVersion, TORCH_VERSION);
  std::atomic<size_t> requests{0};
  int listen_fd = -1;
};

void configure_connections(httplib::Server& server, ServerContext& c) {
  const size_t http_threads = static_cast<size_t>(c.args.http_threads);
  server.new_task_queue = [http_threads] { return new httplib::ThreadPool(http_threads); };
  server.set_payload_max_length(c.args.max_body_bytes);
  server.set_read_timeout(c.args.timeout_s);
  server.set_write_timeout(c.args.timeout_s);
  server.set_keep_alive_timeout(5);
  server.set_keep_alive_max_count(1000);
  // Without TCP_NODELAY an answer's headers and body leave as two segments and Nagle holds the
  // second until the client's delayed ACK (40 ms on Linux): measured p50 44 ms at 1 connection
  // for a 2.6 ms translation. Accepted sockets inherit it from the listening one.
  server.set_tcp_nodelay(true);
  server.set_socket_options([&c](socket_t sock) {
    int yes = 1;
    ::setsockopt(sock, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof yes);  // not SO_REUSEPORT: a second server must fail to bind
    c.listen_fd = sock;
  });
}

// Every request starts the log line's clock; with --api-key, one without the bearer token is
// answered 401 here, before any route.
void add_authentication(httplib::Server& server, ServerContext& c) {
  server.set_pre_routing_handler([&c](const httplib::Request& req, httplib::Response& res) {
    request_start = std::chrono::steady_clock::now();
    request_started = true;
    request_sentences = 0;
    if (c.api_key.empty()) return httplib::Server::HandlerResponse::Unhandled;
    const std::string auth = req.get_header_value("Authorization");
    const std::string prefix = "Bearer ";
    if (auth.compare(0, prefix.size(), prefix) == 0 && serve::equal_in_constant_time(std::string_view(auth).substr(prefix.size()), c.api_key))
      return httplib::Server::HandlerResponse::Unhandled;
    res.set_header("WWW-Authenticate", "Bearer");
    send_json(res, 401, serve::error_body(401, reason(401)));
    return httplib::Server::HandlerResponse::Handled;
  });
}

void add_routes(httplib::Server& server, ServerContext& c) {
  server.Get("/health", [&c](const httplib::Request&, httplib::Response& res) {
    const auto s = c.batcher.stats();
    nlohmann::json j = {{"status", "ok"}, {"version", c.version}, {"models", c.models.names},
                        {"batches", s.batches}, {"sentences", s.sentences}, {"requests", c.requests.load()},
                        {"heap_in_use_bytes", heap_in_use_bytes()}};
    send_json(res, 200, j.dump());
  });
  server.Get("/models", [&c](const httplib::Request&, httplib::Response& res) {
    nlohmann::json list = nlohmann::json::array();
    for (const auto& name : c.models.names) {
      const auto& m = c.models.by_name.at(name);
      const auto& config = m.translator->loaded().model_config;
      const std::string& quantization = m.translator->loaded().quantization;
      list.push_back({{"name", name}, {"path", m.dir}, {"type", config.type},
                      {"weights", quantization.empty() ? std::string("fp32") : quantization},
                      {"default", name == c.models.names.front()}});
    }
    send_json(res, 200, nlohmann::json{{"models", list}, {"beam", c.args.search.beam}, {"max_beam", c.args.max_beam},
                                       {"max_sentences", c.args.max_sentences}, {"max_body_bytes", c.args.max_body_bytes}}.dump());
  });
  server.Post("/translate", [&c](const httplib::Request& req, httplib::Response& res) {
    try {
      const auto start = std::chrono::steady_clock::now();
      serve::TranslateRequest r = serve::parse_translate_request(req.body, c.defaults, c.limits);
      check_constraints(r, *c.models.by_name.at(r.key.model).translator);
      request_sentences = r.sentences.size();
      auto results = c.batcher.submit(r.key, r.sentences).get();
      const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
      send_json(res, 200, serve::translate_response(r, results, ms));
    } catch (const serve::ApiError& e) {
      send_json(res, e.status(), serve::error_body(e.status(), e.what()));
    } catch (const serve::BatcherStopped& e) {
      send_json(res, 503, serve::error_body(503, e.what()));
    }
  });
}

// Errors httplib answers itself (404, 413 over --max-body-bytes, 400 for a broken request
// line) get a JSON body like ours; handlers' own errors already have one. Then one log line
// per request.
void add_errors_and_log(httplib::Server& server, ServerContext& c) {
  const std::string too_large = fmt::format("the request body is over the {}-byte limit (--max-body-bytes)", c.args.max_body_bytes);
  server.set_error_handler(httplib::Server::HandlerWithResponse([too_large](const httplib::Request&, httplib::Response& res) {
    if (!res.body.empty()) return httplib::Server::HandlerResponse::Unhandled;
    send_json(res, res.status, serve::error_body(res.status, res.status == 413 ? too_large : reason(res.status)));
    return httplib::Server::HandlerResponse::Handled;
  }));
  server.set_exception_handler([](const httplib::Request&, httplib::Response& res, std::exception_ptr ep) {
    std::string what = "internal error";
    try {
      std::rethrow_exception(ep);
    } catch (const std::exception& e) {
      what = first_line(e.what());
    } catch (...) {
    }
    send_json(res, 500, serve::error_body(500, what));
  });
  server.set_logger([&c](const httplib::Request& req, const httplib::Response& res) {
    c.requests.fetch_add(1, std::memory_order_relaxed);
    const double ms = request_started ? std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - request_start).count() : 0.0;
    if (!c.args.runtime.quiet)
      std::fprintf(stderr, "%s %s %d %zu sentences %.1f ms\n", req.method.c_str(), req.path.c_str(), res.status, request_sentences, ms);
    request_started = false;
    request_sentences = 0;
  });
}

// Binds --host:--port (0: any free port); returns the port.
int bind_server(httplib::Server& server, const ServerContext& c) {
  const ServeArgs& a = c.args;
  int port = a.port;
  const bool bound = a.port == 0 ? (port = server.bind_to_any_port(a.host)) > 0 : server.bind_to_port(a.host, a.port);
  if (!bound) throw RuntimeError(fmt::format("cannot listen on {}:{} (address in use, or not an address of this machine?)", a.host, a.port));
  // httplib listens with a backlog of 5; a burst of clients connecting at once (1,000 in the
  // tests) would wait for SYN retries (1 s, 3 s, ...). Linux lets listen() enlarge it.
  if (c.listen_fd >= 0) ::listen(c.listen_fd, SOMAXCONN);
  return port;
}

// Serves until SIGINT/SIGTERM (then finishes the requests in flight) or a failure; true when
// stopped by a signal.
bool serve_until_signal(httplib::Server& server) {
  if (::pipe2(signal_pipe, O_CLOEXEC) != 0) throw RuntimeError("cannot create a pipe for signal handling");
  struct sigaction sa {};
  sa.sa_handler = on_stop_signal;
  ::sigaction(SIGINT, &sa, nullptr);
  ::sigaction(SIGTERM, &sa, nullptr);
  std::atomic<bool> stopped_by_signal{false};
  std::thread watcher([&] {
    char c = 0;
    while (::read(signal_pipe[0], &c, 1) < 0 && errno == EINTR) {
    }
    if (c != 's') return;  // the "done" byte below
    std::signal(SIGINT, SIG_DFL);  // a second Ctrl-C ends the process at once
    std::signal(SIGTERM, SIG_DFL);
    stopped_by_signal = true;
    std::fprintf(stderr, "nmt serve: stopping: finishing the requests in flight\n");
    server.stop();
  });
  const bool listened = server.listen_after_bind();  // returns once stop() has drained the workers
  const char done = 'd';
  [[maybe_unused]] auto n = ::write(signal_pipe[1], &done, 1);
  watcher.join();
  if (!listened && !stopped_by_signal) throw RuntimeError("the server stopped unexpectedly");
  return stopped_by_signal;
}

void run_server(const ServeArgs& a) {
  const std::string api_key = read_api_key(a);
  set_threads(a.runtime.threads);
  ServedModels models = load_served_models(a);

  serve::BatcherOptions bo;
  bo.max_batch = a.max_batch;
  bo.workers = static_cast<size_t>(a.workers);
  bo.wait = std::chrono::microseconds(static_cast<int64_t>(a.batch_wait_ms * 1000));
  bo.on_thread_start = [threads = a.runtime.threads] { set_threads(threads); };  // OpenMP's settings are per thread
  serve::Batcher batcher([&](const serve::DecodeKey& k, const std::vector<serve::Sentence>& l) { return decode_batch(models.by_name, a, k, l); }, bo);
  ServerContext c{a, models, batcher, api_key, serve::ApiDefaults{models.names, static_cast<int>(a.search.beam)},
                  serve::ApiLimits{a.max_sentences, a.max_beam}};

  httplib::Server server;
  configure_connections(server, c);
  add_authentication(server, c);
  add_routes(server, c);
  add_errors_and_log(server, c);
  raise_descriptor_limit();
  std::signal(SIGPIPE, SIG_IGN);  // a client gone mid-answer is a failed write, not the end of the server
  const int port = bind_server(server, c);
  std::fprintf(stderr, "nmt serve: listening on http://%s:%d (models: %s; max batch %zu, batch wait %.1f ms, %d worker(s))\n", a.host.c_str(),
               port, joined(models.names).c_str(), a.max_batch, a.batch_wait_ms, a.workers);
  serve_until_signal(server);
  batcher.stop();
  const auto s = batcher.stats();
  std::fprintf(stderr, "nmt serve: stopped after %zu requests (%zu sentences in %zu batches)\n", c.requests.load(), s.sentences, s.batches);
}

}  // namespace

void add_serve_command(CLI::App& app) {
  auto* cmd = app.add_subcommand("serve", "Serve translations over HTTP (JSON API; concurrent requests share decoding batches)");
  auto flags = std::make_shared<ServeFlags>(cmd);
  cmd->callback([flags] { run_server(flags->args()); });
}

}  // namespace nmt::cli
