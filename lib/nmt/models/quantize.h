#pragma once
// int8 models: quantising a model for decoding, int8 weights files, and `nmt quantize`.
//
// What is quantised: every QuantizableLinear (nmt/models/quantizable_linear.h) — the
// Transformer's attention projections, feed-forward layers and untied output projection, the
// GRU model's attention, bridge, deep-output and untied output layers — per output channel,
// plus an int8 copy of a tied output projection (the target embedding used as the output
// weight). Embedding lookups, LayerNorms, biases and the GRU cells stay fp32: the GRU's
// recurrent matrix products are LibTorch's fused cell, and the lookups are no matrix product.
//
// An int8 model directory is a model directory (nmt/models/model_io.h) whose config.json holds
// "quantization": "int8" and whose weights are model.int8.pt instead of model.pt: a LibTorch
// archive nested per module as torch::nn::Module::save writes one, in which each quantised
// Linear holds "weight_int8" (int8 [out, in]) and "weight_scales" (fp32 [out]) instead of
// "weight", every other parameter is fp32 under its usual name, and the top level holds
// "nmt_quantization" = "int8", "nmt_quantization_format" = 1 and "nmt_weights_checksum" (the
// hash of every stored tensor, see WeightsHasher). The tied output's int8 copy is derived from
// the embedding at load, not stored.
#include <string>

#include "nmt/models/int8_copy.h"  // quantize_model_dir, LibTorch's here
#include "nmt/models/model.h"
#include "nmt/models/model_dir.h"

namespace nmt::models {

inline constexpr const char* kInt8WeightsFile = "model.int8.pt";
inline constexpr int kInt8Format = 1;

// Quantises every QuantizableLinear of the model (and its tied output) from its fp32 weights,
// for decoding. Returns how many Linears were quantised.
int64_t quantize_model(Seq2SeqModelImpl& model);

// Writes a quantised model's weights as an int8 weights file, atomically (temporary file,
// fsync, rename). RuntimeError naming `path` when it cannot be written.
void save_int8_weights(Seq2SeqModelImpl& model, const std::string& path);

// Loads an int8 weights file into a model built from its configuration, which is then
// quantised (and its tied output too). A missing, truncated or corrupted file, an fp32 model.pt
// in its place, a newer format, a tensor of the wrong shape or type, or a checksum mismatch →
// RuntimeError naming `path`.
void load_int8_weights(Seq2SeqModelImpl& model, const std::string& path);

// Whether a loaded archive is an int8 weights file (it holds "nmt_quantization").
bool is_int8_archive(torch::serialize::InputArchive& archive);

}  // namespace nmt::models
