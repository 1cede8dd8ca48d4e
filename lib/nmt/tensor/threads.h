#pragma once
// The CPU thread settings every command applies for its --threads.

namespace nmt {

// Sets LibTorch's intra-op threads and OpenBLAS's pool consistently (0 = leave as is).
void set_threads(int threads);

}  // namespace nmt
