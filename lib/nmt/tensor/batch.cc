#include "nmt/tensor/batch.h"

#include <algorithm>

#include "nmt/text/special_ids.h"

namespace nmt {
using text::kBosId;
using text::kEosId;
using text::TokenIds;

namespace {
// Fills a [B, len] int64 tensor directly in its buffer (no per-element tensor ops).
torch::Tensor pad_rows(const std::vector<const TokenIds*>& rows, int64_t max_len, bool bos, bool eos, int64_t* count) {
  int64_t width = 0;
  for (const TokenIds* r : rows) width = std::max<int64_t>(width, std::min<int64_t>(r->size(), max_len) + bos + eos);
  auto t = torch::zeros({static_cast<int64_t>(rows.size()), std::max<int64_t>(width, 1)}, torch::kLong);
  int64_t* data = t.data_ptr<int64_t>();
  const int64_t stride = t.size(1);
  int64_t total = 0;
  for (size_t i = 0; i < rows.size(); ++i) {
    int64_t* row = data + i * stride;
    int64_t j = 0;
    if (bos) row[j++] = kBosId;
    const int64_t n = std::min<int64_t>(rows[i]->size(), max_len);
    for (int64_t k = 0; k < n; ++k) row[j++] = (*rows[i])[k];
    if (eos) row[j++] = kEosId;
    total += j;
  }
  if (count) *count = total;
  return t;
}
}  // namespace

Batch make_source_batch(const std::vector<const TokenIds*>& sources, int64_t max_len) {
  Batch b;
  // Sources end with EOS, as in fairseq: the encoder sees where the sentence stops.
  b.src = pad_rows(sources, max_len - 1, false, true, &b.src_tokens);
  b.src_mask = b.src.ne(0);
  return b;
}

Batch make_batch(const std::vector<const TokenIds*>& sources, const std::vector<const TokenIds*>& targets) {
  Batch b = make_source_batch(sources);
  b.tgt_in = pad_rows(targets, 1 << 30, true, false, nullptr);
  b.tgt_out = pad_rows(targets, 1 << 30, false, true, &b.tgt_tokens);
  return b;
}

}  // namespace nmt
