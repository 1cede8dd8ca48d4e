#pragma once
// `nmt serve`'s GET /metrics in Prometheus' text format (version 0.0.4): requests by route and
// status, sentences and batches decoded, the queue's length, the heap in use, and a histogram of
// request latency with Prometheus' default buckets. Torch-free, without sockets.
#include <array>
#include <cstddef>
#include <map>
#include <mutex>
#include <string>
#include <utility>

#include "nmt/serve/batcher.h"

namespace nmt::serve {

class ServerMetrics {
 public:
  // One answered request. Paths other than the server's routes are counted as "other", so a
  // client cannot grow the label set.
  void record(const std::string& path, int status, double seconds);
  // The exposition, with the batcher's counters and the heap's bytes at this moment.
  std::string prometheus(const BatcherStats& batches, size_t heap_in_use_bytes) const;

  static constexpr std::array<double, 11> kBuckets = {0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10};

 private:
  mutable std::mutex mutex_;
  std::map<std::pair<std::string, int>, size_t> requests_;
  std::array<size_t, kBuckets.size()> bucket_counts_{};  // requests at most each bound (not cumulative)
  size_t count_ = 0;
  double sum_seconds_ = 0;
};

}  // namespace nmt::serve
