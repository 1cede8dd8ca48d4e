#pragma once
// The bridge between the LibTorch side and the CPU engine (engine/engine.h): which models and
// searches the engine takes, building it from loaded model directories, and running a search
// on it with the LibTorch path's options. `--engine` (RuntimeOptions::engine) chooses.
#include <memory>
#include <string>
#include <vector>

#include "nmt/decode/search.h"
#include "nmt/engine/engine.h"
#include "nmt/engine/gru.h"
#include "nmt/engine/transformer.h"
#include "nmt/models/model_io.h"

namespace nmt::decode {

// Why the CPU engine cannot decode these models ("" when it can).
std::string engine_cannot_decode(const std::vector<models::LoadedModel>& models);
// Why it cannot run this search ("" when it can): sampling, forced scoring and phrases to include
// stay on LibTorch.
std::string engine_cannot_search(const SearchStrategy& strategy, bool any_positive_constraints);

// The engine for these models, their weights copied (and rearranged) from the LibTorch modules.
std::shared_ptr<const engine::Engine> make_cpu_engine(const std::vector<models::LoadedModel>& models);
// One model (a Transformer or a GRU) as the engine decodes it; `int8`: its products in int8 (the
// module's own int8 weights where it is quantised, the rest quantised here as nmt quantize does).
std::shared_ptr<const engine::Model> cpu_engine_model(models::Seq2SeqModelImpl& model, bool int8);
// The same from a model directory's model.safetensors (its checksum verified), without LibTorch's
// modules: what a directory of format 2 is decoded from.
std::shared_ptr<const engine::Model> cpu_engine_model(const std::string& safetensors_file,
                                                     const models::ModelConfig& config, bool int8);
// The hyper-parameters the engine reads, from a Transformer's or a GRU's configuration.
engine::TransformerSpec transformer_spec(const models::ModelConfig& config);
engine::GruSpec gru_spec(const models::ModelConfig& config);

// decode::search on the engine: the same results for the searches it takes.
std::vector<SearchResult> engine_search(const engine::Engine& engine, const std::vector<text::TokenIds>& sources,
                                        const DecodeOptions& options, const SearchStrategy& strategy,
                                        const std::vector<text::TokenIds>* prefixes,
                                        const std::vector<text::LineConstraints>* constraints);

}  // namespace nmt::decode
