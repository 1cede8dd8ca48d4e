#include "nmt/serve/options.h"

#include <cstdint>
#include <limits>

#include <fmt/format.h>

namespace nmt::serve {

const std::vector<OptionSpec<ServeOptions>>& serve_option_specs() {
  using O = ServeOptions;
  constexpr long double kMany = static_cast<long double>(int64_t{1} << 40);
  static const std::vector<OptionSpec<O>> specs = {
      option("host", "--host", "Server", "Address to listen on (0.0.0.0: every interface)", &O::host),
      option("port", "--port", "Server", "TCP port (0: any free port, printed on stderr)", &O::port).range(0, 65535),
      option("workers", "--workers", "Server",
             "Batches decoded at once, each on its own thread (CTranslate2's inter_threads; --workers 2 --threads 1 "
             "uses two cores like --threads 2)",
             &O::workers)
          .range(1, 256),
      option("http_threads", "--http-threads", "Server",
             "Connections served at once (each waits for its translation on its own thread)", &O::http_threads)
          .range(1, 4096),
      option("max_batch", "--max-batch", "Server", "Most sentences decoded in one batch", &O::max_batch)
          .range(1, 100'000),
      option("batch_wait_ms", "--batch-wait-ms", "Server",
             "After a sentence arrives, how long to wait for others to batch with it", &O::batch_wait_ms)
          .range(0, 10'000),
      option("max_body_bytes", "--max-body-bytes", "Server", "Largest request body (413 above)", &O::max_body_bytes)
          .range(1, kMany),
      option("max_sentences", "--max-sentences", "Server", "Most sentences in one request (413 above)",
             &O::max_sentences)
          .range(1, kMany),
      option("max_beam", "--max-beam", "Server", "Largest beam (and nbest) a request may ask for", &O::max_beam)
          .range(1, 1000),
      option("timeout_s", "--timeout", "Server", "Seconds a client may take to send a request or read the answer",
             &O::timeout_s)
          .range(1, 3600),
      option("api_key", "--api-key", "Server",
             "Require 'Authorization: Bearer KEY' on every request (visible in ps: prefer --api-key-file)", &O::api_key),
      option("api_key_file", "--api-key-file", "Server", "Like --api-key, the key being this file's first line",
             &O::api_key_file),
      option("cors", "--cors", "Server",
             "Let web pages from ORIGIN call the API (CORS): '*' for any, or origins separated by commas "
             "(https://a.example,https://b.example)",
             &O::cors),
  };
  return specs;
}

void validate_serve_options(const ServeOptions& o, int64_t default_beam,
                            const std::function<std::string(const std::string&)>& name) {
  try {
    check_options(o, serve_option_specs());
    if (!o.api_key.empty() && !o.api_key_file.empty())
      throw OptionError(std::vector<std::string>{"api_key", "api_key_file"}, "give {0} or {1}, not both");
    if (default_beam > o.max_beam)
      throw OptionError(std::vector<std::string>{"beam", "max_beam"},
                        fmt::format("{{0}} is {}, larger than {{1}} ({})", default_beam, o.max_beam));
  } catch (const OptionError& e) {
    throw UsageError(e.message(name));
  }
}

}  // namespace nmt::serve
