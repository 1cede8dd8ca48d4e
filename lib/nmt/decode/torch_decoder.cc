#include "nmt/decode/torch_decoder.h"

#include <fmt/format.h>
#include <torch/version.h>

#include "nmt/decode/cpu_engine_modules.h"
#include "nmt/decode/forced.h"
#include "nmt/decode/strategy.h"
#include "nmt/models/quantize.h"
#include "nmt/tensor/device.h"
#include "nmt/util/error.h"

namespace nmt::decode {

TorchDecoder::TorchDecoder(std::vector<models::Seq2SeqModel> models, std::shared_ptr<const engine::Engine> engine,
                           bool engine_required)
    : models_(std::move(models)), engine_(std::move(engine)), engine_required_(engine_required) {
  std::vector<models::Seq2SeqModelImpl*> raw;
  for (auto& m : models_) raw.push_back(m.get());
  decoding_ = make_decoding_model(raw);
}

std::vector<SearchResult> TorchDecoder::search(const std::vector<text::TokenIds>& sources, const DecodeOptions& options,
                                               const std::vector<text::TokenIds>* prefixes,
                                               const std::vector<text::LineConstraints>* constraints) {
  const auto strategy = make_search_strategy(options.search, options.constrained);
  if (engine_) {
    bool any_include = false;
    if (constraints)
      for (const auto& c : *constraints) any_include |= !c.include.empty();
    const std::string why = engine_cannot_search(search_kind(options.search, options.constrained), any_include);
    if (why.empty()) return engine_search(*engine_, sources, options, prefixes, constraints);
    if (engine_required_) throw UsageError(fmt::format("--engine native: {}; use --engine torch or auto", why));
  }
  return decode::search(*decoding_, sources, options, *strategy, prefixes, constraints);
}

std::vector<SearchResult> TorchDecoder::score(const std::vector<text::TokenIds>& sources,
                                              const std::vector<text::TokenIds>& targets, const DecodeOptions& options) {
  // --engine auto scores on LibTorch, the reference; --engine native on the engine.
  if (engine_required_) return engine_score(*engine_, sources, targets, options);
  return decode::search(*decoding_, sources, options, ForcedDecoding(), &targets);
}

namespace {
Translator translator_of(std::vector<models::LoadedModel> models, std::shared_ptr<const engine::Engine> engine,
                         bool engine_required) {
  std::vector<models::ModelInfo> infos;
  std::vector<models::Seq2SeqModel> modules;
  for (auto& m : models) {
    modules.push_back(m.model);
    infos.push_back(std::move(static_cast<models::ModelInfo&>(m)));
  }
  return Translator(std::move(infos),
                    std::make_unique<TorchDecoder>(std::move(modules), std::move(engine), engine_required));
}
}  // namespace

Translator make_torch_translator(std::vector<models::LoadedModel> models) {
  return translator_of(std::move(models), nullptr, false);
}

std::string decoder_library() { return std::string("LibTorch ") + TORCH_VERSION; }

Translator load_translator(const std::vector<std::string>& model_dirs, const RuntimeOptions& runtime) {
  const torch::Device device = resolve_device(runtime.device);
  std::vector<models::LoadedModel> models;
  for (const auto& dir : model_dirs) {
    models.push_back(models::load_model(dir));
    if (runtime.int8 && models.back().quantization.empty()) {
      models::quantize_model(*models.back().model);
      models.back().quantization = "int8";
    }
    models.back().model->to(device);
  }
  std::vector<const models::ModelInfo*> members;
  for (const auto& m : models) members.push_back(&m);
  check_ensemble(members);  // before an engine is built of them
  const bool required = runtime.engine == "native";
  std::string why = device.is_cpu() ? "" : "the CPU engine decodes on the CPU only";
  for (const auto& m : models)
    if (why.empty()) why = engine_cannot_decode(m.model_config);
  if (required && !why.empty()) throw UsageError(fmt::format("--engine native: {}; use --engine torch", why));
  std::shared_ptr<const engine::Engine> engine;
  if (runtime.engine != "torch" && why.empty()) engine = make_cpu_engine(models);
  return translator_of(std::move(models), std::move(engine), required);
}

}  // namespace nmt::decode
