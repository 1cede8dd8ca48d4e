#pragma once
// --no-repeat-ngram N (fairseq's --no-repeat-ngram-size): no hypothesis contains the same
// subword n-gram twice, the cure the field uses for the repetition loops small models fall into
// ("un un un un"). Applied to the next-token scores of every strategy before it chooses.
#include <cstdint>
#include <vector>

#include <torch/torch.h>

#include "nmt/tensor/batch.h"

namespace nmt::decode {

// The tokens that may not follow `history`: each token that followed an earlier occurrence of
// its last n-1 tokens (for n = 1, every token already in it). Sorted, unique; none for n < 1.
std::vector<int64_t> repeated_ngram_bans(const Ids& history, int64_t n);

// Sets to -inf, in each row r of `scores` [rows, V], the tokens repeated_ngram_bans bans after
// *histories[r]; a null history bans nothing (a row inside its forced prefix, whose next token is
// given). Nothing for n < 1.
void ban_repeated_ngrams(torch::Tensor& scores, const std::vector<const Ids*>& histories, int64_t n);

}  // namespace nmt::decode
