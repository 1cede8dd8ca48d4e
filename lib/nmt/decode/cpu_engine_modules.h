#pragma once
// The CPU engine built from LibTorch's modules (a model directory of format 1 holds model.pt
// alone, and tests compare the engine with the modules it was copied from).
#include <memory>
#include <vector>

#include "nmt/decode/cpu_engine.h"
#include "nmt/models/model_io.h"

namespace nmt::decode {

// The engine for these models: from each directory's model.safetensors where it has one, else
// their weights copied (and rearranged) from the modules. UsageError when it cannot decode one.
std::shared_ptr<const engine::Engine> make_cpu_engine(const std::vector<models::LoadedModel>& models);
// One model (a Transformer or a GRU) as the engine decodes it; `int8`: its products in int8 (the
// module's own int8 weights where it is quantised, the rest quantised here as nmt quantize does).
std::shared_ptr<const engine::Model> cpu_engine_model(models::Seq2SeqModelImpl& model, bool int8);

}  // namespace nmt::decode
