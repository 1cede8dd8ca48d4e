#pragma once
// Matrix-product FLOPs of a teacher-forced forward pass, counted from the architecture (for
// achieved GFLOP/s in `nmt bench`). Training ≈ 3 × forward (backward = 2 × forward).
#include <cstdint>

#include "nmt/models/config.h"

namespace nmt::models {

// A batch of `batch` sentences padded to `src_len` source and `tgt_len` target positions.
double forward_matmul_flops(const ModelConfig& config, int64_t batch, int64_t src_len, int64_t tgt_len);

}  // namespace nmt::models
