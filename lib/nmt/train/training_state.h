#pragma once
// The training state and its events (Marian's TrainingState / TrainingObserver): the trainer
// announces what happened (an update, the end of an epoch, a validation, the stop) and the
// observers it registered act on it: the validator validates when due and keeps the best
// weights, the checkpointer saves, the logger prints and appends to metrics.jsonl. A new
// reaction (another metric, another file) is a new observer, not another branch in the loop.
#include <array>
#include <chrono>
#include <cstdint>
#include <vector>

#include <nlohmann/json.hpp>

#include "nmt/train/checkpoint.h"
#include "nmt/train/loss.h"
#include "nmt/util/option_spec.h"

namespace nmt::train {

// Why training stopped. The first five are decided before each update on every process and
// agreed on by taking the largest code (a signal on any process stops all of them), so their
// order matters.
enum class StopReason : int64_t {
  kNone = 0,
  kMaxSteps = 1,
  kMaxTime = 2,
  kPatience = 3,
  kSignal = 4,
  kMaxEpochs = 5,
  kNonFinite = 6,  // too many consecutive updates with a non-finite loss or gradient
};
inline constexpr std::array<EnumName<StopReason>, 7> enum_names(StopReason) {
  return {{{StopReason::kNone, ""},
           {StopReason::kMaxSteps, "max-steps"},
           {StopReason::kMaxTime, "max-time"},
           {StopReason::kPatience, "patience"},
           {StopReason::kSignal, "signal"},
           {StopReason::kMaxEpochs, "max-epochs"},
           {StopReason::kNonFinite, "non-finite"}}};
}

using Clock = std::chrono::steady_clock;

// One applied update.
struct UpdateInfo {
  LossSums sums;             // over the update's target tokens (all processes)
  int64_t tgt_tokens = 0, src_tokens = 0;
  double lr = 0;             // the learning rate it ran at
  size_t batch_end = 0;      // batches of the epoch's plan done
  size_t plan_size = 0;      // batches in the epoch's plan
  size_t epoch_first_batch = 0;  // where this process started the epoch (resumed runs: mid-epoch)
  Clock::time_point epoch_start;
  // Several processes: seconds this update spent summing gradients across them (waiting for the
  // slowest rank included).
  double all_reduce_seconds = 0;
};

struct ValidationResult {
  double loss = 0;  // nll per target token
  double ppl = 0;
  double bleu = 0;
  bool improved = false;  // a new best: model.pt now holds these weights
  nlohmann::json entry;   // the metrics.jsonl record (also in the state's history)
};

class TrainingObserver {
 public:
  virtual ~TrainingObserver() = default;
  virtual void update_done(const UpdateInfo&) {}
  virtual void epoch_done() {}
  virtual void validation_done(const ValidationResult&) {}
  virtual void stopped(StopReason) {}
};

// The state that checkpoints save (TrainState), the training clock, and the observers.
class TrainingState {
 public:
  TrainState saved;

  // Training seconds, summed over restarts (from the clock's start in this process).
  double elapsed() const {
    return elapsed_before_ + std::chrono::duration<double>(Clock::now() - start_).count();
  }
  void start_clock() {
    elapsed_before_ = saved.elapsed;
    start_ = Clock::now();
  }

  // Observers are told in the order they subscribed.
  void subscribe(TrainingObserver* observer) { observers_.push_back(observer); }
  void update_done(const UpdateInfo& u) {
    for (auto* o : observers_) o->update_done(u);
  }
  void epoch_done() {
    for (auto* o : observers_) o->epoch_done();
  }
  void validation_done(const ValidationResult& v) {
    for (auto* o : observers_) o->validation_done(v);
  }
  void stopped(StopReason reason) {
    for (auto* o : observers_) o->stopped(reason);
  }

 private:
  double elapsed_before_ = 0;
  Clock::time_point start_ = Clock::now();
  std::vector<TrainingObserver*> observers_;
};

}  // namespace nmt::train
