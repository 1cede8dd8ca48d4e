#pragma once
// The CPU thread settings every command applies for its --threads.

namespace nmt {

// Sets LibTorch's intra-op threads and OpenBLAS's pool consistently (0 = leave as is).
void set_threads(int threads);

// The threads code running its own parallel loops uses (the int8 kernels of
// nmt/quant/int8_gemm.h): the value of the last set_threads(N > 0), else the hardware threads,
// as OpenBLAS and LibTorch take by default.
int configured_threads();

}  // namespace nmt
