#pragma once
// `nmt train --data DIR`'s training pairs: a prepared dataset (dataset.h) read from disk, each
// epoch in pools of --data-pool pairs of a seeded order of the whole dataset (batching.h's
// EpochPermutation), each pool planned as a corpus of its own. Pairs the model cannot take are
// left out as each pool is planned, and counted in the epoch's warning.
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "nmt/data/batch_source.h"
#include "nmt/data/dataset.h"

namespace nmt::data {

class DatasetBatchSource : public BatchSource {
 public:
  // `dataset` opened by MappedDataset::open; `pool_size` pairs per part of an epoch (> 0).
  DatasetBatchSource(std::unique_ptr<MappedDataset> dataset, uint64_t pool_size, PlanOptions plan, Log log);

  std::optional<std::string> own_subword_model() const override;
  const ParallelCorpus& subword_training_text() const override;
  void use_subwords(const text::SubwordPair& models, const std::string& target_path) override;
  std::string describe() const override;

  void start_epoch(int64_t) override {}
  size_t parts_per_epoch() const override;
  std::vector<Batch> plan(int64_t epoch, size_t pool) override;
  void end_epoch(int64_t epoch) override;

  ExampleLength length(size_t example) const override;
  void read(const Batch& examples, BatchPairs& pairs) const override;

 private:
  std::unique_ptr<MappedDataset> dataset_;
  uint64_t pool_size_;
  PlanOptions plan_;
  Log log_;
  size_t dropped_in_epoch_ = 0;  // pairs longer than the model takes, left out of this epoch's pools
};

}  // namespace nmt::data
