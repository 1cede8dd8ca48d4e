#pragma once
// `nmt train --train / --train-tsv`'s training pairs: the corpus held in memory, encoded into
// subword ids once (pairs the model cannot take left out then), re-segmented every epoch with
// --subword-alpha, and planned as one part per epoch.
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "nmt/data/batch_source.h"
#include "nmt/data/corpus.h"
#include "nmt/train/encoded_set.h"

namespace nmt::train {

// Subword regularisation (--subword-alpha, --subword-nbest): alpha 0 is off.
struct SubwordSampling {
  double alpha = 0;
  int nbest = -1;
};

class CorpusBatchSource : public data::BatchSource {
 public:
  CorpusBatchSource(data::ParallelCorpus corpus, data::PlanOptions plan, SubwordSampling sampling, Log log);

  std::optional<std::string> own_subword_model() const override { return std::nullopt; }
  const data::ParallelCorpus& subword_training_text() const override { return corpus_; }
  void use_subwords(const text::SubwordPair& models, const std::string& target_path) override;
  std::string describe() const override;

  void start_epoch(int64_t epoch) override;
  size_t parts_per_epoch() const override { return 1; }
  std::vector<data::Batch> plan(int64_t epoch, size_t part) override;
  void end_epoch(int64_t) override {}

  data::ExampleLength length(size_t example) const override { return train_.lengths[example]; }
  void read(const data::Batch& examples, data::BatchPairs& pairs) const override;

 private:
  data::ParallelCorpus corpus_;  // until use_subwords encodes it
  EncodedSet train_;
  text::SubwordPair models_;
  data::PlanOptions plan_;
  SubwordSampling sampling_;
  Log log_;
  bool logged_sampling_time_ = false;  // the re-segmentation time is logged once
};

}  // namespace nmt::train
