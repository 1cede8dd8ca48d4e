#include "nmt/engine/load.h"

namespace nmt::engine {

std::vector<float> copy_of(const WeightSource& w, const std::string& name, const std::vector<int64_t>& shape) {
  int64_t n = 1;
  for (int64_t s : shape) n *= s;
  const float* p = w.f32(name, shape);
  return std::vector<float>(p, p + n);
}

Linear linear_of(const WeightSource& w, const std::string& name, int64_t out, int64_t in, bool int8, bool bias) {
  const float* b = bias ? w.f32(name + ".bias", {out}) : nullptr;
  quant::QuantizedWeight q;
  if (w.int8(name + ".weight", out, in, q)) return Linear::int8(q, b);
  const float* weight = w.f32(name + ".weight", {out, in});
  if (int8) return Linear::int8(quant::quantize_weight(weight, out, in), b);
  return Linear::float32(weight, b, out, in);
}

LayerNorm norm_of(const WeightSource& w, const std::string& name, int64_t d) {
  return {copy_of(w, name + ".weight", {d}), copy_of(w, name + ".bias", {d})};
}

}  // namespace nmt::engine
