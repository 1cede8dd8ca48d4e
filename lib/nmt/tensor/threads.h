#pragma once
// The CPU thread settings every command applies for its --threads.
#include "nmt/util/thread_count.h"  // configured_threads

namespace nmt {

// Records the count (configured_threads) and, in a LibTorch build, sets LibTorch's intra-op
// threads and OpenBLAS's pool consistently (0 = leave as is).
void set_threads(int threads);

}  // namespace nmt
