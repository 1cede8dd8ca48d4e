#include "nmt/models/flops.h"

#include "nmt/models/architecture.h"

namespace nmt::models {

double forward_matmul_flops(const ModelConfig& c, int64_t batch, int64_t src_len, int64_t tgt_len) {
  return architecture(c.type).forward_flops(c, batch, src_len, tgt_len);
}

}  // namespace nmt::models
