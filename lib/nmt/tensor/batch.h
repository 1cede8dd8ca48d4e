#pragma once
// Padded tensors for a list of subword-id sequences.
#include <cstdint>
#include <vector>

#include <torch/torch.h>

#include "nmt/text/token_ids.h"

namespace nmt {

struct Batch {
  torch::Tensor src;       // int64 [B,S], pad 0
  torch::Tensor src_mask;  // bool [B,S], true on real tokens
  torch::Tensor tgt_in;    // int64 [B,T]: BOS y1 .. yn
  torch::Tensor tgt_out;   // int64 [B,T]: y1 .. yn EOS
  int64_t src_tokens = 0;  // non-pad source tokens
  int64_t tgt_tokens = 0;  // non-pad target tokens (= loss positions)
  int64_t size() const { return src.defined() ? src.size(0) : 0; }
};

// Source side only (translation); sources longer than max_len are cut to max_len.
Batch make_source_batch(const std::vector<const text::TokenIds*>& sources, int64_t max_len = 1 << 30);

// Source and target (training / validation loss).
Batch make_batch(const std::vector<const text::TokenIds*>& sources, const std::vector<const text::TokenIds*>& targets);

}  // namespace nmt
