#pragma once
// Batched beam search: all sentences of a batch and all their beams are one batch of rows for
// the model; the decoder state is reordered by beam origin each step.
#include <memory>
#include <string>

#include "nmt/decode/search.h"
#include "nmt/decode/search_options.h"

namespace nmt::decode {

struct BeamOptions {
  int64_t beam = 5;
  int64_t nbest = 1;  // hypotheses returned per sentence (<= beam)
  LengthPenalty length_penalty = LengthPenalty::kGnmt;
  double alpha = 0.6;
  // Off (default): fairseq's search, K live beams out of the top 2K candidates until K
  // hypotheses are finished; every sentence keeps K rows, so the model stores each source's
  // keys/values once for its K beams. On: shrinking beams (Marian), each finished hypothesis
  // gives its slot up; fewer rows late, but beams of different widths need per-row copies of
  // the source's keys/values.
  bool shrink = false;
};

// The length penalty applied to a hypothesis of `length` tokens (EOS included).
double length_penalty(const BeamOptions& options, int64_t length);

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
