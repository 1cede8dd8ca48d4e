#pragma once
// NMT_AVX2_CLONE before a function: GCC compiles it twice, for the x86-64 baseline and for
// AVX2, and picks the clone at load time from the CPU (an ifunc). For the few loops written so
// that the compiler vectorises them; elsewhere (other compilers, other CPUs) it is empty.
// Not under ThreadSanitizer: the loader runs an ifunc's resolver before the sanitizer's runtime
// is initialised, and the instrumented resolver then crashes the process at start-up.
#if defined(__GNUC__) && defined(__x86_64__) && !defined(__clang__) && !defined(__SANITIZE_THREAD__)
#define NMT_AVX2_CLONE __attribute__((target_clones("avx2", "default")))
#else
#define NMT_AVX2_CLONE
#endif
