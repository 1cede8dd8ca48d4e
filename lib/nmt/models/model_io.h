#pragma once
// A model directory: everything `nmt translate -m DIR` needs, nothing else.
//   config.json   full configuration (model architecture + the training options), readable
//   spm.model     the SentencePiece model (special ids pad 0, unk 1, bos 2, eos 3)
//   model.pt      the weights to translate with (the best checkpoint by validation)
//   checkpoint/   the latest complete training state (see nmt/train/checkpoint.h)
//   metrics.jsonl one JSON object per log/validation event
#include <string>

#include <nlohmann/json.hpp>

#include "nmt/models/model.h"
#include "nmt/text/subword.h"

namespace nmt::models {

inline constexpr const char* kConfigFile = "config.json";
inline constexpr const char* kSubwordFile = "spm.model";
inline constexpr const char* kWeightsFile = "model.pt";

// Writes the module's parameters and buffers to `path` atomically (temp file + rename).
void save_weights(torch::nn::Module& model, const std::string& path);
// Loads parameters into an already built module; a missing/corrupt file or a shape
// mismatch (config not matching the weights) → RuntimeError naming the file.
void load_weights(torch::nn::Module& model, const std::string& path);

struct LoadedModel {
  nlohmann::json config;  // the whole config.json
  ModelConfig model_config;
  text::SubwordModel subwords;
  Seq2SeqModel model;
};

// Loads DIR/config.json, DIR/spm.model and DIR/<weights>; the model is in eval mode.
LoadedModel load_model(const std::string& dir, const std::string& weights = kWeightsFile);

}  // namespace nmt::models
