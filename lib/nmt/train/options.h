#pragma once
// TrainOptions: everything `nmt train` can be told, and the one table that declares each
// option (see util/option_spec.h and CONTRIBUTING.md, "a training option"). Torch-free, so
// the config fuzzer reaches it.
#include <array>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "nmt/models/config_options.h"
#include "nmt/train/dist_options.h"
#include "nmt/util/option_spec.h"

namespace nmt::train {

// After warm-up: inverse square root of the step, constant, or a decay to --min-lr that ends
// with the run's budget (--max-steps or --max-time, whichever comes first): linear or cosine.
enum class LrSchedule { kInverseSqrt, kConstant, kLinear, kCosine };
inline constexpr std::array<EnumName<LrSchedule>, 4> enum_names(LrSchedule) {
  return {{{LrSchedule::kInverseSqrt, "inverse-sqrt"},
           {LrSchedule::kConstant, "constant"},
           {LrSchedule::kLinear, "linear"},
           {LrSchedule::kCosine, "cosine"}}};
}
// Whether the schedule needs to know how far the run is through its budget.
inline bool decays_with_budget(LrSchedule s) { return s == LrSchedule::kLinear || s == LrSchedule::kCosine; }

enum class BestMetric { kBleu, kLoss };  // which validation figure picks the best weights
inline constexpr std::array<EnumName<BestMetric>, 2> enum_names(BestMetric) {
  return {{{BestMetric::kBleu, "bleu"}, {BestMetric::kLoss, "loss"}}};
}

enum class SubwordType { kUnigram, kBpe };  // SentencePiece's model types nmt supports
inline constexpr std::array<EnumName<SubwordType>, 2> enum_names(SubwordType) {
  return {{{SubwordType::kUnigram, "unigram"}, {SubwordType::kBpe, "bpe"}}};
}

// Field defaults are the options' defaults; what each one means is in train_option_specs().
struct TrainOptions {
  // Data: parallel files (PREFIX.src / PREFIX.tgt) or a tab-separated pair file.
  std::string train_prefix, valid_prefix, train_tsv, valid_tsv;
  // Or a binary dataset made by `nmt prepare` (corpora larger than memory), read in shuffled
  // pools of data_pool pairs.
  std::string data_dir;
  int64_t data_pool = 1'000'000;
  std::string src_lang = "en", tgt_lang = "fr";
  size_t valid_size = 1000;
  bool strict = false;
  size_t max_chars = 1000;

  // Subwords: one joint SentencePiece model on source + target, or one per side.
  int vocab_size = 8000;
  bool separate_vocab = false;
  int src_vocab_size = 0;  // with separate_vocab; 0: vocab_size
  SubwordType subword_type = SubwordType::kUnigram;
  // Subword regularisation: each epoch re-segments the training pairs by sampling (off at 0).
  double subword_alpha = 0;
  int subword_nbest = -1;  // -1: the whole segmentation lattice

  models::ModelConfig model;
  std::string init_from;  // a model directory whose weights and subword model this run starts from

  // Optimisation.
  double lr = 7e-4;
  int64_t warmup = 4000;
  double adam_beta1 = 0.9, adam_beta2 = 0.98, adam_eps = 1e-9;
  double weight_decay = 0.0;
  double label_smoothing = 0.1;
  double clip_norm = 0.0;
  int64_t max_tokens = 4096;
  int64_t accum_steps = 1;
  LrSchedule lr_schedule = LrSchedule::kInverseSqrt;
  double min_lr = 0.0;  // where linear and cosine end

  // Stopping (0 = no limit).
  int64_t max_epochs = 0;
  int64_t max_steps = 0;
  double max_time_s = 0;
  int64_t patience = 0;

  // Validation / logging.
  int64_t valid_every = 0;
  int64_t valid_after = 0;  // no validation before this update (the final weights are always validated)
  int64_t log_every = 100;
  bool valid_bleu = true;
  BestMetric best_metric = BestMetric::kBleu;
  int64_t valid_max_len_b = 10;
  int64_t valid_beam = 1;

  // Checkpoints (OUT/checkpoints/step-N, see checkpoint.h).
  int64_t save_every = 0;
  int64_t keep_last = 3;
  int64_t max_bad_steps = 5;

  uint64_t seed = 1;
  int threads = 0;
  std::string device;
  bool bf16 = false;
  DistOptions dist;  // not saved: a property of the launch, not the run
  std::string out_dir;
  bool resume = false;
  bool quiet = false;

  // config.json's "train" section: the saved options (model options live in "model").
  nlohmann::json to_json() const;
  // Missing keys keep their defaults; a wrong type → RuntimeError naming the key.
  static TrainOptions from_json(const nlohmann::json& j);
};

// Every option of `nmt train`, model options included, each declared once.
const std::vector<OptionSpec<TrainOptions>>& train_option_specs();

// The options that define a run (a "train" section without the stopping limits, logging and
// other options whose change continues the same run): re-running the same command on the same
// --out resumes only when these are unchanged.
nlohmann::json run_identity(const nlohmann::json& train_section);

// Every range and choice, then the model's own consistency checks; a UsageError naming the
// option by its key ('lr' is 0, ...: OptionError), or as `name` calls it (the command line
// passes flag_of). Before any work: SentencePiece training can take minutes.
void validate_options(const TrainOptions& options,
                      const std::function<std::string(const std::string&)>& name = nullptr);

// "--lr" for "lr": what the command line calls an option (the key itself if it has no flag).
std::string flag_of(const std::string& key);

}  // namespace nmt::train
