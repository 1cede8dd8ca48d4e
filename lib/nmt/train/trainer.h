#pragma once
// `nmt train`: data → subwords → model → optimisation loop with validation, checkpoints and
// early stopping. The trainer only sees the Seq2SeqModel interface.
#include <cstdint>
#include <functional>
#include <string>

#include <nlohmann/json.hpp>

#include "nmt/models/config.h"
#include "nmt/train/dist_options.h"

namespace nmt::train {

struct TrainOptions {
  // Data: parallel files (PREFIX.src / PREFIX.tgt) or a tab-separated pair file.
  std::string train_prefix, valid_prefix, train_tsv, valid_tsv;
  std::string src_lang = "en", tgt_lang = "fr";
  size_t valid_size = 1000;  // held out from --train-tsv when no validation set is given
  bool strict = false;       // bad corpus lines are errors instead of skipped
  size_t max_chars = 1000;   // corpus lines longer than this are skipped

  // Subwords (joint SentencePiece model on source + target).
  int vocab_size = 8000;
  std::string subword_type = "unigram";

  models::ModelConfig model;

  // Optimisation.
  double lr = 7e-4;  // peak learning rate, reached after `warmup` steps
  int64_t warmup = 4000;
  double adam_beta1 = 0.9, adam_beta2 = 0.98, adam_eps = 1e-9;
  double weight_decay = 0.0;
  double label_smoothing = 0.1;
  double clip_norm = 0.0;  // 0 = off
  int64_t max_tokens = 4096;
  // Batches per update on each process (fairseq's --update-freq): an update sees
  // accum_steps × world size batches of the plan.
  int64_t accum_steps = 1;
  std::string lr_schedule = "inverse-sqrt";  // or "constant" (after warm-up)

  // Stopping (0 = no limit).
  int64_t max_epochs = 0;
  int64_t max_steps = 0;
  double max_time_s = 0;
  int64_t patience = 0;  // validations without improvement

  // Validation / logging.
  int64_t valid_every = 0;  // steps between validations; 0 = once per epoch
  int64_t log_every = 100;
  bool valid_bleu = true;
  std::string best_metric = "bleu";  // "bleu" or "loss"
  int64_t valid_max_len_b = 10;
  int64_t valid_beam = 1;  // beam size for validation BLEU (1 = greedy)

  // Checkpoints (OUT/checkpoints/step-N, see checkpoint.h).
  int64_t save_every = 0;    // also save every N updates (0 = at validations only)
  int64_t keep_last = 3;     // checkpoints kept besides the best weights (model.pt)
  int64_t max_bad_steps = 5; // consecutive non-finite updates (skipped) before training stops

  uint64_t seed = 1;
  int threads = 0;  // 0 = LibTorch's default
  std::string device;  // "cpu", "cuda", "cuda:N"; empty = CUDA when available, else CPU
  bool bf16 = false;   // bf16 autocast of the forward pass (CUDA only)
  DistOptions dist;    // data-parallel job (not saved: a property of the launch, not the run)
  std::string out_dir;
  bool resume = false;
  bool quiet = false;

  nlohmann::json to_json() const;
  static TrainOptions from_json(const nlohmann::json& j);
};

struct TrainSummary {
  int64_t steps = 0;
  int64_t epochs = 0;
  double best_metric = 0;
  double best_valid_bleu = 0;
  double best_valid_loss = 0;
  double seconds = 0;
  int64_t skipped_steps = 0;
  std::string stop_reason;  // max-steps, max-epochs, max-time, patience, signal
  int signal = 0;           // the signal that stopped training (SIGINT/SIGTERM), else 0
};

// Runs training; throws UsageError / RuntimeError on bad options, data or state.
TrainSummary run_training(const TrainOptions& options);

// Sets LibTorch's intra-op threads and OpenBLAS's pool consistently (0 = leave as is).
void set_threads(int threads);

}  // namespace nmt::train
