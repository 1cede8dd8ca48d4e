#pragma once
// A safetensors file (util/safetensors.h) as the engine's WeightSource: float32 tensors named as
// the LibTorch modules' state dicts name them, read in place from the mapping (the engine copies
// what it keeps), and int8 copies of Linear weights as NAME.int8 (I8 [out, in]) beside NAME.scales
// (F32 [out]), what quant::QuantizedWeight holds. No LibTorch: what a model directory's
// model.safetensors is read through.
#include <string>
#include <vector>

#include "nmt/engine/weights.h"
#include "nmt/util/safetensors.h"

namespace nmt::engine {

class SafetensorsWeights final : public WeightSource {
 public:
  explicit SafetensorsWeights(const safetensors::File& file) : file_(file) {}
  const float* f32(const std::string& name, const std::vector<int64_t>& shape) const override {
    return file_.f32(name, shape);
  }
  bool contains(const std::string& name) const override { return file_.find(name) != nullptr; }
  // NAME.int8 without NAME.scales (or the other way round) is a RuntimeError naming the file.
  bool int8(const std::string& name, int64_t out, int64_t in, quant::QuantizedWeight& weight) const override;
  std::string description() const override { return file_.path(); }

 private:
  const safetensors::File& file_;
};

}  // namespace nmt::engine
