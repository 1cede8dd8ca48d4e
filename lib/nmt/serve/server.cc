#include "nmt/serve/server.h"

#include <fcntl.h>
#include <malloc.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <future>
#include <map>
#include <memory>
#include <mutex>
#include <thread>

#include <fmt/format.h>
#include <httplib.h>
#include <nlohmann/json.hpp>

#include "nmt/decode/paragraphs.h"
#include "nmt/doc/html.h"
#include "nmt/serve/libretranslate.h"
#include "nmt/serve/metrics.h"
#include "nmt/serve/web_page.h"
#include "nmt/text/sentence_split.h"
#include "nmt/util/error.h"

namespace nmt::serve {

namespace {

const char* reason(int status) {
  switch (status) {
    case 400: return "bad request";
    case 401: return "a bearer token is required (Authorization: Bearer KEY)";
    case 404: return "no such endpoint (POST /translate, GET /health, GET /models, GET /metrics; LibreTranslate's GET /languages, GET /frontend/settings)";
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

BatcherOptions batcher_options(const ServeOptions& o, Backend& backend) {
  BatcherOptions bo;
  bo.max_batch = o.max_batch;
  bo.workers = static_cast<size_t>(o.workers);
  bo.wait = std::chrono::microseconds(static_cast<int64_t>(o.batch_wait_ms * 1000));
  bo.on_thread_start = [&backend] { backend.on_worker_start(); };
  return bo;
}

// A request's body, and its fields when it is a form (urlencoded or multipart). False when
// the body could not be read (over --max-body-bytes: httplib has set the response's 413).
bool read_form(const httplib::Request& req, const httplib::ContentReader& read, std::string& body, FormFields& form) {
  if (req.is_multipart_form_data()) {
    httplib::MultipartFormDataItems parts;
    const bool complete = read(
        [&](const httplib::MultipartFormData& header) {
          parts.push_back(header);
          return true;
        },
        [&](const char* data, size_t size) {
          parts.back().content.append(data, size);
          return true;
        });
    for (const auto& part : parts) form.emplace(part.name, part.content);
    return complete;
  }
  const bool complete = read([&](const char* data, size_t size) {
    body.append(data, size);
    return true;
  });
  if (complete && req.get_header_value("Content-Type").rfind("application/x-www-form-urlencoded", 0) == 0) {
    httplib::Params fields;
    httplib::detail::parse_query_text(body, fields);
    form.insert(fields.begin(), fields.end());
  }
  return complete;
}

ApiDefaults api_defaults(const ServerSettings& s, const Backend& backend) {
  ApiDefaults d;
  for (const auto& m : backend.models()) d.models.push_back(m.name);
  d.beam = s.default_beam;
  d.search = s.search;
  return d;
}

}  // namespace

struct Server::Impl {
  Impl(ServerSettings s, Backend& b)
      : settings(std::move(s)),
        backend(b),
        batcher([&b](const DecodeKey& k, const std::vector<Sentence>& l) { return b.decode(k, l); },
                batcher_options(settings.options, b)),
        defaults(api_defaults(settings, b)),
        limits{settings.options.max_sentences, settings.options.max_beam} {
    configure_connections();
    add_authentication();
    add_routes();
    add_libretranslate_routes();
    add_cors();
    add_errors_and_log();
  }

  void configure_connections();
  void add_authentication();
  void add_routes();
  void add_libretranslate_routes();
  void add_cors();
  void add_errors_and_log();
  bool authorized(const httplib::Request& req) const;
  void refuse_unauthorized(httplib::Response& res) const;
  void translate_nmt(const std::string& body, httplib::Response& res);
  void stream_translation(const TranslateRequest& r, httplib::Response& res);
  std::vector<Nbest> translate_html(const DecodeKey& key, const std::vector<Sentence>& pages);
  const text::SentenceSplitter& splitter_of(const std::string& model);
  void translate_libretranslate(const httplib::Request& req, const std::string& body, const FormFields& form,
                                httplib::Response& res);

  ServerSettings settings;
  Backend& backend;
  Batcher batcher;
  ApiDefaults defaults;
  ApiLimits limits;
  const std::string too_large =
      fmt::format("the request body is over the {}-byte limit (--max-body-bytes)", settings.options.max_body_bytes);
  httplib::Server http;
  ServerMetrics metrics;
  std::mutex splitters_mutex;
  std::map<std::string, std::unique_ptr<text::SentenceSplitter>> splitters;  // by language
  std::atomic<size_t> requests{0};
  int listen_fd = -1;
  std::atomic<bool> serving{false}, served{false}, stop_requested{false};
};

void Server::Impl::configure_connections() {
  const ServeOptions& o = settings.options;
  const size_t http_threads = static_cast<size_t>(o.http_threads);
  http.new_task_queue = [http_threads] { return new httplib::ThreadPool(http_threads); };
  http.set_payload_max_length(o.max_body_bytes);
  http.set_read_timeout(o.timeout_s);
  http.set_write_timeout(o.timeout_s);
  http.set_keep_alive_timeout(5);
  http.set_keep_alive_max_count(1000);
  // Without TCP_NODELAY an answer's headers and body leave as two segments and Nagle holds the
  // second until the client's delayed ACK (40 ms on Linux): measured p50 44 ms at 1 connection
  // for a 2.6 ms translation. Accepted sockets inherit it from the listening one.
  http.set_tcp_nodelay(true);
  http.set_socket_options([this](socket_t sock) {
    int yes = 1;
    ::setsockopt(sock, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof yes);  // not SO_REUSEPORT: a second server must fail to bind
    listen_fd = sock;
  });
}

bool Server::Impl::authorized(const httplib::Request& req) const {
  if (settings.api_key.empty()) return true;
  const std::string auth = req.get_header_value("Authorization");
  const std::string prefix = "Bearer ";
  return auth.compare(0, prefix.size(), prefix) == 0 &&
         equal_in_constant_time(std::string_view(auth).substr(prefix.size()), settings.api_key);
}

void Server::Impl::refuse_unauthorized(httplib::Response& res) const {
  res.set_header("WWW-Authenticate", "Bearer");
  send_json(res, 401, error_body(401, reason(401)));
}

// Every request starts the log line's clock; with an API key, one without the bearer token is
// answered 401 here, before any route, except: the page at / (it asks for the key), a CORS
// preflight, POST /translate (a LibreTranslate form carries its key in the body: its handler
// checks), and LibreTranslate's GET /languages and /frontend/settings, open as in
// LibreTranslate (its clients read them before they have a key).
void Server::Impl::add_authentication() {
  http.set_pre_routing_handler([this](const httplib::Request& req, httplib::Response& res) {
    request_start = std::chrono::steady_clock::now();
    request_started = true;
    request_sentences = 0;
    const bool checked_later = req.method == "OPTIONS" ||  // a CORS preflight carries no credentials
                               (req.method == "GET" && req.path == "/") ||  // the page asks for the key itself
                               (req.method == "POST" && req.path == "/translate") ||
                               (req.method == "GET" && (req.path == "/languages" || req.path == "/frontend/settings"));
    if (checked_later || authorized(req)) return httplib::Server::HandlerResponse::Unhandled;
    refuse_unauthorized(res);
    return httplib::Server::HandlerResponse::Handled;
  });
}

void Server::Impl::add_routes() {
  http.Get("/health", [this](const httplib::Request&, httplib::Response& res) {
    const auto s = batcher.stats();
    nlohmann::json j = {{"status", "ok"},          {"version", settings.version}, {"models", defaults.models},
                        {"batches", s.batches},    {"sentences", s.sentences},    {"requests", requests.load()},
                        {"heap_in_use_bytes", heap_in_use_bytes()}};
    send_json(res, 200, j.dump());
  });
  http.Get("/models", [this](const httplib::Request&, httplib::Response& res) {
    nlohmann::json list = nlohmann::json::array();
    for (const auto& m : backend.models())
      list.push_back({{"name", m.name}, {"path", m.path}, {"type", m.type}, {"weights", m.weights},
                      {"default", m.name == defaults.models.front()}});
    const ServeOptions& o = settings.options;
    send_json(res, 200, nlohmann::json{{"models", list}, {"beam", settings.default_beam}, {"max_beam", o.max_beam},
                                       {"max_sentences", o.max_sentences}, {"max_body_bytes", o.max_body_bytes}}
                            .dump());
  });
  // The body is read here, not by httplib: httplib refuses urlencoded forms over 8 KB
  // (CPPHTTPLIB_FORM_URL_ENCODED_PAYLOAD_MAX_LENGTH, compiled into Debian's library), and a
  // LibreTranslate form may carry a long text. --max-body-bytes still holds.
  http.Get("/", [](const httplib::Request&, httplib::Response& res) {
    res.status = 200;
    res.set_content(std::string(web_page()), "text/html; charset=utf-8");
  });
  http.Get("/metrics", [this](const httplib::Request&, httplib::Response& res) {
    res.status = 200;
    res.set_content(metrics.prometheus(batcher.stats(), heap_in_use_bytes()), "text/plain; version=0.0.4; charset=utf-8");
  });
  http.Post("/translate", [this](const httplib::Request& req, httplib::Response& res, const httplib::ContentReader& read) {
    std::string body;
    FormFields form;
    if (!read_form(req, read, body, form)) {
      const int status = res.status == 413 ? 413 : 400;
      return send_json(res, status, error_body(status, status == 413 ? too_large : "the request body could not be read"));
    }
    if (is_libretranslate_request(req.get_header_value("Content-Type"), body))
      return translate_libretranslate(req, body, form, res);
    if (!authorized(req)) return refuse_unauthorized(res);
    translate_nmt(body, res);
  });
}

void Server::Impl::translate_nmt(const std::string& body, httplib::Response& res) {
  try {
    const auto start = std::chrono::steady_clock::now();
    TranslateRequest r = parse_translate_request(body, defaults, limits);
    backend.check(r);
    if (r.stream) return stream_translation(r, res);
    request_sentences = r.sentences.size();
    auto results = batcher.submit(r.key, r.sentences).get();
    const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
    send_json(res, 200, translate_response(r, results, ms));
  } catch (const ApiError& e) {
    send_json(res, e.status(), error_body(e.status(), e.what()));
  } catch (const BatcherStopped& e) {
    send_json(res, 503, error_body(503, e.what()));
  }
}

// --cors: the answers say which origins may read them; a browser's preflight (OPTIONS) is
// answered 204 with the methods and headers the API takes.
void Server::Impl::add_cors() {
  if (settings.options.cors.empty()) return;
  http.set_post_routing_handler([this](const httplib::Request& req, httplib::Response& res) {
    const std::string& allowed = settings.options.cors;
    if (allowed == "*") {
      res.set_header("Access-Control-Allow-Origin", "*");
      return;
    }
    res.set_header("Vary", "Origin");
    const std::string origin = req.get_header_value("Origin");
    if (origin.empty()) return;
    for (size_t start = 0; start <= allowed.size();) {
      const size_t comma = std::min(allowed.find(',', start), allowed.size());
      if (allowed.compare(start, comma - start, origin) == 0 && comma - start == origin.size())
        return res.set_header("Access-Control-Allow-Origin", origin);
      start = comma + 1;
    }
  });
  http.Options(R"(/.*)", [](const httplib::Request&, httplib::Response& res) {
    res.status = 204;
    res.set_header("Access-Control-Allow-Methods", "GET, POST, OPTIONS");
    res.set_header("Access-Control-Allow-Headers", "Content-Type, Authorization");
    res.set_header("Access-Control-Max-Age", "86400");
  });
}

const text::SentenceSplitter& Server::Impl::splitter_of(const std::string& model) {
  std::string language;
  for (const auto& m : backend.models())
    if (m.name == model) language = m.source_language;
  std::lock_guard<std::mutex> lock(splitters_mutex);
  auto& splitter = splitters[language];
  if (!splitter) splitter = std::make_unique<text::SentenceSplitter>(language);
  return *splitter;
}

// "stream": the text's sentences are queued at once, each a request of its own (so they share
// batches with each other and with other clients'), and each answer is sent as it is ready, in
// order: the first sentence arrives while the rest are decoded.
void Server::Impl::stream_translation(const TranslateRequest& r, httplib::Response& res) {
  const Sentence& whole = r.sentences.front();
  decode::SentencePlan plan;
  if (r.key.markup) {  // tags may span sentences: one piece
    plan.sentences.push_back({whole.text, whole.prefix, whole.constraints});
    plan.paragraphs.push_back({0, 1, {"", ""}});
  } else {
    plan = decode::plan_sentences({{whole.text, whole.prefix, whole.constraints}}, splitter_of(r.key.model));
  }
  auto pending = std::make_shared<std::vector<std::future<std::vector<Nbest>>>>();
  for (const auto& s : plan.sentences) {
    Sentence sentence(s.source, s.constraints);
    sentence.prefix = s.prefix;
    pending->push_back(batcher.submit(r.key, {std::move(sentence)}));
  }
  request_sentences = plan.sentences.size();
  auto shared_plan = std::make_shared<decode::SentencePlan>(std::move(plan));
  const bool alignment = r.key.alignment;
  res.set_header("Cache-Control", "no-cache");
  res.set_chunked_content_provider(
      "text/event-stream", [pending, shared_plan, alignment, next = size_t{0}](size_t, httplib::DataSink& sink) mutable {
        const auto& gaps = shared_plan->paragraphs.front().gaps;
        std::string chunk;
        try {
          if (next == pending->size()) {
            chunk = done_event(next, gaps.back());
          } else {
            const auto answer = (*pending)[next].get();
            const TranslationResult best = answer.empty() || answer.front().empty() ? TranslationResult{} : answer.front().front();
            chunk = sentence_event(next, gaps[next], shared_plan->sentences[next].source, best, alignment);
          }
        } catch (const BatcherStopped& e) {
          chunk = error_event(503, e.what());
          next = pending->size();
        } catch (const std::exception& e) {
          chunk = error_event(500, first_line(e.what()));
          next = pending->size();
        }
        if (!sink.write(chunk.data(), chunk.size())) return false;  // the client left
        if (next++ == pending->size()) sink.done();
        return true;
      });
}

// format=html: each text is a page or a fragment (doc/html.h): its pieces are translated, those
// with inline tags through the markup path, and the page put back with everything else as it
// was. One Nbest of one result per text.
std::vector<Nbest> Server::Impl::translate_html(const DecodeKey& key, const std::vector<Sentence>& pages) {
  std::vector<doc::HtmlPlan> plans;
  for (size_t i = 0; i < pages.size(); ++i) {
    try {
      plans.push_back(doc::plan_html(pages[i].text));
    } catch (const RuntimeError& e) {
      throw ApiError(400, pages.size() > 1 ? fmt::format("q[{}]: {}", i, e.what()) : std::string(e.what()));
    }
    doc::split_markup_sentences(plans.back(), splitter_of(key.model));
  }
  const auto translations = doc::translate_pieces(plans, [&](const std::vector<std::string>& texts, bool markup) {
    DecodeKey piece_key = key;
    piece_key.markup = markup;
    std::vector<std::string> out;
    for (const auto& n : batcher.submit(piece_key, std::vector<Sentence>(texts.begin(), texts.end())).get())
      out.push_back(n.empty() ? std::string() : n.front().text);
    return out;
  });
  std::vector<Nbest> out;
  for (size_t i = 0; i < plans.size(); ++i) {
    TranslationResult page;
    page.text = doc::apply_translations(plans[i], translations[i]);
    out.push_back({page});
  }
  return out;
}

void Server::Impl::add_libretranslate_routes() {
  http.Get("/languages", [this](const httplib::Request&, httplib::Response& res) {
    send_json(res, 200, libretranslate_languages(backend.models()));
  });
  http.Get("/frontend/settings", [this](const httplib::Request&, httplib::Response& res) {
    send_json(res, 200, libretranslate_settings(backend.models(), !settings.api_key.empty()));
  });
}

// A LibreTranslate request: its key (as a bearer token, or "api_key" as LibreTranslate's
// clients send it), the model into its target, and its answer and errors in its shapes.
void Server::Impl::translate_libretranslate(const httplib::Request& req, const std::string& body,
                                            const FormFields& form, httplib::Response& res) {
  try {
    const std::string content_type = req.get_header_value("Content-Type");
    if (!authorized(req)) {
      const std::string key = libretranslate_api_key(content_type, body, form);
      if (key.empty()) throw ApiError(400, "Please contact the server operator to get an API key");
      if (!equal_in_constant_time(key, settings.api_key)) throw ApiError(403, "Invalid API key");
    }
    LtTranslateRequest lt = parse_libretranslate_request(content_type, body, form, limits);
    const auto& models = backend.models();
    const ServedModelInfo& model = models[libretranslate_model(lt, models)];
    TranslateRequest r;
    r.list = lt.list;
    for (auto& q : lt.q) r.sentences.emplace_back(std::move(q));
    r.key.model = model.name;
    r.key.nbest = lt.alternatives + 1;
    r.key.beam = std::max(defaults.beam, r.key.nbest);
    backend.check(r);
    request_sentences = r.sentences.size();
    const auto results = lt.html ? translate_html(r.key, r.sentences) : batcher.submit(r.key, r.sentences).get();
    send_json(res, 200, libretranslate_response(lt, results, model.source_language));
  } catch (const ApiError& e) {
    send_json(res, e.status(), libretranslate_error(e.what()));
  } catch (const BatcherStopped& e) {
    send_json(res, 503, libretranslate_error(e.what()));
  }
}

// Errors httplib answers itself (404, 413 over --max-body-bytes, 400 for a broken request
// line) get a JSON body like ours; handlers' own errors already have one. Then one log line
// per request.
void Server::Impl::add_errors_and_log() {
  http.set_error_handler(httplib::Server::HandlerWithResponse([this](const httplib::Request&, httplib::Response& res) {
    if (!res.body.empty()) return httplib::Server::HandlerResponse::Unhandled;
    send_json(res, res.status, error_body(res.status, res.status == 413 ? too_large : reason(res.status)));
    return httplib::Server::HandlerResponse::Handled;
  }));
  http.set_exception_handler([](const httplib::Request&, httplib::Response& res, std::exception_ptr ep) {
    std::string what = "internal error";
    try {
      std::rethrow_exception(ep);
    } catch (const std::exception& e) {
      what = first_line(e.what());
    } catch (...) {
    }
    send_json(res, 500, error_body(500, what));
  });
  http.set_logger([this](const httplib::Request& req, const httplib::Response& res) {
    requests.fetch_add(1, std::memory_order_relaxed);
    const double ms =
        request_started ? std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - request_start).count()
                        : 0.0;
    metrics.record(req.path, res.status, ms / 1000);
    if (!settings.quiet)
      std::fprintf(stderr, "%s %s %d %zu sentences %.1f ms\n", req.method.c_str(), req.path.c_str(), res.status,
                   request_sentences, ms);
    request_started = false;
    request_sentences = 0;
  });
}

Server::Server(ServerSettings settings, Backend& backend) : impl_(std::make_unique<Impl>(std::move(settings), backend)) {}

Server::~Server() { stop(); }

int Server::bind() {
  const ServeOptions& o = impl_->settings.options;
  raise_descriptor_limit();
  std::signal(SIGPIPE, SIG_IGN);  // a client gone mid-answer is a failed write, not the end of the server
  int port = o.port;
  const bool bound = o.port == 0 ? (port = impl_->http.bind_to_any_port(o.host)) > 0 : impl_->http.bind_to_port(o.host, o.port);
  if (!bound)
    throw RuntimeError(fmt::format("cannot listen on {}:{} (address in use, or not an address of this machine?)", o.host, o.port));
  // httplib listens with a backlog of 5; a burst of clients connecting at once (1,000 in the
  // tests) would wait for SYN retries (1 s, 3 s, ...). Linux lets listen() enlarge it.
  if (impl_->listen_fd >= 0) ::listen(impl_->listen_fd, SOMAXCONN);
  return port;
}

bool Server::serve() {
  impl_->serving = true;
  bool listened = true;
  if (!impl_->stop_requested) listened = impl_->http.listen_after_bind();  // returns once stop() has drained the workers
  impl_->batcher.stop();
  impl_->served = true;
  return listened;
}

bool Server::serve_until_signal() {
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
    impl_->http.stop();
  });
  const bool listened = serve();
  const char done = 'd';
  [[maybe_unused]] auto n = ::write(signal_pipe[1], &done, 1);
  watcher.join();
  if (!listened && !stopped_by_signal) throw RuntimeError("the server stopped unexpectedly");
  return stopped_by_signal;
}

void Server::stop() {
  impl_->stop_requested = true;
  // httplib's stop() does nothing until its loop has started: a stop() right after serve()
  // began waits for that, or serve() would listen on for ever.
  while (impl_->serving && !impl_->served && !impl_->http.is_running())
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  impl_->http.stop();
  impl_->batcher.stop();
}

size_t Server::requests() const { return impl_->requests.load(); }

BatcherStats Server::batches() const { return impl_->batcher.stats(); }

}  // namespace nmt::serve
