// The table of `nmt train`'s options, and what is generated from it: config.json's "train"
// section, the run identity and validation. The command line binds the same table
// (app/train_options.h). Without LibTorch, so the fuzzer reaches it.
#include "nmt/train/options.h"

#include <algorithm>
#include <limits>

#include "nmt/text/subword.h"
#include "nmt/util/runtime_options.h"

namespace nmt::train {

namespace {
constexpr long double kHuge = std::numeric_limits<double>::max();
constexpr long double kMany = static_cast<long double>(int64_t{1} << 40);

// The table, in the order of --help: data and subwords, then the model to start from, the
// optimisation, stopping, validation and checkpoint options, then the run's own.
std::vector<OptionSpec<TrainOptions>> data_specs() {
  using O = TrainOptions;
  return {
      option("train_prefix", "--train", "Data", "Training files PREFIX (reads PREFIX.SRC and PREFIX.TGT)", &O::train_prefix),
      option("valid_prefix", "--valid", "Data", "Validation files PREFIX", &O::valid_prefix),
      option("train_tsv", "--train-tsv", "Data", "Tab-separated pair file (source<TAB>target[<TAB>...])", &O::train_tsv),
      option("valid_tsv", "--valid-tsv", "Data", "Tab-separated validation pairs", &O::valid_tsv),
      option("data_dir", "--data", "Data",
             "Train on a dataset made by `nmt prepare` (any size; batches read from disk) instead of --train/--train-tsv; "
             "needs --valid or --valid-tsv. The path may differ between hosts and restarts",
             &O::data_dir)
          .not_identity(),
      option("data_pool", "--data-pool", "Data",
             "With --data: an epoch visits the whole dataset in a seeded random order, cut into pools of this many "
             "pairs, each length-sorted into batches (memory grows with the pool, not the dataset)",
             &O::data_pool)
          .range(1, kMany),
      option("valid_size", "--valid-size", "Data", "Pairs held out for validation when no validation set is given",
             &O::valid_size),
      option("src_lang", "--src", "Data", "Source language suffix", &O::src_lang),
      option("tgt_lang", "--tgt", "Data", "Target language suffix", &O::tgt_lang),
      option("strict", "--strict", "Data", "Bad corpus lines are errors instead of skipped (true/false)", &O::strict),
      option("max_chars", "--max-chars", "Data", "Skip corpus lines longer than this many characters", &O::max_chars)
          .range(1, kMany),
      option("vocab_size", "--vocab-size", "Data",
             "SentencePiece vocabulary size: the joint model's, or with --separate-vocab the target side's",
             &O::vocab_size)
          .range(5, models::kMaxVocab),
      option("separate_vocab", "--separate-vocab", "Data",
             "One SentencePiece model per side (OUT/spm.src.model for the source, OUT/spm.model for the target), "
             "the source with its own embedding; default: one joint model, source and target embeddings tied",
             &O::separate_vocab)
          .as_switch(),
      option("src_vocab_size", "--src-vocab-size", "Data",
             "With --separate-vocab: the source model's vocabulary size (0 = --vocab-size)", &O::src_vocab_size)
          .range(0, models::kMaxVocab),
      option("subword_type", "--subword-type", "Data", "SentencePiece model type", &O::subword_type),
      option("subword_alpha", "--subword-alpha", "Data",
             "Subword regularisation: every epoch samples a new segmentation of each training pair; unigram: the "
             "smoothing (inverse temperature, e.g. 0.1-0.5; smaller = more varied), bpe: the BPE-dropout probability "
             "(e.g. 0.1). 0 = off: the one best segmentation",
             &O::subword_alpha)
          .range(0, 100),
      option("subword_nbest", "--subword-nbest", "Data",
             "With --subword-alpha on a unigram model: sample among the N best segmentations (2..512; 1 = the best "
             "one only), or -1 for all of them (the whole lattice). BPE-dropout ignores it",
             &O::subword_nbest)
          .range(-1, text::SubwordModel::kMaxSampleNbest),
      option("init_from", "--init-from", "Model",
             "Start from the weights and spm.model of this model directory (same architecture options; a new "
             "optimizer, schedule and --out)",
             &O::init_from),
  };
}

std::vector<OptionSpec<TrainOptions>> training_specs() {
  using O = TrainOptions;
  return {
      option("lr", "--lr", "Optimisation", "Peak learning rate, reached after --warmup updates", &O::lr).positive(kHuge),
      option("warmup", "--warmup", "Optimisation", "Linear warm-up steps", &O::warmup).range(0, kMany),
      option("lr_schedule", "--lr-schedule", "Optimisation",
             "After warm-up: inverse-sqrt, constant, or linear/cosine decay to --min-lr over the run's budget "
             "(--max-steps or --max-time, whichever ends first)",
             &O::lr_schedule),
      option("min_lr", "--min-lr", "Optimisation", "Learning rate at the end of a linear or cosine schedule", &O::min_lr)
          .range(0, kHuge),
      option("adam_beta1", "--adam-beta1", "Optimisation", "Adam's β1", &O::adam_beta1).range(0, 0.999999),
      option("adam_beta2", "--adam-beta2", "Optimisation", "Adam's β2", &O::adam_beta2).range(0, 0.999999),
      option("adam_eps", "--adam-eps", "Optimisation", "Adam's ε", &O::adam_eps).positive(1),
      option("label_smoothing", "--label-smoothing", "Optimisation", "Label smoothing ε", &O::label_smoothing)
          .range(0, 0.999),
      option("clip_norm", "--clip-norm", "Optimisation", "Gradient-norm clipping (0 = off)", &O::clip_norm).range(0, kHuge),
      option("weight_decay", "--weight-decay", "Optimisation", "Adam weight decay", &O::weight_decay).range(0, kHuge),
      option("max_tokens", "--max-tokens", "Optimisation", "Padded tokens per side per batch", &O::max_tokens)
          .range(1, 100'000'000),
      option("accum_steps", "--accum-steps", "Optimisation",
             "Batches per update on each process (gradient accumulation, fairseq's --update-freq): an update sees "
             "accum-steps × processes batches",
             &O::accum_steps)
          .range(1, 1 << 16),

      option("max_epochs", "--max-epochs", "Stopping", "Stop after this many epochs (0 = no limit)", &O::max_epochs)
          .range(0, kMany).not_identity(),
      option("max_steps", "--max-steps", "Stopping", "Stop after this many updates (0 = no limit)", &O::max_steps)
          .range(0, kMany).not_identity(),
      duration_option("max_time_s", "--max-time", "Stopping", "Stop after this much training time (e.g. 90s, 60m, 1.5h)",
                      &O::max_time_s)
          .range(0, kHuge).not_identity(),
      option("patience", "--patience", "Stopping", "Stop after this many validations without improvement (0 = off)",
             &O::patience)
          .range(0, kMany).not_identity(),

      option("valid_every", "--valid-every", "Validation", "Validate every N updates (0 = every epoch)", &O::valid_every)
          .range(0, kMany),
      option("valid_after", "--valid-after", "Validation",
             "No validation before this many updates (fairseq's --validate-after-updates; 0 = from the start); "
             "the final weights are always validated; with --save-every 0 nothing is saved before N either",
             &O::valid_after)
          .range(0, kMany),
      option("log_every", "--log-every", "Validation", "Log every N updates", &O::log_every).range(0, kMany).not_identity(),
      option("valid_bleu", "--valid-bleu", "Validation", "Translate the validation set and report BLEU (true/false)",
             &O::valid_bleu),
      option("valid_beam", "--valid-beam", "Validation", "Beam size for validation BLEU (1 = greedy)", &O::valid_beam)
          .range(1, 1000),
      option("valid_max_len_b", "--valid-max-len-b", "Validation",
             "Validation translations stop at source length + this many subwords", &O::valid_max_len_b)
          .range(0, 100'000),
      option("best_metric", "--best-metric", "Validation", "Keep the best model by", &O::best_metric),

      option("save_every", "--save-every", "Checkpoints", "Also save a checkpoint every N updates (0 = at validations only)",
             &O::save_every)
          .range(0, kMany).not_identity(),
      option("keep_last", "--keep-last", "Checkpoints", "Checkpoints kept in OUT/checkpoints (the best weights are kept too)",
             &O::keep_last)
          .range(0, 1'000'000).not_identity(),
      option("max_bad_steps", "--max-bad-steps", "Checkpoints",
             "Stop after this many consecutive non-finite updates (each is skipped)", &O::max_bad_steps)
          .range(1, kMany).not_identity(),
  };
}

std::vector<OptionSpec<TrainOptions>> run_specs() {
  using O = TrainOptions;
  return {
      option("seed", "--seed", "", "Random seed", &O::seed),
      threads_option(&O::threads, "").not_identity(),
      device_option(&O::device, "").not_identity(),
      option("bf16", "--bf16", "", "bf16 autocast of the forward pass (CUDA only)", &O::bf16).as_switch(),
      option("out_dir", "-o,--out", "", "Model directory to create", &O::out_dir).not_saved().is_required(),
      option("resume", "--resume", "", "Continue the run in --out from its last checkpoint", &O::resume)
          .as_switch().not_saved(),
      option("quiet", "-q,--quiet", "", "No progress output (errors still go to stderr)", &O::quiet).as_switch().not_saved(),
  };
}

// Data parallelism: unset options (-1 / empty) come from the launcher's RANK, WORLD_SIZE,
// LOCAL_RANK, MASTER_ADDR and MASTER_PORT (torchrun's names); see scripts/launch-local.sh.
std::vector<OptionSpec<DistOptions>> dist_specs() {
  using D = DistOptions;
  return {
      option("dist_rank", "--dist-rank", "Distributed", "This process's rank, 0..world-1 (default $RANK, else 0)", &D::rank),
      option("dist_world_size", "--dist-world-size", "Distributed", "Number of processes (default $WORLD_SIZE, else 1)",
             &D::world_size),
      option("dist_local_rank", "--dist-local-rank", "Distributed",
             "Rank on this machine, picks the GPU (default $LOCAL_RANK)", &D::local_rank),
      option("dist_addr", "--dist-addr", "Distributed",
             "Rendezvous host, rank 0's machine (default $MASTER_ADDR, else 127.0.0.1)", &D::master_addr),
      option("dist_port", "--dist-port", "Distributed", "Rendezvous TCP port (default $MASTER_PORT, else 29500)",
             &D::master_port),
      option("dist_timeout", "--dist-timeout", "Distributed",
             "Seconds a collective may wait for the other ranks before failing", &D::timeout_s),
  };
}

std::vector<OptionSpec<TrainOptions>> make_specs() {
  using O = TrainOptions;
  std::vector<OptionSpec<O>> s = data_specs();
  for (auto& spec : training_specs()) s.push_back(std::move(spec));
  for (auto& spec : run_specs()) s.push_back(std::move(spec));
  // Model options: config.json's "model" section, declared in models/config.cc.
  for (const auto& m : models::model_option_specs())
    if (!m.flag.empty()) s.push_back(nested(m, &O::model)), s.back().saved = false;  // saved in "model"
  for (auto d : dist_specs())
    s.push_back(nested(std::move(d).not_saved(), &O::dist));
  return s;
}
}  // namespace

const std::vector<OptionSpec<TrainOptions>>& train_option_specs() {
  static const std::vector<OptionSpec<TrainOptions>> specs = make_specs();
  return specs;
}

nlohmann::json TrainOptions::to_json() const { return options_to_json(*this, train_option_specs()); }

TrainOptions TrainOptions::from_json(const nlohmann::json& j) {
  TrainOptions o;
  options_from_json(o, j, train_option_specs());
  return o;
}

nlohmann::json run_identity(const nlohmann::json& train_section) {
  nlohmann::json j = train_section;
  for (const auto& spec : train_option_specs())
    if (!spec.identity) j.erase(spec.key);
  return j;
}

void validate_options(const TrainOptions& o, const std::function<std::string(const std::string&)>& name) {
  for (const auto& spec : train_option_specs()) {
    try {
      spec.check(o);
    } catch (const OptionError& e) {
      if (!name) throw;
      throw UsageError(e.message(name));
    }
  }
  auto raise = [&](const OptionError& e) {
    if (!name) throw e;
    throw UsageError(e.message(name));
  };
  // The one value inside subword_nbest's range that is not one (SentencePiece's own rule).
  if (o.subword_nbest == 0) {
    const OptionError e("subword_nbest", fmt::format(" is 0, must be -1 (the whole lattice) or between 1 and {}",
                                                     text::SubwordModel::kMaxSampleNbest));
    raise(e);
  }
  if (o.src_vocab_size != 0 && (o.src_vocab_size < 5 || !o.separate_vocab)) {
    const OptionError e("src_vocab_size", o.separate_vocab ? fmt::format(" is {}, must be 0 or between 5 and {}",
                                                                         o.src_vocab_size, models::kMaxVocab)
                                                           : std::string(" needs --separate-vocab (a joint model has one "
                                                                         "size: --vocab-size)"));
    raise(e);
  }
  // A decay that ends with the budget needs one.
  if (decays_with_budget(o.lr_schedule) && o.max_steps <= 0 && o.max_time_s <= 0) {
    const OptionError e("lr_schedule", fmt::format(" '{}' decays over the run's budget: give --max-steps or --max-time",
                                                   enum_to_string(o.lr_schedule)));
    raise(e);
  }
  if (decays_with_budget(o.lr_schedule) && o.min_lr > o.lr) {
    const OptionError e("min_lr", fmt::format(" is {}, above the peak --lr {}", o.min_lr, o.lr));
    raise(e);
  }
  if (!o.data_dir.empty()) {
    if (!o.train_prefix.empty() || !o.train_tsv.empty())
      raise(OptionError(std::vector<std::string>{"data_dir", "train_prefix", "train_tsv"},
                        "give {0} DIR or {1}/{2}, not both"));
    if (o.valid_prefix.empty() && o.valid_tsv.empty())
      raise(OptionError(std::vector<std::string>{"data_dir", "valid_prefix", "valid_tsv"},
                        "{0} needs {1} PREFIX or {2} FILE: a prepared dataset holds no validation split"));
    if (o.separate_vocab)
      raise(OptionError(std::vector<std::string>{"separate_vocab", "data_dir"},
                        "{0} is not supported with {1}: a prepared dataset has one joint subword model"));
    if (o.subword_alpha > 0)
      raise(OptionError(std::vector<std::string>{"subword_alpha", "data_dir"},
                        "{0} re-segments the training text every epoch; {1} holds ids, not text"));
  }
  try {
    o.model.validate(name ? name : [](const std::string& key) { return fmt::format("'{}'", key); }, /*check_vocab=*/false);
  } catch (const RuntimeError& e) {
    throw UsageError(e.what());
  }
}

std::string flag_of(const std::string& key) {
  for (const auto& spec : train_option_specs())
    if (spec.key == key && !spec.flag.empty()) return spec.long_flag();
  std::string flag = "--" + key;  // "preset" and other options outside the table
  std::replace(flag.begin(), flag.end(), '_', '-');
  return flag;
}

}  // namespace nmt::train
