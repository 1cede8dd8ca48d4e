#pragma once
// glibc malloc settings for training (see allocator.cc).

namespace nmt {

// Keeps the memory a training step frees in the process for the next step instead of handing
// it back to the kernel. Call once, before the first step. Does nothing off glibc or when the
// user tuned glibc themselves (MALLOC_MMAP_THRESHOLD_, MALLOC_TRIM_THRESHOLD_, MALLOC_TOP_PAD_ or
// GLIBC_TUNABLES set: theirs win). Returns whether it changed anything.
bool keep_freed_memory_for_reuse();

}  // namespace nmt
