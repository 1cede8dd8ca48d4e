#pragma once
// --no-repeat-ngram's rule (fairseq's --no-repeat-ngram-size), torch-free: both decoding
// engines ban the same tokens.
#include <cstdint>
#include <vector>

#include "nmt/text/token_ids.h"

namespace nmt::decode {

// The tokens that may not follow `history`: each token that followed an earlier occurrence of
// its last n-1 tokens (for n = 1, every token already in it). Sorted, unique; none for n < 1.
std::vector<int64_t> repeated_ngram_bans(const text::TokenIds& history, int64_t n);

}  // namespace nmt::decode
