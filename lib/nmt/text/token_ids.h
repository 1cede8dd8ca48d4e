#pragma once
// Subword ids: the one spelling of a sentence's tokens in every layer (what the subword model
// gives, what a dataset stores, what a batch is padded from, what decoding returns). Torch-free,
// so text/ and data/ share it with the LibTorch side. The element is the C ABI's int
// (text/spm_c_abi/nmt_spm.h passes ids as int), of 32 bits on every platform nmt builds for.
#include <cstdint>
#include <type_traits>
#include <vector>

namespace nmt::text {

using TokenId = int32_t;
using TokenIds = std::vector<TokenId>;
static_assert(std::is_same_v<TokenId, int>, "token ids cross the SentencePiece C ABI as int");

}  // namespace nmt::text
