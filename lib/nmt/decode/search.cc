#include "nmt/decode/search.h"

#include <algorithm>

#include "nmt/tensor/device.h"

namespace nmt::decode {

std::vector<std::vector<size_t>> length_sorted_batches(const std::vector<text::TokenIds>& sources, const DecodeOptions& options) {
  return length_sorted_batches(sources, options.search.batch_size, options.max_tokens);
}

std::vector<float> attention_row(const torch::Tensor& attention, int64_t row, int64_t width) {
  const float* p = attention.data_ptr<float>() + row * attention.size(1);
  return std::vector<float>(p, p + width);
}

namespace {

const text::TokenIds kNoPrefix;
const text::LineConstraints kNoConstraints;

// Encodes one batch, starts the decoder and works out each row's limits: what every strategy
// needs before its first step.
SearchBatch start_batch(const DecodingModel& model, const std::vector<text::TokenIds>& sources, const std::vector<size_t>& ids,
                        const DecodeOptions& options, const std::vector<text::TokenIds>* prefixes,
                        const std::vector<text::LineConstraints>* constraints) {
  std::vector<const text::TokenIds*> rows;
  for (size_t i : ids) rows.push_back(&sources[i]);
  // The model's device (the CPU unless trained or loaded with --device cuda); host reads of
  // the chosen tokens go through .to(kCPU), which is free on the CPU.
  const torch::Device device = model.device();
  Batch batch = to_device(make_source_batch(rows, options.max_source_len), device);
  SearchBatch out{model, model.start(batch.src, batch.src_mask), device, ids, {}, {}, {}, {}};
  out.state.record_attention = options.record_attention;
  out.state.alignment = options.alignment;
  const int64_t longest_output = model.max_target_len();
  for (size_t b = 0; b < ids.size(); ++b) {
    const int64_t src_len = static_cast<int64_t>(std::min<size_t>(rows[b]->size(), options.max_source_len - 1));
    const text::TokenIds* prefix = prefixes ? &(*prefixes)[ids[b]] : &kNoPrefix;
    out.source_len.push_back(src_len + 1);
    out.limit.push_back(output_length_limit(src_len, static_cast<int64_t>(prefix->size()), options, longest_output));
    out.prefix.push_back(prefix);
    const text::LineConstraints* c = constraints ? &(*constraints)[ids[b]] : &kNoConstraints;
    out.constraints.push_back(c);
    out.any_constraints |= !c->empty();
    out.any_positive_constraints |= !c->include.empty();
  }
  return out;
}

// Evaluation mode for the search, the previous mode restored after it. A model already in
// evaluation mode (load_model leaves it so) is only read: serve's workers search one shared
// model at the same time, and Module::eval() writes every submodule's training flag. Only a
// model in training mode, which its one owner searches (the trainer's validation, tests), is
// switched and switched back.
class EvalModeGuard {
 public:
  explicit EvalModeGuard(DecodingModel& model) {
    for (auto* m : model.models())
      if (m->is_training()) {
        m->eval();
        switched_.push_back(m);
      }
  }
  ~EvalModeGuard() {
    for (auto* m : switched_) m->train();
  }

 private:
  std::vector<models::Seq2SeqModelImpl*> switched_;
};

}  // namespace

std::vector<SearchResult> search(DecodingModel& model, const std::vector<text::TokenIds>& sources, const DecodeOptions& options,
                                 const SearchStrategy& strategy, const std::vector<text::TokenIds>* prefixes,
                                 const std::vector<text::LineConstraints>* constraints) {
  strategy.validate();
  TORCH_CHECK(!prefixes || prefixes->size() == sources.size(), "search: one prefix per source");
  TORCH_CHECK(!constraints || constraints->size() == sources.size(), "search: one constraint set per source");
  torch::InferenceMode inference;
  EvalModeGuard eval(model);
  std::vector<SearchResult> out(sources.size());
  for (const auto& ids : length_sorted_batches(sources, options)) {
    SearchBatch batch = start_batch(model, sources, ids, options, prefixes, constraints);
    auto results = strategy.search(batch, options);
    for (size_t b = 0; b < ids.size(); ++b) out[ids[b]] = std::move(results[b]);
    if (options.on_batch_done) options.on_batch_done(ids.size());
  }
  return out;
}

std::vector<SearchResult> search(models::Seq2SeqModelImpl& model, const std::vector<text::TokenIds>& sources,
                                 const DecodeOptions& options, const SearchStrategy& strategy,
                                 const std::vector<text::TokenIds>* prefixes,
                                 const std::vector<text::LineConstraints>* constraints) {
  SingleModel single(model);
  return search(single, sources, options, strategy, prefixes, constraints);
}

}  // namespace nmt::decode
