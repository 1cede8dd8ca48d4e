#pragma once
// glibc malloc settings for training (see allocator.cc).

namespace nmt {

// Keeps the memory a training step frees in the process for the next step instead of handing
// it back to the kernel. Call once, before the first step. Does nothing when the user set any
// of glibc's MALLOC_* variables (theirs win) or off glibc. Returns whether it changed anything.
bool keep_freed_memory_for_reuse();

}  // namespace nmt
