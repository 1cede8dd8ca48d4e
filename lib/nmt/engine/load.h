#pragma once
// Reading a model's tensors into the engine's own layouts, for every model kind: each copies what
// it keeps, so the WeightSource need only outlive the load.
#include <cstdint>
#include <string>
#include <vector>

#include "nmt/engine/linear.h"
#include "nmt/engine/ops.h"
#include "nmt/engine/weights.h"

namespace nmt::engine {

// The float32 values of `name`, which must have `shape`.
std::vector<float> copy_of(const WeightSource& w, const std::string& name, const std::vector<int64_t>& shape);
// The Linear NAME.weight [out, in] (+ NAME.bias [out] with `bias`): its int8 copy where the source
// has one, else quantised here when `int8`, else float32.
Linear linear_of(const WeightSource& w, const std::string& name, int64_t out, int64_t in, bool int8, bool bias = true);
// The LayerNorm NAME.weight and NAME.bias [d].
LayerNorm norm_of(const WeightSource& w, const std::string& name, int64_t d);

}  // namespace nmt::engine
