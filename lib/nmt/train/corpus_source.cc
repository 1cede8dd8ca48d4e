#include "nmt/train/corpus_source.h"

#include <chrono>
#include <utility>

#include <fmt/format.h>

namespace nmt::train {

CorpusBatchSource::CorpusBatchSource(data::ParallelCorpus corpus, data::PlanOptions plan, SubwordSampling sampling,
                                     Log log)
    : corpus_(std::move(corpus)), plan_(plan), sampling_(sampling), log_(std::move(log)) {}

void CorpusBatchSource::use_subwords(const text::SubwordPair& models, const std::string&) {
  models_ = models;
  size_t dropped = 0;
  train_ = encode_set(corpus_, models_, plan_.max_len, true, &dropped);
  corpus_ = data::ParallelCorpus();  // the ids (and with sampling, train_'s copy of the text) replace it
  if (dropped)
    log_(fmt::format("warning: {} training pairs longer than {} subwords were left out", dropped, plan_.max_len));
  // Only subword sampling reads the training text again (Multi30k's: 3.9 MB in 58k strings).
  if (sampling_.alpha == 0) {
    train_.src_text = std::vector<std::string>();
    train_.tgt_text = std::vector<std::string>();
  }
}

std::string CorpusBatchSource::describe() const { return fmt::format("{} training pairs", train_.src.size()); }

// Before the epoch's plan, which is made from the sampled lengths; a resumed run redoes the
// interrupted epoch's sampling, so its plan and batches are the same.
void CorpusBatchSource::start_epoch(int64_t epoch) {
  if (!(sampling_.alpha > 0)) return;
  const auto start = std::chrono::steady_clock::now();
  sample_segmentations(train_, models_, sampling_.nbest, sampling_.alpha, plan_.seed, epoch, plan_.max_len);
  if (logged_sampling_time_) return;
  logged_sampling_time_ = true;
  log_(fmt::format(
      "subword sampling (--subword-alpha {}, --subword-nbest {}): {} training pairs re-segmented in {:.2f} s "
      "per epoch",
      sampling_.alpha, sampling_.nbest, train_.src.size(),
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count()));
}

std::vector<data::Batch> CorpusBatchSource::plan(int64_t epoch, size_t) {
  data::BatchOptions bo;
  bo.max_tokens = plan_.max_tokens;
  bo.seed = plan_.seed;
  bo.shuffle = true;
  return data::plan_batches(train_.lengths, bo, static_cast<uint64_t>(epoch));
}

// Pointers into the encoded corpus: nothing is copied.
void CorpusBatchSource::read(const data::Batch& examples, data::BatchPairs& pairs) const {
  pairs.src.clear();
  pairs.tgt.clear();
  pairs.src.reserve(examples.size());
  pairs.tgt.reserve(examples.size());
  for (size_t i : examples) {
    pairs.src.push_back(&train_.src[i]);
    pairs.tgt.push_back(&train_.tgt[i]);
  }
}

}  // namespace nmt::train
