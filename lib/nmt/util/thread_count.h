#pragma once
// The thread count the last --threads asked for, kept without LibTorch: the CPU engine and nmt's
// int8 kernels (nmt/quant/int8_gemm.h) run their own parallel loops with it. set_threads
// (nmt/tensor/threads.h) records it here, in the LibTorch build and in the build without.

namespace nmt {

// Records N > 0 as the configured thread count (N <= 0 leaves it as is).
void remember_threads(int threads);

// The value of the last remember_threads(N > 0), else the hardware threads, as OpenBLAS and
// LibTorch take by default.
int configured_threads();

}  // namespace nmt
