#pragma once
// The training observers (training_state.h) that `nmt train` registers on rank 0: the logger,
// the validator and the checkpointer. Each is made from what it acts on (the options, the
// training state, the model, files), not from the trainer, so each can be driven by firing the
// state's events directly.
#include <cstdint>
#include <filesystem>
#include <functional>
#include <string>

#include <nlohmann/json.hpp>
#include <torch/torch.h>

#include "nmt/models/model.h"
#include "nmt/text/subword.h"
#include "nmt/train/checkpoint.h"
#include "nmt/train/encoded_set.h"
#include "nmt/train/options.h"
#include "nmt/train/training_state.h"
#include "nmt/util/io.h"
#include "nmt/viz/progress.h"

namespace nmt::train {

// --valid-after N: no scheduled validation before update N (the final weights are validated at
// the stop all the same).
bool validations_open(const TrainOptions& o, int64_t step);

// Whether the update that just ended is followed by a validation (--valid-every N > 0): every N
// updates once validations are open. Checkpointer asks too, to save once.
bool validates_after_update(const TrainOptions& o, int64_t step);

// OUT/metrics.jsonl, appended to line by line; every write checked (a full disk stops the run
// with an error naming the file instead of losing its records silently), and a line cut short
// taken back (AppendFile), so a resumed run appends after whole records.
class MetricsLog {
 public:
  explicit MetricsLog(const std::filesystem::path& path) : file_(path.string()) {}
  void write(const nlohmann::json& j) { file_.append_line(j.dump()); }

 private:
  AppendFile file_;
};

// ---- observers (rank 0 only: the other ranks meanwhile wait at the next update's first
// collective)

// Progress on stderr and OUT/metrics.jsonl. On a terminal: a live progress line per epoch
// plus permanent lines for events and validations. Redirected: plain timestamped lines at
// --log-every.
class Logger : public TrainingObserver {
 public:
  Logger(const TrainOptions& o, const TrainingState& state, viz::ProgressLine& progress,
         const std::filesystem::path& metrics_path, std::function<void(const std::string&)> log)
      : o_(o), state_(state), progress_(progress), metrics_(metrics_path), log_(std::move(log)) {}

  void update_done(const UpdateInfo& u) override;
  void validation_done(const ValidationResult& v) override;

 private:
  const TrainOptions& o_;
  const TrainingState& state_;
  viz::ProgressLine& progress_;
  MetricsLog metrics_;
  std::function<void(const std::string&)> log_;
  torch::Tensor loss_sum_ = torch::zeros({}, torch::kDouble), nll_sum_ = torch::zeros({}, torch::kDouble);
  int64_t window_tokens_ = 0, window_src_tokens_ = 0;
  double window_all_reduce_s_ = 0;
  int64_t window_updates_ = 0;
  Clock::time_point window_start_ = Clock::now();
};

// Validates every --valid-every updates (or at each epoch's end) from --valid-after on, keeps the
// best weights in OUT/model.pt and counts validations without improvement (--patience).
class Validator : public TrainingObserver {
 public:
  Validator(const TrainOptions& o, TrainingState& state, models::Seq2SeqModelImpl& model,
            const text::SubwordModel& target_subwords, const EncodedSet& valid, const torch::Device& device,
            const std::filesystem::path& out)
      : o_(o), state_(state), model_(model), target_subwords_(target_subwords), valid_(valid), device_(device), out_(out) {}

  void update_done(const UpdateInfo&) override;
  void epoch_done() override;
  // The final weights are always validated (and saved).
  void stopped(StopReason reason) override;

  void validate();

 private:
  // Loss and perplexity by teacher forcing, then BLEU of greedy (or beam) translations.
  ValidationResult measure();

  const TrainOptions& o_;
  TrainingState& state_;
  models::Seq2SeqModelImpl& model_;
  const text::SubwordModel& target_subwords_;
  const EncodedSet& valid_;
  torch::Device device_;
  std::filesystem::path out_;
};

// Saves a checkpoint after each validation, every --save-every updates, and at the stop.
class Checkpointer : public TrainingObserver {
 public:
  Checkpointer(const TrainOptions& o, TrainingState& state, CheckpointManager& checkpoints,
               models::Seq2SeqModelImpl& model, torch::optim::Adam& optimizer, bool resumed)
      : o_(o), state_(state), checkpoints_(checkpoints), model_(model), optimizer_(optimizer),
        saved_step_(resumed ? state.saved.step : -1) {}

  void update_done(const UpdateInfo&) override;
  void validation_done(const ValidationResult&) override;
  // Interrupted: the state exactly where it is, so --resume continues bit for bit. Diverged:
  // the last good checkpoint stays the newest.
  void stopped(StopReason reason) override;

 private:
  void save();

  const TrainOptions& o_;
  TrainingState& state_;
  CheckpointManager& checkpoints_;
  models::Seq2SeqModelImpl& model_;
  torch::optim::Adam& optimizer_;
  int64_t saved_step_;
};

}  // namespace nmt::train
