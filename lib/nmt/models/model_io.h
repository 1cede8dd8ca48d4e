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
#include "nmt/text/subword.h"
#include "nmt/util/hash.h"

namespace nmt::models {

inline constexpr const char* kConfigFile = "config.json";
inline constexpr const char* kSubwordFile = "spm.model";
inline constexpr const char* kSourceSubwordFile = "spm.src.model";
inline constexpr const char* kWeightsFile = "model.pt";

// The version of the model directory's layout that config.json's "format" names. A directory
// of a newer format is refused by load_model (a newer nmt wrote it), never read half-right.
// 2: model.safetensors beside model.pt (1: model.pt alone; still read, `nmt upgrade` adds the
// safetensors file).
inline constexpr int kModelFormat = 2;

// config.json's content: {"format": kModelFormat, "nmt_version": kVersion, "model": ..., "train": ...}.
nlohmann::json model_directory_config(const nlohmann::json& model, const nlohmann::json& train);

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

struct LoadedModel {
  std::string dir;        // the model directory it was loaded from ("" when built in memory)
  nlohmann::json config;  // the whole config.json
  ModelConfig model_config;
  std::string quantization;  // "" (fp32) or "int8" (nmt/models/quantize.h)
  text::SubwordPair subwords;
  Seq2SeqModel model;
};

// The subword files of a model directory: spm.model, and spm.src.model as well when its
// vocabularies are separate (ModelConfig::shared_vocab false).
std::vector<std::string> subword_files(bool shared_vocab);
// Copies them from one model directory to another (checked, atomic writes).
void copy_subword_files(const std::string& from, const std::string& to, bool shared_vocab);

// Writes a whole model directory at `target` (nmt average, nmt quantize): `fill` writes its
// files into a hidden directory beside it, which is then renamed into place; an existing
// `target` is moved aside first and removed once the new one is there. On any error nothing
// is left behind and an old `target` is untouched. `what` names the directory in errors.
void write_model_directory(const std::string& target, const std::string& what,
                           const std::function<void(const std::string& dir)>& fill);
// DIR's subword models for this configuration, each checked against the model's vocabulary
// size (a missing, corrupt or mismatched file → RuntimeError naming it).
text::SubwordPair load_subwords(const std::string& dir, const ModelConfig& config);

// Loads DIR/config.json, DIR/spm.model (and spm.src.model) and DIR/<weights> (default: model.pt, or model.int8.pt
// when config.json says "quantization": "int8", see nmt/models/quantize.h); the model is in
// eval mode.
LoadedModel load_model(const std::string& dir, const std::string& weights = "");

}  // namespace nmt::models
