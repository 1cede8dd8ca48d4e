#pragma once
// Where `nmt train` takes its training pairs from, behind one interface, so the trainer reads a
// corpus held in memory (train/corpus_source.h) and a prepared dataset on disk
// (data/dataset_source.h) alike, with no branch on which one it has.
//
// An epoch is cut into parts, each planned as a corpus of its own: a prepared dataset's pools
// (batching.h's EpochPermutation), or the whole epoch as one part for a corpus in memory. A part's
// plan is a pure function of (seed, epoch, part), so every rank plans the same batches and a run
// resumed at (part, batch) recomputes the part it stopped in. Torch-free: the trainer pads the
// pairs read() gives into tensors.
#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "nmt/data/batching.h"
#include "nmt/data/corpus.h"
#include "nmt/text/subword.h"
#include "nmt/text/token_ids.h"

namespace nmt::data {

// How a source plans its batches: fairseq's --max-tokens budget, the run's seed, and the positions
// the model takes (pairs that do not fit by pair_fits_with_eos are left out).
struct PlanOptions {
  size_t max_tokens = 4096;
  uint64_t seed = 1;
  int64_t max_len = 1023;
};

// A batch's pairs as make_batch takes them: a pointer to each example's source and target ids,
// into the source's memory or into read_src / read_tgt (the pairs read from disk for this batch).
struct BatchPairs {
  std::vector<const text::TokenIds*> src, tgt;
  std::vector<text::TokenIds> read_src, read_tgt;
};

class BatchSource {
 public:
  using Log = std::function<void(const std::string&)>;  // one line for the training log
  virtual ~BatchSource() = default;

  // Before the subword models exist (rank 0 of a fresh run makes them): a prepared dataset's ids
  // belong to its own model, whose bytes this gives; nullopt: the run trains one on
  // subword_training_text().
  virtual std::optional<std::string> own_subword_model() const = 0;
  virtual const ParallelCorpus& subword_training_text() const = 0;
  // The run's subword models (the target's read from target_path), before the first plan: a
  // corpus is encoded with them; a dataset checks it was made with this target model
  // (RuntimeError naming both).
  virtual void use_subwords(const text::SubwordPair& models, const std::string& target_path) = 0;
  // What the log says of the training pairs: "29000 training pairs" and where they come from.
  virtual std::string describe() const = 0;

  // An epoch: start_epoch, then the plans of parts [first part, parts_per_epoch()) in order, then
  // end_epoch once every part was trained (a stop in between skips it).
  virtual void start_epoch(int64_t epoch) = 0;
  virtual size_t parts_per_epoch() const = 0;
  virtual std::vector<Batch> plan(int64_t epoch, size_t part) = 0;
  virtual void end_epoch(int64_t epoch) = 0;

  // One example of a plan: its positions (EOS / BOS included) and the ids of a batch of them.
  virtual ExampleLength length(size_t example) const = 0;
  virtual void read(const Batch& examples, BatchPairs& pairs) const = 0;
};

}  // namespace nmt::data
