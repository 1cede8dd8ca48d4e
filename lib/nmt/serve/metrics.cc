#include "nmt/serve/metrics.h"

#include <fmt/format.h>

namespace nmt::serve {

namespace {

const char* route_of(const std::string& path) {
  for (const char* route : {"/translate", "/health", "/models", "/metrics", "/languages", "/frontend/settings"})
    if (path == route) return route;
  return "other";
}

void family(std::string& out, const char* name, const char* type, const char* help) {
  out += fmt::format("# HELP {} {}\n# TYPE {} {}\n", name, help, name, type);
}

}  // namespace

void ServerMetrics::record(const std::string& path, int status, double seconds) {
  std::lock_guard<std::mutex> lock(mutex_);
  ++requests_[{route_of(path), status}];
  for (size_t i = 0; i < kBuckets.size(); ++i)
    if (seconds <= kBuckets[i]) {
      ++bucket_counts_[i];
      break;
    }
  ++count_;
  sum_seconds_ += seconds;
}

std::string ServerMetrics::prometheus(const BatcherStats& batches, size_t heap_in_use_bytes) const {
  std::lock_guard<std::mutex> lock(mutex_);
  std::string out;
  family(out, "nmt_requests_total", "counter", "HTTP requests answered, by route and status.");
  for (const auto& [key, n] : requests_)
    out += fmt::format("nmt_requests_total{{path=\"{}\",status=\"{}\"}} {}\n", key.first, key.second, n);
  family(out, "nmt_sentences_total", "counter", "Sentences decoded.");
  out += fmt::format("nmt_sentences_total {}\n", batches.sentences);
  family(out, "nmt_batches_total", "counter", "Decoding batches.");
  out += fmt::format("nmt_batches_total {}\n", batches.batches);
  family(out, "nmt_queue_sentences", "gauge", "Sentences waiting for a decoding batch.");
  out += fmt::format("nmt_queue_sentences {}\n", batches.queued);
  family(out, "nmt_heap_in_use_bytes", "gauge", "Bytes malloc has handed out and not had back.");
  out += fmt::format("nmt_heap_in_use_bytes {}\n", heap_in_use_bytes);
  family(out, "nmt_request_duration_seconds", "histogram", "Time from a request's arrival to its answer.");
  size_t cumulative = 0;
  for (size_t i = 0; i < kBuckets.size(); ++i) {
    cumulative += bucket_counts_[i];
    out += fmt::format("nmt_request_duration_seconds_bucket{{le=\"{}\"}} {}\n", kBuckets[i], cumulative);
  }
  out += fmt::format("nmt_request_duration_seconds_bucket{{le=\"+Inf\"}} {}\n", count_);
  out += fmt::format("nmt_request_duration_seconds_sum {}\n", sum_seconds_);
  out += fmt::format("nmt_request_duration_seconds_count {}\n", count_);
  return out;
}

}  // namespace nmt::serve
