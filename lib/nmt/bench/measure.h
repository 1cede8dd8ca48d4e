#pragma once
// What every benchmark reads off the process: elapsed time and peak resident memory. Torch-free.
#include <sys/resource.h>

#include <chrono>

namespace nmt::bench {

using BenchClock = std::chrono::steady_clock;

inline double seconds_since(BenchClock::time_point t) {
  return std::chrono::duration<double>(BenchClock::now() - t).count();
}

// The process's peak resident set so far, in MB (Linux reports ru_maxrss in KiB).
inline double peak_rss_mb() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return static_cast<double>(u.ru_maxrss) / 1024.0;
}

}  // namespace nmt::bench
