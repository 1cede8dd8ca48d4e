#include "nmt/train/trainer.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <ctime>
#include <fstream>
#include <sstream>

#include <unistd.h>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "nmt/data/dataset_source.h"
#include "nmt/models/model_io.h"
#include "nmt/tensor/batch.h"
#include "nmt/tensor/device.h"
#include "nmt/tensor/threads.h"
#include "nmt/train/corpus_source.h"
#include "nmt/train/observers.h"
#include "nmt/train/run_directory.h"
#include "nmt/train/step.h"
#include "nmt/train/stop_signals.h"
#include "nmt/util/allocator.h"
#include "nmt/util/error.h"
#include "nmt/util/io.h"
#include "nmt/viz/progress.h"

namespace nmt::train {
namespace fs = std::filesystem;

namespace {

std::string timestamp() {
  std::time_t now = std::time(nullptr);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%d %H:%M:%S", std::localtime(&now));
  return buf;
}

std::string host_name() {
  char name[256] = {};
  if (::gethostname(name, sizeof name - 1) != 0) return "this host";
  return name;
}

// Seconds since this process started (/proc/self/stat's start time, 10 ms resolution), so
// start-up includes loading LibTorch; -1 where /proc cannot tell.
double seconds_since_process_start() {
  std::ifstream stat("/proc/self/stat");
  std::string line;
  std::getline(stat, line);
  const size_t close = line.rfind(')');
  if (close == std::string::npos) return -1;
  std::istringstream fields(line.substr(close + 1));
  std::string field;
  for (int k = 3; k <= 22 && fields >> field; ++k) {
  }
  std::ifstream uptime_file("/proc/uptime");
  double uptime = 0;
  if (!(uptime_file >> uptime) || field.empty()) return -1;
  return uptime - std::stod(field) / static_cast<double>(::sysconf(_SC_CLK_TCK));
}

void print_warnings(const data::ReadReport& report) {
  for (const auto& w : report.warnings) std::fprintf(stderr, "warning: %s\n", w.c_str());
}

struct Corpora {
  data::ParallelCorpus train, valid;
};

Corpora read_corpora(const TrainOptions& o) {
  data::ReadOptions ro;
  ro.strict = o.strict;
  ro.max_chars = o.max_chars;
  Corpora c;
  auto read = [&](const std::string& prefix, const std::string& tsv) {
    auto r = !prefix.empty() ? data::read_parallel(prefix, o.src_lang, o.tgt_lang, ro) : data::read_tsv(tsv, ro);
    print_warnings(r.report);
    return std::move(r.corpus);
  };
  if (!o.data_dir.empty()) {  // the training pairs come from the dataset (validate_options checked --valid)
    c.valid = read(o.valid_prefix, o.valid_tsv);
    if (c.valid.empty()) throw RuntimeError("the validation corpus is empty");
    return c;
  }
  if (!o.train_prefix.empty() == !o.train_tsv.empty())
    throw OptionError(std::vector<std::string>{"train_prefix", "train_tsv", "data_dir"},
                      "give exactly one of {0} PREFIX, {1} FILE or {2} DIR");
  c.train = read(o.train_prefix, o.train_tsv);
  if (!o.valid_prefix.empty() || !o.valid_tsv.empty()) {
    c.valid = read(o.valid_prefix, o.valid_tsv);
  } else {
    // A single file: hold out a seeded validation split (the test split stays empty).
    const size_t n_valid = std::min(o.valid_size, c.train.size() / 10);
    auto split = data::split_corpus(c.train, n_valid, 0, o.seed);
    c.train = std::move(split.train);
    c.valid = std::move(split.valid);
  }
  if (c.train.empty()) throw RuntimeError("the training corpus is empty (after skipping bad lines)");
  if (c.valid.empty()) throw RuntimeError("the validation corpus is empty");
  return c;
}

std::string optimizer_bytes(torch::optim::Optimizer& optimizer) {
  torch::serialize::OutputArchive archive;
  optimizer.save(archive);
  std::ostringstream out;
  archive.save_to(out);
  return out.str();
}

void load_optimizer_bytes(torch::optim::Optimizer& optimizer, const std::string& bytes, const torch::Device& device) {
  torch::serialize::InputArchive archive;
  archive.load_from(bytes.data(), bytes.size(), device);
  optimizer.load(archive);
}

// --data's dataset. Every rank opens its own copy (the path may differ between hosts); all must
// hold the dataset rank 0 trains on, since every rank plans the same batches and reads the
// pairs of its own.
std::unique_ptr<data::MappedDataset> open_dataset(const std::string& dir, Distributed& dist) {
  const std::string where = dist.active() ? fmt::format("rank {} on {}: ", dist.rank(), host_name()) : std::string();
  std::unique_ptr<data::MappedDataset> dataset;
  try {
    dataset = data::MappedDataset::open(dir);
  } catch (const RuntimeError& e) {
    throw RuntimeError(where + e.what());
  }
  if (!dist.active()) return dataset;
  const std::string mine = dataset->manifest().to_json().at("shards").dump();
  if (dist.share_from_main("dataset-shards", mine) != mine)
    throw RuntimeError(fmt::format("{}{}: not the dataset rank 0 trains on (the manifests' shards differ)", where, dir));
  return dataset;
}

// The one place that knows which kind of training pairs a run has: --data's dataset, else the
// corpus read from --train / --train-tsv.
std::unique_ptr<data::BatchSource> open_batch_source(const TrainOptions& o, data::ParallelCorpus train,
                                                     Distributed& dist, const data::BatchSource::Log& log) {
  data::PlanOptions plan;
  plan.max_tokens = static_cast<size_t>(o.max_tokens);
  plan.seed = o.seed;
  plan.max_len = o.model.max_positions - 1;
  if (o.data_dir.empty())
    return std::make_unique<CorpusBatchSource>(std::move(train), plan, SubwordSampling{o.subword_alpha, o.subword_nbest},
                                               log);
  return std::make_unique<data::DatasetBatchSource>(open_dataset(o.data_dir, dist), static_cast<uint64_t>(o.data_pool),
                                                    plan, log);
}

}  // namespace

// ---- Trainer

Trainer::Trainer(const TrainOptions& options)
    : o_(options), out_(options.out_dir), device_(torch::kCPU), checkpoints_(out_, static_cast<int>(options.keep_last)) {}

Trainer::~Trainer() = default;

void Trainer::log(const std::string& line) {
  if (progress_) progress_->clear();
  if (!o_.quiet && is_main_) std::fprintf(stderr, "[%s] %s\n", timestamp().c_str(), line.c_str());
}

// Resume when asked, or when the same command is run again on the same --out. Only rank 0
// looks at --out (and only rank 0 ever writes there): the other ranks may be on machines that
// cannot see it.
void Trainer::prepare_output_dir() {
  if (!is_main_) return;
  if (fs::exists(out_) && !fs::is_directory(out_))
    throw UsageError(fmt::format("{}: --out exists and is not a directory", o_.out_dir));
  std::error_code ec;
  created_out_ = !fs::exists(out_);
  fs::create_directories(out_, ec);
  if (ec) throw RuntimeError(fmt::format("{}: cannot create: {}", o_.out_dir, ec.message()));
  owner_.emplace(out_.string());
  resuming_ = claim_out_dir(out_, o_, checkpoints_);
}

// Every rank reads the corpus; rank 0 makes the subword model(s) and shares them.
void Trainer::prepare_data() {
  Corpora corpora = read_corpora(o_);
  source_ = open_batch_source(o_, std::move(corpora.train), *dist_, [this](const std::string& line) { log(line); });
  if (is_main_ && !resuming_) make_subword_models();
  auto load = [&](const char* file) {
    const fs::path path = out_ / file;
    std::string bytes = is_main_ ? read_file(path.string()) : "";
    if (dist_->active()) bytes = dist_->share_from_main(file, bytes);
    return text::SubwordModel::load_from_serialized(bytes, is_main_ ? path.string() : fmt::format("rank 0's {}", file));
  };
  sp_.target = load(models::kSubwordFile);
  sp_.source = o_.separate_vocab ? load(models::kSourceSubwordFile) : sp_.target;
  o_.model.src_vocab = sp_.source.vocab_size();
  o_.model.tgt_vocab = sp_.target.vocab_size();
  o_.model.shared_vocab = !o_.separate_vocab;
  source_->use_subwords(sp_, (out_ / models::kSubwordFile).string());
  size_t unused = 0;
  valid_ = encode_set(corpora.valid, sp_, 0, false, &unused);
  log(fmt::format("data: {}, {} validation pairs, {}", source_->describe(), valid_.src.size(),
                  o_.separate_vocab ? fmt::format("vocabularies {} (source) and {} (target)", sp_.source.vocab_size(),
                                                  sp_.target.vocab_size())
                                    : fmt::format("vocabulary {}", sp_.target.vocab_size())));
}

// Rank 0 of a fresh run: --init-from's subword models, or new ones trained on the training
// text: one joint model, or with --separate-vocab one per side.
void Trainer::make_subword_models() {
  if (!o_.init_from.empty()) {
    // The source model's subwords: its embeddings are indexed by them.
    const std::vector<std::string> files = models::subword_files(/*shared_vocab=*/!o_.separate_vocab);
    for (const std::string& f : files)
      write_file_atomic((out_ / f).string(), read_file((fs::path(o_.init_from) / f).string()));
    log(fmt::format("starting from {}: its {} and {}", o_.init_from, fmt::join(files, ", "), models::kWeightsFile));
    return;
  }
  if (const std::optional<std::string> own = source_->own_subword_model()) {  // the model its ids belong to
    write_file_atomic((out_ / models::kSubwordFile).string(), *own);
    return;
  }
  const data::ParallelCorpus& train = source_->subword_training_text();
  auto make = [&](const std::vector<std::string>& sentences, bool source_side, const char* file, const char* what) {
    const text::SubwordOptions so = subword_options(o_, source_side);
    log(fmt::format("training a {} SentencePiece model (vocab {}) on {} {}sentences", so.model_type, so.vocab_size,
                    sentences.size(), what));
    text::SubwordModel::train(sentences, so, (out_ / file).string());
  };
  if (!o_.separate_vocab) {
    make(joint_sentences(train), false, models::kSubwordFile, "");
    return;
  }
  make(train.source, true, models::kSourceSubwordFile, "source ");
  make(train.target, false, models::kSubwordFile, "target ");
}

void Trainer::build() {
  const nlohmann::json config = models::model_directory_config(o_.model.to_json(), o_.to_json());
  if (is_main_) write_file_atomic((out_ / models::kConfigFile).string(), config.dump(2) + "\n");

  model_ = models::make_model(o_.model);
  // Fresh weights are drawn either way, so the random generator is where a fresh run's is.
  if (!resuming_ && !o_.init_from.empty())
    models::load_weights(*model_, (fs::path(o_.init_from) / models::kWeightsFile).string());
  model_->to(device_);
  params_ = model_->parameters();
  optimizer_ = std::make_unique<torch::optim::Adam>(make_optimizer(params_, o_));
  state_ = std::make_unique<TrainingState>();
  TrainState& state = state_->saved;
  if (resuming_) {
    const fs::path latest = checkpoints_.list().back();
    state = CheckpointManager::load(latest, *model_, *optimizer_, o_.model.type, device_);
    if (state.world_size != dist_->world_size() || state.accum_steps != o_.accum_steps)
      throw UsageError(fmt::format("{}: checkpoint made with {} process(es) × --accum-steps {}; resume it with the same "
                                   "(now {} × {})",
                                   latest.string(), state.world_size, state.accum_steps, dist_->world_size(), o_.accum_steps));
    log(fmt::format("resumed from {} at step {} (epoch {}, batch {})", latest.string(), state.step, state.epoch,
                    state.batch_in_epoch));
  }
  state.world_size = dist_->world_size();
  state.accum_steps = o_.accum_steps;
}

void Trainer::sync_ranks() {
  if (!dist_->active()) return;
  TrainState& state = state_->saved;
  // Rank 0's weights (fresh or resumed), optimizer moments and position go to every rank.
  // (The models' buffers, e.g. the positional table, are computed, not learned.)
  dist_->broadcast(params_);
  const nlohmann::json start = {{"resuming", resuming_}, {"state", state.to_json()}};
  const nlohmann::json shared = nlohmann::json::parse(dist_->share_from_main("start", is_main_ ? start.dump() : ""));
  resuming_ = shared.at("resuming").get<bool>();
  if (!is_main_) state = TrainState::from_json(shared.at("state"));
  if (resuming_) {
    const std::string bytes = dist_->share_from_main("optimizer", is_main_ ? optimizer_bytes(*optimizer_) : "");
    if (!is_main_) load_optimizer_bytes(*optimizer_, bytes, device_);
  }
  // Dropout: rank 0 keeps the seeded (or resumed) generator, so a 1-process run is unchanged;
  // the other ranks draw their own masks.
  if (!is_main_)
    torch::manual_seed(o_.seed + 1000003ULL * static_cast<uint64_t>(dist_->rank()) + static_cast<uint64_t>(state.step));
}

// Stopping is decided before each update, identically on every process (or one would wait
// forever in a collective the others never enter), so a run resumed at its limit stops at once.
StopReason Trainer::stop_before_update() {
  const TrainState& s = state_->saved;
  StopReason stop = StopReason::kNone;
  if (stop_signal()) stop = StopReason::kSignal;
  else if (o_.patience > 0 && s.bad_validations >= o_.patience) stop = StopReason::kPatience;
  else if (o_.max_steps > 0 && s.step >= o_.max_steps) stop = StopReason::kMaxSteps;
  else if (o_.max_time_s > 0 && state_->elapsed() >= o_.max_time_s) stop = StopReason::kMaxTime;
  return static_cast<StopReason>(dist_->all_reduce_max(static_cast<int64_t>(stop)));
}

// How far through its budget the run is before the next update; with --max-time the slowest
// clock of all processes (in microseconds, one collective), so every process runs the update at
// the same rate and their weights stay identical.
double Trainer::budget_progress_before_update() {
  if (!decays_with_budget(o_.lr_schedule)) return 0;
  double elapsed = 0;
  if (o_.max_time_s > 0) elapsed = static_cast<double>(dist_->all_reduce_max(static_cast<int64_t>(state_->elapsed() * 1e6))) / 1e6;
  return budget_progress(o_, state_->saved.step + 1, elapsed);
}

Batch Trainer::micro_batch(const data::Batch& examples) const {
  data::BatchPairs pairs;
  source_->read(examples, pairs);
  return make_batch(pairs.src, pairs.tgt);
}

// The source's parts of the epoch in order, from the one a resumed run stopped in.
StopReason Trainer::run_epoch() {
  TrainState& state = state_->saved;
  if (o_.max_epochs > 0 && state.epoch > o_.max_epochs) return StopReason::kMaxEpochs;
  epoch_info_ = UpdateInfo();
  epoch_info_.epoch_start = Clock::now();
  first_plan_of_run_epoch_ = true;
  source_->start_epoch(state.epoch);
  const size_t parts = source_->parts_per_epoch();
  for (auto part = static_cast<size_t>(state.pool_in_epoch); part < parts; ++part) {
    const auto plan = source_->plan(state.epoch, part);
    if (const StopReason stop = run_updates(plan, {part, parts}); stop != StopReason::kNone) return stop;
    state.pool_in_epoch = static_cast<int64_t>(part) + 1;
    state.batch_in_epoch = 0;
  }
  source_->end_epoch(state.epoch);
  state.epoch += 1;
  state.batch_in_epoch = 0;
  state.pool_in_epoch = 0;
  state_->epoch_done();
  return StopReason::kNone;
}

// An update takes `per_update` consecutive batches of the plan (a pure function of seed, epoch
// and pool, so every rank computes the same one): rank r takes the r-th run of accum_steps of
// them. Every rank also knows the update's total target tokens from the plan, which is what
// makes the summed gradient exactly the combined batch's.
StopReason Trainer::run_updates(const std::vector<data::Batch>& plan, PlanPart part) {
  TrainState& state = state_->saved;
  const size_t per_update = static_cast<size_t>(o_.accum_steps) * static_cast<size_t>(dist_->world_size());
  UpdateInfo& info = epoch_info_;
  const SumAcrossProcesses sum_across_processes =
      dist_->active() ? SumAcrossProcesses([this, &info](const std::vector<torch::Tensor>& t) {
        const auto start = Clock::now();
        dist_->all_reduce_sum(t);
        info.all_reduce_seconds += std::chrono::duration<double>(Clock::now() - start).count();
      })
                      : SumAcrossProcesses();
  const size_t progress_offset = part.index * plan.size();
  info.plan_size = part.count * plan.size();
  if (first_plan_of_run_epoch_) info.epoch_first_batch = progress_offset + static_cast<size_t>(state.batch_in_epoch);
  first_plan_of_run_epoch_ = false;
  for (size_t first = static_cast<size_t>(state.batch_in_epoch); first < plan.size(); first += per_update) {
    if (const StopReason stop = stop_before_update(); stop != StopReason::kNone) return stop;
    const size_t end = std::min(plan.size(), first + per_update);
    int64_t update_tgt_tokens = 0, update_src_tokens = 0;
    for (size_t b = first; b < end; ++b)
      for (size_t i : plan[b]) {
        const data::ExampleLength len = source_->length(i);
        update_tgt_tokens += static_cast<int64_t>(len.tgt);
        update_src_tokens += static_cast<int64_t>(len.src);
      }
    std::vector<Batch> micro_batches;
    for (int64_t k = 0; k < o_.accum_steps; ++k) {
      const size_t b = first + static_cast<size_t>(dist_->rank() * o_.accum_steps + k);
      if (b >= end) break;
      micro_batches.push_back(to_device(micro_batch(plan[b]), device_));
    }
    const double lr = learning_rate(o_, state.step + 1, budget_progress_before_update());
    info.all_reduce_seconds = 0;
    const StepResult step =
        train_step(*model_, *optimizer_, params_, micro_batches, update_tgt_tokens, o_, lr, sum_across_processes);
    state.batch_in_epoch = static_cast<int64_t>(end);
    if (!step.applied) {
      state.skipped_steps += 1;
      bad_in_a_row_ += 1;
      log(fmt::format("warning: non-finite loss or gradient at update {}: skipped ({} in a row, {} in all)", state.step + 1,
                      bad_in_a_row_, state.skipped_steps));
      if (bad_in_a_row_ >= o_.max_bad_steps) return StopReason::kNonFinite;
      continue;
    }
    bad_in_a_row_ = 0;
    state.step += 1;
    info.sums = step.sums;
    info.tgt_tokens = update_tgt_tokens;
    info.src_tokens = update_src_tokens;
    info.lr = lr;
    info.batch_end = progress_offset + end;
    state_->update_done(info);
    if (!logged_first_update_) {  // what start-up costs (corpus, subword models, model, first batch plan)
      logged_first_update_ = true;
      log(fmt::format("first update done {:.2f} s after the process started", seconds_since_process_start()));
    }
  }
  return StopReason::kNone;
}

TrainSummary Trainer::finish(StopReason reason) {
  const TrainState& state = state_->saved;
  TrainSummary summary;
  summary.signal = stop_signal();
  state_->stopped(reason);  // rank 0: the final validation and checkpoint
  if (reason == StopReason::kSignal) {
    if (summary.signal)
      log(fmt::format("interrupted by signal {} at step {}; checkpoint saved, continue with --resume", summary.signal,
                      state.step));
    else
      log(fmt::format("another rank was interrupted by a signal at step {}; checkpoint saved, continue with --resume",
                      state.step));
  } else if (reason == StopReason::kNonFinite) {
    log(fmt::format("stopping: {} consecutive updates had a non-finite loss or gradient; the last good checkpoint "
                    "and the best weights are kept",
                    bad_in_a_row_));
  }
  summary.steps = state.step;
  summary.epochs = state.epoch;
  summary.best_metric = state.best;
  summary.seconds = state_->elapsed();
  summary.skipped_steps = state.skipped_steps;
  summary.stop_reason = reason;
  for (const auto& h : state.history) {
    if (h.contains("val_bleu")) summary.best_valid_bleu = std::max(summary.best_valid_bleu, h["val_bleu"].get<double>());
    const double l = h["val_loss"].get<double>();
    if (summary.best_valid_loss == 0 || l < summary.best_valid_loss) summary.best_valid_loss = l;
  }
  if (reason != StopReason::kSignal && reason != StopReason::kNonFinite)
    log(fmt::format("stopped ({}) after {} steps, {}; best validation {} {:.3f}; model in {}", enum_to_string(reason),
                    state.step, viz::format_duration(summary.seconds), enum_to_string(o_.best_metric),
                    o_.best_metric == BestMetric::kBleu ? state.best : -state.best, o_.out_dir));
  if (reason == StopReason::kNonFinite)
    throw RuntimeError(fmt::format("training diverged: {} consecutive non-finite updates (see {}/metrics.jsonl)",
                                   bad_in_a_row_, o_.out_dir));
  return summary;
}

TrainSummary Trainer::run() {
  if (o_.out_dir.empty()) throw OptionError("out_dir", " is required");
  validate_options(o_);
  if (o_.best_metric == BestMetric::kBleu && !o_.valid_bleu) o_.best_metric = BestMetric::kLoss;
  const DistOptions dist_options = o_.dist.resolved();
  device_ = resolve_device(o_.device);
  // One GPU per process: "cuda" in a multi-process job means the GPU of this LOCAL_RANK.
  if (device_.is_cuda() && dist_options.world_size > 1 && (o_.device.empty() || o_.device == "cuda"))
    device_ = torch::Device(torch::kCUDA, static_cast<c10::DeviceIndex>(dist_options.local_rank));
  if (o_.bf16 && !device_.is_cuda()) throw OptionError("bf16", " needs a CUDA device (--device cuda)");
  if (!o_.init_from.empty()) check_init_from(o_);
  SignalScope signals;  // from the start: a signal during set-up stops before the first update

  // Joined first, so that when rank 0 refuses the options or the output directory below, its
  // exit closes the rendezvous and the other ranks fail at once instead of waiting.
  dist_ = std::make_unique<Distributed>(dist_options, device_);
  is_main_ = dist_->is_main();
  prepare_output_dir();
  set_threads(o_.threads);
  keep_freed_memory_for_reuse();
  torch::manual_seed(o_.seed);

  // Only rank 0 talks, validates and writes.
  progress_ = std::make_unique<viz::ProgressLine>(!o_.quiet && is_main_ && viz::is_terminal(stderr));

  prepare_data();
  build();
  sync_ranks();
  log(fmt::format("model: {} with {} parameters on {}; --threads {} (LibTorch intra-op {}){}", o_.model.type,
                  models::count_parameters(*model_), device_.str(), o_.threads, torch::get_num_threads(),
                  dist_->active() || o_.accum_steps > 1
                      ? fmt::format("; {} process(es) × {} batch(es) per update", dist_->world_size(), o_.accum_steps)
                      : ""));
  if (is_main_) {
    // The order of the reactions to one event: log the update, validate (which logs and
    // saves), then save.
    auto log_line = [this](const std::string& line) { log(line); };
    observers_.push_back(std::make_unique<Logger>(o_, *state_, *progress_, out_ / "metrics.jsonl", log_line));
    auto validator = std::make_unique<Validator>(o_, *state_, *model_, sp_.target, valid_, device_, out_);
    validator_ = validator.get();
    observers_.push_back(std::move(validator));
    observers_.push_back(std::make_unique<Checkpointer>(o_, *state_, checkpoints_, *model_, *optimizer_, resuming_));
    for (const auto& observer : observers_) state_->subscribe(observer.get());
  }
  state_->start_clock();
  // Where an adapted model starts: its validation figures before the first update (the source
  // model's own, on this validation set), unless --valid-after asks for none yet.
  if (validator_ && !o_.init_from.empty() && validations_open(o_, 0) && state_->saved.step == 0 &&
      state_->saved.history.empty())
    validator_->validate();
  model_->train();
  StopReason reason = StopReason::kNone;
  while (reason == StopReason::kNone) reason = run_epoch();
  return finish(reason);
}

void Trainer::remove_unused_output_dir() noexcept {
  if (!created_out_) return;
  std::error_code ec;
  const fs::path checkpoints = out_ / "checkpoints";
  const bool saved = fs::exists(out_ / models::kWeightsFile, ec) ||
                     (fs::exists(checkpoints, ec) && !fs::is_empty(checkpoints, ec));
  if (saved || ec) return;  // in doubt, nothing is deleted
  owner_.reset();
  fs::remove_all(out_, ec);
}

TrainSummary run_training(const TrainOptions& options) {
  Trainer trainer(options);
  try {
    return trainer.run();
  } catch (...) {
    trainer.remove_unused_output_dir();
    throw;
  }
}

}  // namespace nmt::train
