#pragma once
#include <cstdint>

namespace nmt::models {

// Which cross-attention a Transformer reports as its alignment: a choice of the request (the
// decoding options), carried by the state, never a setting of the model, which several
// decoding threads share read-only.
struct AlignmentChoice {
  int64_t layer = -1;  // decoder layer, -1 = the last
  int64_t head = -1;   // head, -1 = the mean of the heads
};

}  // namespace nmt::models
