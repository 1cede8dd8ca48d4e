#pragma once
// Batched beam search: all sentences of a batch and all their beams are one batch of rows for
// the model; the decoder state is reordered by beam origin each step.
#include <memory>
#include <string>

#include "nmt/decode/beam_options.h"
#include "nmt/decode/search.h"
#include "nmt/decode/search_options.h"

namespace nmt::decode {


class BeamSearch final : public SearchStrategy {
 public:
  explicit BeamSearch(BeamOptions options) : options_(options) {}
  void validate() const override;
  std::vector<SearchResult> search(SearchBatch& batch, const DecodeOptions& options) const override;
  const BeamOptions& options() const { return options_; }

 private:
  BeamOptions options_;
};

}  // namespace nmt::decode
