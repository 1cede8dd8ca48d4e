#include "nmt/util/blas.h"

#include <dlfcn.h>
#include <strings.h>

#include <cstdlib>

namespace nmt {

// Debian 12's OpenBLAS 0.3.21 picks its kernels by CPU model and does not know recent Xeons
// (e.g. family 6 model 207): it falls back to "Prescott", 25-30 GFLOP/s per core on this
// machine, where its AVX-512 kernels reach 110-150. OPENBLAS_CORETYPE steers the choice but is
// read when the library loads, before main(); OpenBLAS also exports its dynamic-arch set-up,
// so the choice is redone here with the variable set. Found at run time with dlsym: the BLAS
// may not be OpenBLAS at all.
std::string select_blas_kernels() {
  using CoreName = char* (*)();
  using Hook = void (*)();
  auto corename = reinterpret_cast<CoreName>(dlsym(RTLD_DEFAULT, "openblas_get_corename"));
  if (!corename) return "";
  auto quit = reinterpret_cast<Hook>(dlsym(RTLD_DEFAULT, "gotoblas_dynamic_quit"));
  auto init = reinterpret_cast<Hook>(dlsym(RTLD_DEFAULT, "gotoblas_dynamic_init"));
  const char* current = corename();
  if (!quit || !init || std::getenv("OPENBLAS_CORETYPE") != nullptr || !current || strcasecmp(current, "prescott") != 0)
    return current ? current : "";
  __builtin_cpu_init();
  const char* better = nullptr;
  if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512vl") &&
      __builtin_cpu_supports("avx512dq"))
    better = "SkylakeX";
  else if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"))
    better = "Haswell";
  if (!better) return current;
  setenv("OPENBLAS_CORETYPE", better, 0);  // also what child processes get
  quit();
  init();
  const char* now = corename();
  return now ? now : "";
}

}  // namespace nmt
