#pragma once
// What a row may not emit next, applied to the next-token scores of every strategy before it
// chooses: --no-repeat-ngram N (fairseq's --no-repeat-ngram-size, the cure the field uses for
// the repetition loops small models fall into: "un un un un"), negative lexical constraints
// (avoided phrases), and, in beam search, the end of sentence while positive constraints are
// unmet.
#include <cstdint>
#include <vector>

#include <torch/torch.h>

#include "nmt/decode/ngram_bans.h"
#include "nmt/tensor/batch.h"
#include "nmt/text/lexical_constraints.h"

namespace nmt::decode {

// One model row as the bans see it.
struct RowBans {
  const text::TokenIds* history = nullptr;  // null: the row is inside its forced prefix (its token is given)
  const text::LineConstraints* constraints = nullptr;  // null: none
  bool ban_eos = false;          // positive constraints still unmet
};

// Sets to -inf, in each row r of `scores` [rows, V], the tokens rows[r] may not emit: the
// repeated n-grams (n = no_repeat_ngram, none below 1), the last token of each avoided phrase
// the history ends in, and EOS when asked.
void ban_next_tokens(torch::Tensor& scores, const std::vector<RowBans>& rows, int64_t no_repeat_ngram);

}  // namespace nmt::decode
