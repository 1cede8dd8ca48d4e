#pragma once
// `nmt serve`'s own options (listening, connections, batching, request limits, keys), declared
// once; the search options a request may leave out come from decode/search_options.h and the
// runtime ones from util/runtime_options.h. Torch-free.
#include <cstddef>
#include <functional>
#include <string>
#include <vector>

#include "nmt/util/option_spec.h"

namespace nmt::serve {

struct ServeOptions {
  std::string host = "127.0.0.1";
  int port = 8080;
  int workers = 1;  // decoding threads, each with its own batches
  int http_threads = 128;
  size_t max_batch = 64;
  double batch_wait_ms = 10;
  size_t max_body_bytes = 10 * 1024 * 1024;
  size_t max_sentences = 1000;
  int max_beam = 16;
  int timeout_s = 10;
  std::string api_key, api_key_file;
  std::string cors;  // "*" or comma-separated origins browsers may call the API from; "": none
};

const std::vector<OptionSpec<ServeOptions>>& serve_option_specs();

// Ranges, then --api-key against --api-key-file and the default beam against --max-beam;
// UsageError worded with `name` (key → flag).
void validate_serve_options(const ServeOptions& options, int64_t default_beam,
                            const std::function<std::string(const std::string&)>& name);

}  // namespace nmt::serve
