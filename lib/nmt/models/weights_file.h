#pragma once
// A model directory's weights as safetensors (model.safetensors): what the CPU engine and nmt
// without LibTorch read (engine/safetensors_weights.h), and what any safetensors reader opens.
// Tensors are named as the module's state dict names them ("encoder.layers.0.ffn1.weight"); a
// quantised Linear's weight is stored as NAME.int8 (I8 [out, in]) and NAME.scales (F32 [out])
// instead, what quant::QuantizedWeight holds. The metadata holds "nmt_weights_checksum"
// (util/safetensors.h) and, for int8 copies, "nmt_quantization": "int8".
//
// model.pt (or model.int8.pt) is written beside it for LibTorch programs and nmt before model
// format 2; the LibTorch path reads that, and model.safetensors where it is absent (docs/design.md,
// "Model directories").
#include <string>

#include "nmt/models/model.h"
#include "nmt/models/model_dir.h"

namespace nmt::models {

// Writes `path` atomically; non-finite weights are refused (RuntimeError naming the file and
// the tensor), as save_weights refuses them.
void save_safetensors_weights(torch::nn::Module& model, const std::string& path);
// Reads `path` into a model built from the same configuration: every parameter and buffer must
// be there with its shape and dtype, and nothing else may be (a file of another model); NAME.int8
// weights are installed as the Linear's quantised weight (the model then decodes in int8, its
// tied output quantised too). RuntimeError naming the file and tensor otherwise.
void load_safetensors_weights(Seq2SeqModelImpl& model, const std::string& path);

// A model directory's weights, as train, average, quantize and import write them into `dir`:
// model.safetensors, then model.pt, or model.int8.pt when the model's Linears are quantised.
void save_directory_weights(Seq2SeqModelImpl& model, const std::string& dir);

// `nmt upgrade DIR`: a model directory of format 1 (model.pt or model.int8.pt alone) given its
// model.safetensors and config.json's format raised to 2, in place: the directory is loaded and
// checked as for translating, the safetensors file written first, config.json last (both
// atomically), nothing removed. False when DIR already is format 2 with its model.safetensors.
bool upgrade_model_directory(const std::string& dir);

}  // namespace nmt::models
