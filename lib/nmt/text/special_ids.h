#pragma once
// The special subword ids, fixed for every model this project trains or loads (the one place they
// are defined; nmt::text::SubwordModel and nmt::models refer to these). Tensors can be padded with
// kPadId = 0 without consulting the model; nmt::text::SubwordModel::load() rejects a SentencePiece
// model with any other layout.
#include "nmt/text/token_ids.h"

namespace nmt::text {

inline constexpr TokenId kPadId = 0;  // "<pad>"
inline constexpr TokenId kUnkId = 1;  // "<unk>"
inline constexpr TokenId kBosId = 2;  // "<s>"
inline constexpr TokenId kEosId = 3;  // "</s>"

}  // namespace nmt::text
