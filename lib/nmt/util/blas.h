#pragma once
// OpenBLAS kernel selection (see blas.cc).
#include <string>

namespace nmt {

// When OpenBLAS did not recognise this CPU and fell back to its generic SSE3 ("Prescott")
// kernels, switches it to the AVX-512 (SkylakeX) or AVX2 (Haswell) kernels the CPU supports.
// Call before the first matrix product. Does nothing when OPENBLAS_CORETYPE is set, when the
// BLAS is not OpenBLAS, or when its own detection worked. Returns OpenBLAS's core name after
// the call ("" when the BLAS is not OpenBLAS).
std::string select_blas_kernels();

}  // namespace nmt
