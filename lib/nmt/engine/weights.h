#pragma once
// Where the CPU engine reads a model's tensors from: a safetensors file (model.safetensors, read
// without LibTorch), or any other store of named float32 arrays (a LibTorch state dict in the
// equivalence tests). The engine copies what it keeps, so a source need only outlive the load.
#include <cstdint>
#include <string>
#include <vector>

#include "nmt/quant/int8_gemm.h"

namespace nmt::engine {

class WeightSource {
 public:
  virtual ~WeightSource() = default;
  // Row-major float32 values of tensor `name`, which must have `shape`: RuntimeError naming the
  // file and the tensor when it is missing, of another shape or dtype, or not finite.
  virtual const float* f32(const std::string& name, const std::vector<int64_t>& shape) const = 0;
  virtual bool contains(const std::string& name) const = 0;
  // The int8 copy of a Linear weight [out, in] stored as NAME.int8 (values) and NAME.scales, or
  // false when the source has none (the engine then uses the float32 weight).
  virtual bool int8(const std::string& name, int64_t out, int64_t in, quant::QuantizedWeight& weight) const {
    (void)name, (void)out, (void)in, (void)weight;
    return false;
  }
  // "model.safetensors": what errors call the source.
  virtual std::string description() const = 0;
};

}  // namespace nmt::engine
