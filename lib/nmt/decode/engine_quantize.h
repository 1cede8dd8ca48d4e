#pragma once
// `nmt quantize` without LibTorch: an int8 model directory written from DIR's model.safetensors.
// Which Linears become int8 is what the CPU engine itself loads as Linears (engine/load.h's
// linear_of), the set of the LibTorch build's QuantizableLinears (a test holds the two equal);
// each is quantised per output channel by nmt's int8 kernels' own quantize_weight, as the
// LibTorch build quantises, so both builds write the same int8 values and scales.
#include <string>

#include "nmt/models/int8_copy.h"

namespace nmt::decode {

// OUT as an int8 model directory of format 2 (model.safetensors with NAME.int8 and NAME.scales in
// place of each quantised NAME, metadata "nmt_quantization": "int8"; config.json marked int8;
// the subword models copied), as models::quantize_model_dir describes. DIR of format 1 (no
// model.safetensors) → RuntimeError naming the file and the command that upgrades it.
models::QuantizeSummary quantize_on_engine(const std::string& dir, const std::string& out, bool force);

}  // namespace nmt::decode
