#include "nmt/tensor/threads.h"

#include <dlfcn.h>

#include <cstdlib>

#include <torch/torch.h>

namespace nmt {

void set_threads(int threads) {
  if (threads <= 0) return;
  remember_threads(threads);
  // Matrix products dominate and run in OpenBLAS, which keeps its own thread pool. LibTorch's
  // OpenMP workers spin after each parallel region and steal those cores, so when OpenBLAS is
  // present it gets the N threads and LibTorch's intra-op pool 1 (measured on 2 cores,
  // transformer-small training: 1650 tok/s vs 1350 with 2+2 and 1050 with LibTorch 2 +
  // OpenBLAS 1). NMT_TORCH_THREADS overrides LibTorch's share. Found at run time: the BLAS
  // may not be OpenBLAS, and then LibTorch gets all N threads.
  using SetThreads = void (*)(int);
  auto openblas = reinterpret_cast<SetThreads>(dlsym(RTLD_DEFAULT, "openblas_set_num_threads"));
  int torch_threads = openblas ? 1 : threads;
  if (const char* env = std::getenv("NMT_TORCH_THREADS"); env && std::atoi(env) > 0) torch_threads = std::atoi(env);
  torch::set_num_threads(torch_threads);
  if (openblas) openblas(threads);
}

}  // namespace nmt
