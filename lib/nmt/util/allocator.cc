#include "nmt/util/allocator.h"

#include <climits>
#include <cstdlib>
#include <initializer_list>

#if defined(__GLIBC__)
#include <malloc.h>
#endif

namespace nmt {

// Every training step allocates and frees the same large tensors (logits and their gradient:
// 80-130 MB for transformer-small; activations of 1-30 MB). glibc returns blocks above its mmap
// threshold with munmap() and trims the heap's top, so each step faults its memory in again page
// by page. With a 1 GB threshold and no trimming below 2 GB the blocks stay in the heap and are
// reused: 8-20 % more training tokens/s, the same losses
// (docs/experiments.md#freed-memory-kept-ab-2026-11-25).
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
