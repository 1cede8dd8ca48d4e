#pragma once
// Greedy search: the most probable next token of every row, a sentence leaving its batch as
// soon as it emits EOS.
#include "nmt/decode/search.h"

namespace nmt::decode {

// The loop of the strategies that keep one hypothesis per sentence (greedy search, sampling):
// `choose` picks the next token of each row of `scores` [rows, V] (the rows of the sentences
// `alive`, batch rows, at step t) as an int64 CPU tensor [rows]; forced prefixes override it.
using ChooseTokens =
    std::function<torch::Tensor(const torch::Tensor& scores, const std::vector<int64_t>& alive, int64_t t)>;
std::vector<SearchResult> one_best_search(SearchBatch& batch, const DecodeOptions& options, const ChooseTokens& choose);

class GreedySearch final : public SearchStrategy {
 public:
  std::vector<SearchResult> search(SearchBatch& batch, const DecodeOptions& options) const override;
};

}  // namespace nmt::decode
