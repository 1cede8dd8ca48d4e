#pragma once
// nmt's HTTP/1.1 translation server: connections (cpp-httplib), authentication, the routes
// (GET /health, GET /models, POST /translate, and LibreTranslate's: serve/libretranslate.h), JSON errors, one log line per request, and a
// graceful stop; concurrent requests share decoding batches through serve::Batcher. What a
// batch decodes into is the Backend's: `nmt serve` gives it one over decode::Translator, the
// tests a fake, so the server is tested in-process on a loopback port. Torch-free.
#include <memory>
#include <string>
#include <vector>

#include "nmt/serve/api.h"
#include "nmt/serve/batcher.h"
#include "nmt/serve/options.h"

namespace nmt::serve {

// What GET /models says of one served model.
struct ServedModelInfo {
  std::string name;     // what requests call it ("model"): its directory's name
  std::string path;     // its directory
  std::string type;     // transformer, gru, ...
  std::string weights;  // fp32 or int8
  // ISO 639 codes of what it translates (config.json), "" when unknown: LibreTranslate's
  // requests choose a model by them.
  std::string source_language, target_language;
};

// The models a server serves and how it decodes them.
class Backend {
 public:
  virtual ~Backend() = default;
  virtual const std::vector<ServedModelInfo>& models() const = 0;  // the first is the default
  // Before a request is queued: ApiError (400) for what its model cannot do, e.g. a phrase it
  // cannot write, so that one client's error fails no batch it would share.
  virtual void check(const TranslateRequest& request) const = 0;
  // One batch of one key's sentences (Batcher's DecodeFunction).
  virtual std::vector<Nbest> decode(const DecodeKey& key, const std::vector<Sentence>& sentences) = 0;
  // On each decoding thread before it decodes (per-thread library settings).
  virtual void on_worker_start() {}
};

struct ServerSettings {
  ServeOptions options;   // --host, --port, --workers, limits... (serve/options.h)
  int default_beam = 1;   // the beam of requests that name none
  decode::SearchOptions search;  // the server's search options, which a request's own go over
  std::string api_key;    // "": no authentication
  std::string version;    // GET /health's "version"
  bool quiet = false;     // no log line per request
};

class Server {
 public:
  Server(ServerSettings settings, Backend& backend);
  ~Server();  // stop()
  Server(const Server&) = delete;
  Server& operator=(const Server&) = delete;

  // Listens on the settings' host and port (0: any free one); returns the port.
  // RuntimeError when the address cannot be had.
  int bind();
  // Answers requests until stop(); bind() first. False when the server failed on its own.
  bool serve();
  // serve(), until SIGINT or SIGTERM (then the requests in flight are answered); true when a
  // signal stopped it. A second signal ends the process at once.
  bool serve_until_signal();
  // Stops accepting, answers what is in flight, stops the batcher. Idempotent, any thread.
  void stop();

  size_t requests() const;  // answered so far, any status
  BatcherStats batches() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace nmt::serve
