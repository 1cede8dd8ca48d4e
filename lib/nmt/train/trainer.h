#pragma once
// `nmt train`: data → subwords → model → optimisation loop with validation, checkpoints and
// early stopping. The trainer only sees the Seq2SeqModel interface.
//
// Trainer runs the named stages in order (prepare_output_dir, prepare_data, build, sync_ranks,
// run_epoch until a stop, finish). What happens around the updates (validation, checkpoints,
// logging) hangs off a TrainingState's events, as Marian's observers do (training_state.h,
// observers.h). The run directory (run_directory.h) and the stop signals (stop_signals.h) have
// their own files.
#include <chrono>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <torch/torch.h>

#include "nmt/data/batch_source.h"
#include "nmt/data/batching.h"
#include "nmt/data/corpus.h"
#include "nmt/data/dataset.h"
#include "nmt/models/model.h"
#include "nmt/tensor/batch.h"
#include "nmt/text/subword.h"
#include "nmt/train/checkpoint.h"
#include "nmt/train/distributed.h"
#include "nmt/train/encoded_set.h"  // the data preparation `nmt bench` shares
#include "nmt/train/options.h"
#include "nmt/train/training_state.h"
#include "nmt/util/lock.h"
#include "nmt/viz/progress.h"

namespace nmt::train {

struct TrainSummary {
  int64_t steps = 0;
  int64_t epochs = 0;
  double best_metric = 0;
  double best_valid_bleu = 0;
  double best_valid_loss = 0;
  double seconds = 0;
  int64_t skipped_steps = 0;
  StopReason stop_reason = StopReason::kNone;
  int signal = 0;  // the signal that stopped training (SIGINT/SIGTERM), else 0
};

// Runs training; throws UsageError / RuntimeError on bad options, data or state.
TrainSummary run_training(const TrainOptions& options);

class Validator;

class Trainer {
 public:
  explicit Trainer(const TrainOptions& options);
  ~Trainer();
  TrainSummary run();
  // After a failure: the --out folder this run created, removed when no checkpoint was saved in
  // it (what is left would be a lock and a subword model, not a run to resume).
  void remove_unused_output_dir() noexcept;

 private:
  void prepare_output_dir();  // rank 0: create, lock, decide fresh start or resume
  void prepare_data();        // corpora, subword models (rank 0 trains, all load), encoding
  // Rank 0 of a fresh run: --init-from's subword models, the training data's own, or new ones.
  void make_subword_models();
  void build();               // config.json, model, optimizer, resumed state
  void sync_ranks();          // rank 0's weights, state and optimizer to every rank
  StopReason run_epoch();     // kNone when the epoch ended without a stop
  // Where a plan's batches sit in the epoch, for the progress line: part `index` of the
  // source's `count` (its batches counted as if every part had as many).
  struct PlanPart {
    size_t index = 0, count = 1;
  };
  StopReason run_updates(const std::vector<data::Batch>& plan, PlanPart part);
  Batch micro_batch(const data::Batch& examples) const;
  StopReason stop_before_update();
  double budget_progress_before_update();  // --lr-schedule linear|cosine
  TrainSummary finish(StopReason reason);
  void log(const std::string& line);

  TrainOptions o_;
  std::filesystem::path out_;
  torch::Device device_;
  CheckpointManager checkpoints_;
  std::unique_ptr<Distributed> dist_;
  bool is_main_ = true;
  bool resuming_ = false;
  bool created_out_ = false;  // prepare_output_dir made --out
  std::optional<DirectoryLock> owner_;  // held until training ends: one run per directory at a time

  text::SubwordPair sp_;
  std::unique_ptr<data::BatchSource> source_;  // the training pairs: a corpus in memory or --data's dataset
  EncodedSet valid_;
  UpdateInfo epoch_info_;                // what the observers see of the epoch's progress
  bool first_plan_of_run_epoch_ = true;  // the epoch's first plan in this process (resumed: mid-epoch)

  models::Seq2SeqModel model_{nullptr};
  std::vector<torch::Tensor> params_;
  std::unique_ptr<torch::optim::Adam> optimizer_;
  std::unique_ptr<TrainingState> state_;
  int64_t bad_in_a_row_ = 0;           // consecutive updates skipped for a non-finite loss or gradient
  bool logged_first_update_ = false;   // the start-up time is logged once

  std::unique_ptr<viz::ProgressLine> progress_;
  std::vector<std::unique_ptr<TrainingObserver>> observers_;
  Validator* validator_ = nullptr;  // rank 0: logger, validator, checkpointer
};

}  // namespace nmt::train
