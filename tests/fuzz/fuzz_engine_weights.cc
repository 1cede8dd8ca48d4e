// libFuzzer target: a model's weights as the CPU engine loads them (what `nmt translate` does with
// a model directory's config.json and model.safetensors, without LibTorch). The input is a
// model section of config.json and a safetensors file: [4 bytes, little-endian: N][N bytes of
// JSON][the file]. A weights file that does not fit the configuration (a missing, extra or
// misshapen tensor, another dtype, NaN or infinite values, an int8 copy without its scales, a
// header that lies), or a configuration the engine does not decode, may be refused, with
// nmt::Error only; nothing may crash, read out of bounds or hit undefined behaviour. What loads
// is loaded again in int8, as `--int8` does. Seeds: tests/fuzz/corpus/fuzz_engine_weights
// (tiny Transformers and GRUs of nmt_random_model, fp32 and int8).
#include <cstdint>
#include <cstring>
#include <string>

#include <nlohmann/json.hpp>

#include "nmt/decode/cpu_engine.h"
#include "nmt/engine/safetensors_weights.h"
#include "nmt/models/config.h"
#include "nmt/models/gru_config.h"
#include "nmt/models/transformer_config.h"
#include "nmt/util/error.h"
#include "nmt/util/safetensors.h"

namespace {

// Configurations whose tables alone would outgrow the fuzzer's memory limit are skipped: the
// engine sizes its position table and packed copies from them before reading a weight.
bool small_enough(const nmt::models::ModelConfig& c) {
  if (c.src_vocab > 4096 || c.tgt_vocab > 4096 || c.max_positions > 1024) return false;
  if (c.type == "gru") {
    const auto& g = c.get<nmt::models::GruConfig>();
    return g.embedding <= 256 && g.hidden <= 256 && g.rnn_layers <= 4;
  }
  const auto& t = c.get<nmt::models::TransformerConfig>();
  return t.d_model <= 256 && t.ffn <= 1024 && t.encoder_layers <= 4 && t.decoder_layers <= 4;
}

void load(const nmt::safetensors::File& file, const nmt::models::ModelConfig& config, bool int8) {
  const nmt::engine::SafetensorsWeights weights(file);
  if (config.type == "gru") nmt::engine::GruBahdanau(nmt::decode::gru_spec(config), weights, int8);
  else nmt::engine::Transformer(nmt::decode::transformer_spec(config), weights, int8);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 4) return 0;
  uint32_t json_size = 0;
  std::memcpy(&json_size, data, 4);
  if (json_size > size - 4) return 0;
  const std::string json(reinterpret_cast<const char*>(data) + 4, json_size);
  std::string bytes(reinterpret_cast<const char*>(data) + 4 + json_size, size - 4 - json_size);
  nmt::models::ModelConfig config;
  try {
    config = nmt::models::ModelConfig::from_json(nlohmann::json::parse(json));
  } catch (const nlohmann::json::exception&) {
    return 0;
  } catch (const nmt::Error&) {
    return 0;
  }
  if (!nmt::decode::engine_cannot_decode(config).empty() || !small_enough(config)) return 0;
  try {
    const nmt::safetensors::File file = nmt::safetensors::File::from_bytes(std::move(bytes), "model.safetensors");
    load(file, config, /*int8=*/false);
    load(file, config, /*int8=*/true);
  } catch (const nmt::Error&) {
  }
  return 0;
}
