#include "nmt/util/allocator.h"

#include <climits>
#include <cstdlib>
#include <initializer_list>

#if defined(__GLIBC__)
#include <malloc.h>
#endif

namespace nmt {

// Every training step allocates and frees the same large tensors (transformer-small's logits
// and their gradient: 2,500-4,096 target tokens × 8,000 floats, 80-130 MB; activations of
// 1-30 MB). glibc serves blocks above its mmap threshold (128 KB, rising to at most 32 MB as
// such blocks are freed) with fresh mmap()s and returns them with munmap(), and trims the heap's
// top above 128 KB of free space, so each step faults its memory in again page by page (~10 % of
// an earlier training profile was in the kernel's page-fault paths: README, "What the profile
// showed"). With a 1 GB threshold and no trimming below 2 GB the blocks stay in the heap and are
// reused. A/B, `nmt bench train`, 10 steps, 2 threads, AMD EPYC, three alternating rounds, the
// same losses either way (glibc's defaults → these):
//   LibTorch 1.13 + OpenBLAS: transformer-small 4,909 / 4,378 / 4,404 → 5,534 / 4,856 / 4,885
//   tokens/s (+12 %), peak RSS 1,346 → 1,417 MB; gru-small 4,727 / 4,960 / 5,000 → 5,866 /
//   5,375 / 5,277 (+12 %), 676 → 769 MB;
//   LibTorch 2.15 (MKL), set through glibc's environment variables: transformer-small 4,810 /
//   4,847 / 4,923 → 5,226 / 5,024 / 5,490 (+8 %), gru-small 5,947 / 5,329 / 5,791 → 6,554 /
//   6,837 / 7,136 (+20 %), peak RSS unchanged (1,130 and 670 → 634 MB).
bool keep_freed_memory_for_reuse() {
#if defined(__GLIBC__)
  for (const char* name : {"MALLOC_MMAP_THRESHOLD_", "MALLOC_TRIM_THRESHOLD_", "MALLOC_TOP_PAD_", "GLIBC_TUNABLES"})
    if (std::getenv(name)) return false;
  const bool mmap_set = mallopt(M_MMAP_THRESHOLD, 1 << 30) == 1;
  const bool trim_set = mallopt(M_TRIM_THRESHOLD, INT_MAX) == 1;
  const bool pad_set = mallopt(M_TOP_PAD, 256 << 20) == 1;
  return mmap_set && trim_set && pad_set;
#else
  return false;
#endif
}

}  // namespace nmt
