#pragma once
// A model directory as it is read without LibTorch: its configuration, its subword models and
// which weights it holds (the layout is in model_io.h). The CPU engine builds its models from
// this and model.safetensors; the LibTorch path adds the modules (models::LoadedModel).
#include <functional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "nmt/models/config.h"
#include "nmt/text/subword.h"

namespace nmt::models {

inline constexpr const char* kConfigFile = "config.json";
inline constexpr const char* kSubwordFile = "spm.model";
inline constexpr const char* kSourceSubwordFile = "spm.src.model";
inline constexpr const char* kSafetensorsFile = "model.safetensors";

// The version of the model directory's layout that config.json's "format" names. A directory
// of a newer format is refused (a newer nmt wrote it), never read half-right.
// 2: model.safetensors beside model.pt (1: model.pt alone; still read by the LibTorch path,
// `nmt upgrade` adds the safetensors file).
inline constexpr int kModelFormat = 2;

// Everything of a model directory but its weights.
struct ModelInfo {
  std::string dir;        // the model directory it was loaded from ("" when built in memory)
  nlohmann::json config;  // the whole config.json
  ModelConfig model_config;
  std::string quantization;  // "" (fp32) or "int8" (nmt/models/quantize.h)
  text::SubwordPair subwords;
};

// config.json's content: {"format": kModelFormat, "nmt_version": kVersion, "model": ..., "train": ...}.
nlohmann::json model_directory_config(const nlohmann::json& model, const nlohmann::json& train);

// config.json's "quantization": "" (absent: fp32) or "int8"; another value or type →
// RuntimeError naming `config_path`.
std::string quantization_of(const nlohmann::json& config, const std::string& config_path);

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

// DIR/config.json (its format checked, the model's configuration validated) and DIR's subword
// models; RuntimeError naming the file for anything missing or wrong.
ModelInfo load_model_info(const std::string& dir);

}  // namespace nmt::models
