#include "nmt/data/dataset_source.h"

#include <filesystem>
#include <utility>

#include <fmt/format.h>

#include "nmt/util/error.h"
#include "nmt/util/hash.h"
#include "nmt/util/io.h"
#include "nmt/util/rng.h"

namespace nmt::data {

DatasetBatchSource::DatasetBatchSource(std::unique_ptr<MappedDataset> dataset, uint64_t pool_size, PlanOptions plan,
                                       Log log)
    : dataset_(std::move(dataset)), pool_size_(pool_size), plan_(plan), log_(std::move(log)) {}

// The model the dataset's ids belong to, which a fresh run takes as its own.
std::optional<std::string> DatasetBatchSource::own_subword_model() const {
  return read_small_file((std::filesystem::path(dataset_->dir()) / kDatasetSubwordFile).string(), kMaxSubwordBytes);
}

const ParallelCorpus& DatasetBatchSource::subword_training_text() const {
  static const ParallelCorpus none;  // the dataset holds ids, not text
  return none;
}

void DatasetBatchSource::use_subwords(const text::SubwordPair& models, const std::string& target_path) {
  const std::string bytes = models.target.serialized();
  const std::string sum = hex64(fnv1a(bytes.data(), bytes.size()));
  const std::string& made_with = dataset_->manifest().subword_checksum;
  if (sum != made_with)
    throw RuntimeError(fmt::format(
        "{}: made with another subword model than {} (checksum {} against {}): prepare it with --subword-model {}",
        dataset_->dir(), target_path, made_with, sum, target_path));
}

std::string DatasetBatchSource::describe() const {
  return fmt::format("{} training pairs in {} shard(s) of {} (read from disk, shuffled in pools of {})",
                     dataset_->size(), dataset_->manifest().shards.size(), dataset_->dir(), pool_size_);
}

size_t DatasetBatchSource::parts_per_epoch() const {
  return static_cast<size_t>(pool_count(dataset_->size(), pool_size_));
}

// Pool `pool` of the epoch's order, planned as a corpus of its own, without the pairs the model
// cannot take (a corpus in memory leaves them out once, when it is encoded).
std::vector<Batch> DatasetBatchSource::plan(int64_t epoch, size_t pool) {
  const auto e = static_cast<uint64_t>(epoch);
  const EpochPermutation order(dataset_->size(), plan_.seed, e);
  const std::vector<uint64_t> members = pool_members(order, pool, pool_size_);
  const std::vector<PairLength> pair_lengths = dataset_->lengths(members);
  std::vector<uint64_t> kept;
  std::vector<ExampleLength> lengths;
  kept.reserve(members.size());
  lengths.reserve(members.size());
  for (size_t k = 0; k < members.size(); ++k) {
    const PairLength& len = pair_lengths[k];
    if (!pair_fits_with_eos(len.src, len.tgt, plan_.max_len)) {
      ++dropped_in_epoch_;
      continue;
    }
    kept.push_back(members[k]);
    lengths.push_back(lengths_with_eos(len.src, len.tgt));
  }
  BatchOptions bo;
  bo.max_tokens = plan_.max_tokens;
  bo.seed = mix_seed(plan_.seed, pool);
  bo.shuffle = true;
  std::vector<Batch> batches = plan_batches(lengths, bo, e);
  for (Batch& batch : batches)
    for (size_t& k : batch) k = kept[k];
  return batches;
}

void DatasetBatchSource::end_epoch(int64_t epoch) {
  if (dropped_in_epoch_)
    log_(fmt::format("warning: epoch {}: {} training pairs longer than {} subwords were left out", epoch,
                     dropped_in_epoch_, plan_.max_len));
  dropped_in_epoch_ = 0;
}

ExampleLength DatasetBatchSource::length(size_t example) const {
  const PairLength len = dataset_->length(example);
  return lengths_with_eos(len.src, len.tgt);
}

void DatasetBatchSource::read(const Batch& examples, BatchPairs& pairs) const {
  pairs.read_src.resize(examples.size());
  pairs.read_tgt.resize(examples.size());
  pairs.src.clear();
  pairs.tgt.clear();
  for (size_t k = 0; k < examples.size(); ++k) {
    dataset_->pair(examples[k], pairs.read_src[k], pairs.read_tgt[k]);
    pairs.src.push_back(&pairs.read_src[k]);
    pairs.tgt.push_back(&pairs.read_tgt[k]);
  }
}

}  // namespace nmt::data
