// `nmt train`: options → nmt::train::run_training.
#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "commands.h"
#include "nmt/train/presets.h"
#include "nmt/train/trainer.h"
#include "nmt/util/error.h"
#include "train_options.h"

namespace nmt::cli {

namespace {
// "90", "90s", "45m", "1.5h" → seconds.
double parse_duration(const std::string& text) {
  if (text.empty()) throw UsageError("--max-time: empty duration");
  size_t used = 0;
  double value = 0;
  try {
    value = std::stod(text, &used);
  } catch (const std::exception&) {
    throw UsageError(fmt::format("--max-time: '{}' is not a duration (e.g. 90s, 60m, 1.5h)", text));
  }
  const std::string unit = text.substr(used);
  double scale = 1;
  if (unit == "" || unit == "s") scale = 1;
  else if (unit == "m" || unit == "min") scale = 60;
  else if (unit == "h") scale = 3600;
  else throw UsageError(fmt::format("--max-time: unknown unit '{}' in '{}' (use s, m or h)", unit, text));
  if (value < 0) throw UsageError("--max-time must not be negative");
  return value * scale;
}
}  // namespace

void add_train_command(CLI::App& app) {
  auto* cmd = app.add_subcommand("train", "Train a model on parallel data");
  auto options = std::make_shared<train::TrainOptions>();
  auto binder = std::make_shared<TrainOptionBinder>(cmd, options.get());
  auto preset = std::make_shared<std::string>();
  auto max_time = std::make_shared<std::string>();
  using O = train::TrainOptions;
  auto& b = *binder;

  cmd->add_option("--preset", *preset, "Recipe: transformer-small, transformer-base, transformer-tiny, gru-small, gru-tiny")
      ->group("Model");
  b.add("--train", [](O& o) -> auto& { return o.train_prefix; }, "Training files PREFIX (reads PREFIX.SRC and PREFIX.TGT)")->group("Data");
  b.add("--valid", [](O& o) -> auto& { return o.valid_prefix; }, "Validation files PREFIX")->group("Data");
  b.add("--train-tsv", [](O& o) -> auto& { return o.train_tsv; }, "Tab-separated pair file (source<TAB>target[<TAB>...])")->group("Data");
  b.add("--valid-tsv", [](O& o) -> auto& { return o.valid_tsv; }, "Tab-separated validation pairs")->group("Data");
  b.add("--valid-size", [](O& o) -> auto& { return o.valid_size; }, "Pairs held out for validation when no validation set is given")->group("Data");
  b.add("--src", [](O& o) -> auto& { return o.src_lang; }, "Source language suffix")->group("Data");
  b.add("--tgt", [](O& o) -> auto& { return o.tgt_lang; }, "Target language suffix")->group("Data");
  b.add("--strict", [](O& o) -> auto& { return o.strict; }, "Bad corpus lines are errors instead of skipped (true/false)")->group("Data");
  b.add("--max-chars", [](O& o) -> auto& { return o.max_chars; }, "Skip corpus lines longer than this many characters")->group("Data");
  b.add("--vocab-size", [](O& o) -> auto& { return o.vocab_size; }, "Joint SentencePiece vocabulary size")->group("Data");
  b.add("--subword-type", [](O& o) -> auto& { return o.subword_type; }, "SentencePiece model type: unigram or bpe")->group("Data");

  b.add("--model", [](O& o) -> auto& { return o.model.type; }, "Architecture: transformer or gru")->group("Model");
  b.add("--d-model", [](O& o) -> auto& { return o.model.d_model; }, "Transformer width")->group("Model");
  b.add("--heads", [](O& o) -> auto& { return o.model.heads; }, "Attention heads")->group("Model");
  b.add("--ffn", [](O& o) -> auto& { return o.model.ffn; }, "Feed-forward inner size")->group("Model");
  b.add("--encoder-layers", [](O& o) -> auto& { return o.model.encoder_layers; }, "Encoder layers")->group("Model");
  b.add("--decoder-layers", [](O& o) -> auto& { return o.model.decoder_layers; }, "Decoder layers")->group("Model");
  b.add("--pre-norm", [](O& o) -> auto& { return o.model.pre_norm; }, "LayerNorm before each block (true) or after (false, the paper)")->group("Model");
  b.add("--dropout", [](O& o) -> auto& { return o.model.dropout; }, "Dropout")->group("Model");
  b.add("--attention-dropout", [](O& o) -> auto& { return o.model.attention_dropout; }, "Dropout on attention weights")->group("Model");
  b.add("--activation-dropout", [](O& o) -> auto& { return o.model.activation_dropout; }, "Dropout inside the feed-forward block")->group("Model");
  b.add("--max-positions", [](O& o) -> auto& { return o.model.max_positions; }, "Longest sequence in subwords")->group("Model");
  b.add("--embedding", [](O& o) -> auto& { return o.model.embedding; }, "GRU: embedding size")->group("Model");
  b.add("--hidden", [](O& o) -> auto& { return o.model.hidden; }, "GRU: hidden size")->group("Model");
  b.add("--rnn-layers", [](O& o) -> auto& { return o.model.rnn_layers; }, "GRU: layers")->group("Model");
  b.add("--bidirectional", [](O& o) -> auto& { return o.model.bidirectional; }, "GRU: bidirectional encoder (true/false)")->group("Model");

  b.add("--lr", [](O& o) -> auto& { return o.lr; }, "Peak learning rate")->group("Optimisation");
  b.add("--warmup", [](O& o) -> auto& { return o.warmup; }, "Linear warm-up steps")->group("Optimisation");
  b.add("--lr-schedule", [](O& o) -> auto& { return o.lr_schedule; }, "After warm-up: inverse-sqrt or constant")->group("Optimisation");
  b.add("--label-smoothing", [](O& o) -> auto& { return o.label_smoothing; }, "Label smoothing ε")->group("Optimisation");
  b.add("--clip-norm", [](O& o) -> auto& { return o.clip_norm; }, "Gradient-norm clipping (0 = off)")->group("Optimisation");
  b.add("--weight-decay", [](O& o) -> auto& { return o.weight_decay; }, "Adam weight decay")->group("Optimisation");
  b.add("--max-tokens", [](O& o) -> auto& { return o.max_tokens; }, "Padded tokens per side per batch")->group("Optimisation");
  b.add("--accum-steps", [](O& o) -> auto& { return o.accum_steps; }, "Batches per update on each process (gradient accumulation, fairseq's --update-freq)")->group("Optimisation");

  b.add("--max-epochs", [](O& o) -> auto& { return o.max_epochs; }, "Stop after this many epochs (0 = no limit)")->group("Stopping");
  b.add("--max-steps", [](O& o) -> auto& { return o.max_steps; }, "Stop after this many updates (0 = no limit)")->group("Stopping");
  cmd->add_option("--max-time", *max_time, "Stop after this much training time (e.g. 90s, 60m, 1.5h)")->group("Stopping");
  b.add("--patience", [](O& o) -> auto& { return o.patience; }, "Stop after this many validations without improvement (0 = off)")->group("Stopping");

  b.add("--valid-every", [](O& o) -> auto& { return o.valid_every; }, "Validate every N updates (0 = every epoch)")->group("Validation");
  b.add("--log-every", [](O& o) -> auto& { return o.log_every; }, "Log every N updates")->group("Validation");
  b.add("--valid-bleu", [](O& o) -> auto& { return o.valid_bleu; }, "Translate the validation set and report BLEU (true/false)")->group("Validation");
  b.add("--valid-beam", [](O& o) -> auto& { return o.valid_beam; }, "Beam size for validation BLEU (1 = greedy)")->group("Validation");
  b.add("--best-metric", [](O& o) -> auto& { return o.best_metric; }, "Keep the best model by bleu or loss")->group("Validation");

  b.add("--save-every", [](O& o) -> auto& { return o.save_every; }, "Also save a checkpoint every N updates (0 = at validations only)")->group("Checkpoints");
  b.add("--keep-last", [](O& o) -> auto& { return o.keep_last; }, "Checkpoints kept in OUT/checkpoints (the best weights are kept too)")->group("Checkpoints");
  b.add("--max-bad-steps", [](O& o) -> auto& { return o.max_bad_steps; }, "Stop after this many consecutive non-finite updates (each is skipped)")->group("Checkpoints");
  b.add("--seed", [](O& o) -> auto& { return o.seed; }, "Random seed");
  b.add("--threads", [](O& o) -> auto& { return o.threads; }, "LibTorch intra-op threads (0 = default)");
  b.add("--device", [](O& o) -> auto& { return o.device; }, "cpu, cuda or cuda:N (default: CUDA when available, else cpu)");
  cmd->add_flag("--bf16", options->bf16, "bf16 autocast of the forward pass (CUDA only)");

  // Data parallelism: unset options come from the launcher's RANK, WORLD_SIZE, LOCAL_RANK,
  // MASTER_ADDR and MASTER_PORT (torchrun's names); see scripts/launch-local.sh.
  auto& d = options->dist;
  cmd->add_option("--dist-rank", d.rank, "This process's rank, 0..world-1 (default $RANK, else 0)")->group("Distributed");
  cmd->add_option("--dist-world-size", d.world_size, "Number of processes (default $WORLD_SIZE, else 1)")->group("Distributed");
  cmd->add_option("--dist-local-rank", d.local_rank, "Rank on this machine, picks the GPU (default $LOCAL_RANK)")->group("Distributed");
  cmd->add_option("--dist-addr", d.master_addr, "Rendezvous host, rank 0's machine (default $MASTER_ADDR, else 127.0.0.1)")->group("Distributed");
  cmd->add_option("--dist-port", d.master_port, "Rendezvous TCP port (default $MASTER_PORT, else 29500)")->group("Distributed");
  cmd->add_option("--dist-timeout", d.timeout_s, "Seconds a collective may wait for the other ranks before failing")
      ->capture_default_str()->group("Distributed");
  b.add("-o,--out", [](O& o) -> auto& { return o.out_dir; }, "Model directory to create")->required();
  cmd->add_flag("--resume", options->resume, "Continue the run in --out from its last checkpoint");
  cmd->add_flag("-q,--quiet", options->quiet, "No progress output (errors still go to stderr)");

  cmd->callback([options, binder, preset, max_time] {
    if (!preset->empty()) {
      train::TrainOptions p = *options;
      train::apply_preset(*preset, p);
      binder->apply_preset(p);
    }
    if (!max_time->empty()) options->max_time_s = parse_duration(*max_time);
    auto summary = train::run_training(*options);
    if (summary.signal)
      throw Error(fmt::format("interrupted by signal {} at step {}; checkpoint saved in {} (continue with --resume)",
                              summary.signal, summary.steps, options->out_dir),
                  128 + summary.signal);
  });
}

}  // namespace nmt::cli
