#pragma once
// LibTorch's modules as a translator's decoder (decoder.h): every search strategy on one model
// or an ensemble, on any device, with nmt's CPU engine taking the searches it can (--engine).
#include <memory>
#include <vector>

#include "nmt/decode/decoder.h"
#include "nmt/decode/decoding_model.h"
#include "nmt/decode/translator.h"
#include "nmt/engine/engine.h"
#include "nmt/models/model_io.h"

namespace nmt::decode {

class TorchDecoder final : public Decoder {
 public:
  // `engine` (null for none) decodes the searches it takes, LibTorch the rest; with
  // `engine_required` (--engine native) a search it cannot run is a UsageError saying why.
  TorchDecoder(std::vector<models::Seq2SeqModel> models, std::shared_ptr<const engine::Engine> engine,
               bool engine_required);
  std::vector<SearchResult> search(const std::vector<text::TokenIds>& sources, const DecodeOptions& options,
                                   const std::vector<text::TokenIds>* prefixes,
                                   const std::vector<text::LineConstraints>* constraints) override;
  std::vector<SearchResult> score(const std::vector<text::TokenIds>& sources, const std::vector<text::TokenIds>& targets,
                                  const DecodeOptions& options) override;
  int64_t max_target_len() const override { return decoding_->max_target_len(); }
  bool uses_cpu_engine() const override { return engine_ != nullptr; }

 private:
  std::vector<models::Seq2SeqModel> models_;
  std::unique_ptr<DecodingModel> decoding_;
  std::shared_ptr<const engine::Engine> engine_;
  bool engine_required_ = false;
};

// A translator of models already loaded (nmt report, tests), on LibTorch alone.
Translator make_torch_translator(std::vector<models::LoadedModel> models);

}  // namespace nmt::decode
