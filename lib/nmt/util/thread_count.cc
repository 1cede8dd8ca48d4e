#include "nmt/util/thread_count.h"

#include <algorithm>
#include <atomic>
#include <thread>

namespace nmt {

namespace {
std::atomic<int> g_threads{0};  // remember_threads's last N > 0
}  // namespace

void remember_threads(int threads) {
  if (threads > 0) g_threads.store(threads, std::memory_order_relaxed);
}

int configured_threads() {
  const int n = g_threads.load(std::memory_order_relaxed);
  return n > 0 ? n : std::max(1, static_cast<int>(std::thread::hardware_concurrency()));
}

}  // namespace nmt
