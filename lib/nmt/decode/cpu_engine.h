#pragma once
// nmt's CPU engine (engine/engine.h) as a Decoder (decoder.h), torch-free: which models and
// searches it takes, building its models from a directory's model.safetensors, running a search
// with the decoding options, and loading a translator on it without LibTorch. The LibTorch
// build chooses it by --engine (torch_decoder.h); a build without LibTorch has nothing else.
#include <memory>
#include <string>
#include <vector>

#include "nmt/decode/decoder.h"
#include "nmt/decode/translator.h"
#include "nmt/engine/engine.h"
#include "nmt/engine/gru.h"
#include "nmt/engine/transformer.h"
#include "nmt/models/model_dir.h"

namespace nmt::decode {

// Why the CPU engine cannot decode this model ("" when it can).
std::string engine_cannot_decode(const models::ModelConfig& config);
// Why it cannot run this search ("" when it can; every search nmt has runs on it today).
std::string engine_cannot_search(SearchKind kind, bool any_positive_constraints);

// A model as the engine decodes it, from a model directory's model.safetensors (its checksum
// verified); `int8`: its products in int8 (the file's own int8 weights where it holds them, the
// rest quantised here as nmt quantize does).
std::shared_ptr<const engine::Model> cpu_engine_model(const std::string& safetensors_file,
                                                     const models::ModelConfig& config, bool int8);
// DIR/model.safetensors; a directory of format 1 (model.pt alone) → RuntimeError naming the file
// and the command that upgrades it.
std::string safetensors_file_of(const std::string& dir);
// The hyper-parameters the engine reads, from a Transformer's or a GRU's configuration.
engine::TransformerSpec transformer_spec(const models::ModelConfig& config);
engine::GruSpec gru_spec(const models::ModelConfig& config);

// A search on the engine with the decoding options: the same results as LibTorch's decoding
// for the searches it takes (UsageError for the others, worded by engine_cannot_search).
std::vector<SearchResult> engine_search(const engine::Engine& engine, const std::vector<text::TokenIds>& sources,
                                        const DecodeOptions& options, const std::vector<text::TokenIds>* prefixes,
                                        const std::vector<text::LineConstraints>* constraints);

// Each target's log-probabilities given its source on the engine: forced decoding, as
// decode/forced.h's (every target token's log-probability, then EOS's).
std::vector<SearchResult> engine_score(const engine::Engine& engine, const std::vector<text::TokenIds>& sources,
                                       const std::vector<text::TokenIds>& targets, const DecodeOptions& options);

// The engine alone as a translator's decoder. A search it cannot run is a UsageError that says
// why, prefixed by `refusal` ("--engine native", or the build's name).
class EngineDecoder final : public Decoder {
 public:
  EngineDecoder(std::shared_ptr<const engine::Engine> engine, std::string refusal);
  std::vector<SearchResult> search(const std::vector<text::TokenIds>& sources, const DecodeOptions& options,
                                   const std::vector<text::TokenIds>* prefixes,
                                   const std::vector<text::LineConstraints>* constraints) override;
  std::vector<SearchResult> score(const std::vector<text::TokenIds>& sources, const std::vector<text::TokenIds>& targets,
                                  const DecodeOptions& options) override;
  int64_t max_target_len() const override { return engine_->max_target_len(); }
  bool uses_cpu_engine() const override { return true; }

 private:
  std::shared_ptr<const engine::Engine> engine_;
  std::string refusal_;
};

// The model in each directory, or their ensemble, on the engine alone, read from
// model.safetensors without LibTorch (`runtime.int8`: decoded in int8). A directory of format 1
// (model.pt alone) is refused with the command that upgrades it; `refusal` prefixes the
// searches the engine refuses, as EngineDecoder's.
Translator load_engine_translator(const std::vector<std::string>& model_dirs, const RuntimeOptions& runtime,
                                  const std::string& refusal);

}  // namespace nmt::decode
