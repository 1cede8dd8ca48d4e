#pragma once
// A model directory: everything `nmt translate -m DIR` needs, nothing else.
//   config.json   full configuration (model architecture + the training options), readable
//   spm.model     the SentencePiece model (special ids pad 0, unk 1, bos 2, eos 3): the joint
//                 one, or the target side's when the model has separate vocabularies
//   spm.src.model the source side's SentencePiece model, only with separate vocabularies
//                 (config.json: "shared_vocab": false)
//   model.safetensors  the weights to translate with (the best checkpoint by validation), as
//                 the CPU engine and nmt without LibTorch read them (models/weights_file.h)
//   model.pt      the same weights as a LibTorch archive (model.int8.pt for int8 copies): what
//                 the LibTorch path and nmt before format 2 read
//   checkpoint/   the latest complete training state (see nmt/train/checkpoint.h)
//   metrics.jsonl one JSON object per log/validation event
#include <functional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "nmt/models/model.h"
#include "nmt/models/model_dir.h"
#include "nmt/text/subword.h"
#include "nmt/util/hash.h"

namespace nmt::models {

inline constexpr const char* kWeightsFile = "model.pt";

// Serialises an archive in memory, then writes it with write_file_atomic (checked writes,
// temp file + fsync + rename). LibTorch's own file writer finishes the zip in its destructor
// and throws from there when the disk is full, which ends the process (std::terminate).
void save_archive(torch::serialize::OutputArchive& archive, const std::string& path);

// 64-bit checksum of a module's parameters and buffers (names, types, shapes and bytes).
std::string weights_checksum(torch::nn::Module& model);

// The archive key holding the checksum in model.pt and int8 weights files; LibTorch's
// Module::load ignores keys it does not know, so files with it stay readable by any LibTorch
// program.
inline constexpr const char* kWeightsChecksumKey = "nmt_weights_checksum";

// The hash behind weights_checksum(), fed one named tensor at a time (int8 weights files hash
// what they store, which is not the module's parameters).
class WeightsHasher {
 public:
  void add(const std::string& name, const torch::Tensor& tensor);
  std::string hex() const;

 private:
  void add_bytes(const void* data, size_t n);
  uint64_t h_ = kFnvOffset;
};

// Throws RuntimeError "WHAT: non-finite values (NaN or infinity) in 'NAME'" if any parameter
// holds one: such weights translate into empty lines and must never be saved or used.
void check_finite(torch::nn::Module& model, const std::string& what);

// Writes the module's parameters and buffers to `path` atomically, with weights_checksum()
// inside the archive. Non-finite weights are refused.
void save_weights(torch::nn::Module& model, const std::string& path);
// Loads parameters into an already built module; a missing/corrupt file, a shape mismatch
// (config not matching the weights), a checksum mismatch or non-finite weights → RuntimeError
// naming the file. Files written before checksums existed (no checksum inside) still load;
// the finiteness check applies to them too.
void load_weights(torch::nn::Module& model, const std::string& path);

// A model directory with its weights in a LibTorch module.
struct LoadedModel : ModelInfo {
  Seq2SeqModel model;
};

// Loads DIR/config.json, DIR/spm.model (and spm.src.model) and DIR/<weights> (default: model.pt, or model.int8.pt
// when config.json says "quantization": "int8", see nmt/models/quantize.h; model.safetensors where
// that archive is absent, as in an int8 copy written without LibTorch); the model is in eval mode.
LoadedModel load_model(const std::string& dir, const std::string& weights = "");

}  // namespace nmt::models
