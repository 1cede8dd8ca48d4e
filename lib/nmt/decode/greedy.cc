#include "nmt/decode/greedy.h"

#include <algorithm>
#include <numeric>

#include "nmt/tensor/device.h"

namespace nmt::decode {
using models::kBosId;
using models::kEosId;

std::vector<std::vector<size_t>> length_sorted_batches(const std::vector<Ids>& sources, const DecodeOptions& options) {
  std::vector<size_t> order(sources.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t a, size_t b) { return sources[a].size() > sources[b].size(); });
  std::vector<std::vector<size_t>> batches;
  std::vector<size_t> current;
  for (size_t idx : order) {
    // Sorted decreasingly, so the first sentence of a batch is its longest.
    const int64_t width = current.empty() ? 0 : static_cast<int64_t>(sources[current.front()].size()) + 1;
    const bool full = static_cast<int64_t>(current.size()) >= options.max_sentences ||
                      (options.max_tokens > 0 && width * static_cast<int64_t>(current.size() + 1) > options.max_tokens);
    if (!current.empty() && full) {
      batches.push_back(std::move(current));
      current.clear();
    }
    current.push_back(idx);
  }
  if (!current.empty()) batches.push_back(std::move(current));
  return batches;
}

int64_t max_target_len(const models::Seq2SeqModelImpl& model) {
  return model.config().max_positions - 1;  // BOS takes a position
}

namespace {
void decode_batch(models::Seq2SeqModelImpl& model, const std::vector<Ids>& sources, const std::vector<size_t>& ids,
                  const DecodeOptions& options, std::vector<Hypothesis>& out) {
  std::vector<const Ids*> rows;
  for (size_t i : ids) rows.push_back(&sources[i]);
  // The model's device (the CPU unless trained or loaded with --device cuda); host reads of
  // the chosen tokens go through .to(kCPU), which is free on the CPU.
  const torch::Device device = model.parameters().front().device();
  const auto on_device = torch::TensorOptions().dtype(torch::kLong).device(device);
  Batch batch = to_device(make_source_batch(rows, options.max_source_len), device);
  const int64_t B = batch.size();
  auto memory = model.encode(batch.src, batch.src_mask);
  models::DecoderCache cache = model.start(memory, batch.src_mask);
  cache.record_attention = options.record_attention;
  cache.attention_layer = options.attention_layer;
  cache.attention_head = options.attention_head;

  std::vector<int64_t> limit(B), src_len(B);
  for (int64_t b = 0; b < B; ++b) {
    src_len[b] = static_cast<int64_t>(std::min<size_t>(rows[b]->size(), options.max_source_len - 1)) + 1;
    limit[b] = std::max<int64_t>(1, static_cast<int64_t>(options.max_len_a * (src_len[b] - 1)) + options.max_len_b);
    limit[b] = std::min(limit[b], max_target_len(model));
  }
  const int64_t longest = *std::max_element(limit.begin(), limit.end());

  std::vector<int64_t> alive(B);  // batch row → position in `ids`
  std::iota(alive.begin(), alive.end(), 0);
  auto tokens = torch::full({B}, kBosId, on_device);
  for (int64_t t = 0; t < longest + 1 && !alive.empty(); ++t) {
    auto logits = model.step(tokens, cache);
    auto next = logits.argmax(-1);
    const auto next_host = next.to(torch::kCPU);
    const int64_t* next_data = next_host.data_ptr<int64_t>();
    torch::Tensor attention;
    if (options.record_attention) attention = cache.attention.to(torch::kCPU, torch::kFloat).contiguous();
    std::vector<int64_t> keep;
    keep.reserve(alive.size());
    for (size_t r = 0; r < alive.size(); ++r) {
      const int64_t b = alive[r];
      Hypothesis& h = out[ids[b]];
      const int64_t token = next_data[r];
      if (options.record_attention) {
        const float* row = attention.data_ptr<float>() + r * attention.size(1);
        h.attention.emplace_back(row, row + src_len[b]);
      }
      const bool at_limit = static_cast<int64_t>(h.tokens.size()) >= limit[b];
      const bool done = token == kEosId || at_limit;
      // Cut off by the length limit: the last row belongs to a token that is not emitted.
      if (at_limit && token != kEosId && options.record_attention) h.attention.pop_back();
      if (!done) {
        h.tokens.push_back(static_cast<int>(token));
        keep.push_back(static_cast<int64_t>(r));
      }
    }
    if (keep.size() != alive.size()) {
      if (keep.empty()) break;
      auto index = torch::tensor(keep, torch::kLong).to(device);
      cache.select(index);
      next = next.index_select(0, index);
      std::vector<int64_t> still;
      still.reserve(keep.size());
      for (int64_t r : keep) still.push_back(alive[r]);
      alive.swap(still);
    }
    tokens = next;
  }
}
}  // namespace

std::vector<Hypothesis> greedy_decode(models::Seq2SeqModelImpl& model, const std::vector<Ids>& sources,
                                      const DecodeOptions& options) {
  torch::InferenceMode guard;
  const bool was_training = model.is_training();
  model.eval();
  std::vector<Hypothesis> out(sources.size());
  for (const auto& batch : length_sorted_batches(sources, options)) {
    decode_batch(model, sources, batch, options, out);
    if (options.on_batch_done) options.on_batch_done(batch.size());
  }
  if (was_training) model.train();
  return out;
}

}  // namespace nmt::decode
