#include "nmt/engine/safetensors_weights.h"

#include <fmt/format.h>

#include "nmt/util/error.h"

namespace nmt::engine {

bool SafetensorsWeights::int8(const std::string& name, int64_t out, int64_t in, quant::QuantizedWeight& weight) const {
  const bool has_values = contains(name + ".int8"), has_scales = contains(name + ".scales");
  if (!has_values && !has_scales) return false;
  if (has_values != has_scales)
    throw RuntimeError(fmt::format("{}: tensor '{}.{}' is missing beside '{}.{}'", file_.path(), name,
                                   has_values ? "scales" : "int8", name, has_values ? "int8" : "scales"));
  const int8_t* values = file_.i8(name + ".int8", {out, in});
  const float* scales = file_.f32(name + ".scales", {out});
  weight.out_features = out;
  weight.in_features = in;
  weight.values.assign(values, values + out * in);
  weight.scales.assign(scales, scales + out);
  return true;
}

}  // namespace nmt::engine
