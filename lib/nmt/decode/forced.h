#pragma once
// Forced decoding: each row's prefix is its whole target, then EOS; what is searched is
// nothing, what is returned is the log-probability of every token (Marian's marian-scorer,
// fairseq's --score-reference). It steps the decoder exactly as the searches do, so a beam
// search's output scores here as the search scored it.
#include "nmt/decode/search.h"

namespace nmt::decode {

class ForcedDecoding final : public SearchStrategy {
 public:
  std::vector<SearchResult> search(SearchBatch& batch, const DecodeOptions& options) const override;
};

}  // namespace nmt::decode
