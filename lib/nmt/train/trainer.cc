#include "nmt/train/trainer.h"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <sstream>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "nmt/data/rng.h"
#include "nmt/decode/strategy.h"
#include "nmt/decode/greedy.h"
#include "nmt/metrics/bleu.h"
#include "nmt/models/model_io.h"
#include "nmt/tensor/batch.h"
#include "nmt/tensor/device.h"
#include "nmt/tensor/threads.h"
#include "nmt/train/step.h"
#include "nmt/util/allocator.h"
#include "nmt/util/error.h"
#include "nmt/util/io.h"
#include "nmt/util/json_read.h"
#include "nmt/viz/progress.h"

namespace nmt::train {
namespace fs = std::filesystem;

// ---- data preparation

EncodedSet encode_set(const data::ParallelCorpus& corpus, const text::SubwordPair& sp, int64_t max_len,
                      bool drop_long, size_t* dropped) {
  EncodedSet set;
  for (size_t i = 0; i < corpus.size(); ++i) {
    Ids s = sp.source.encode(corpus.source[i]);
    Ids t = sp.target.encode(corpus.target[i]);
    if (drop_long && (static_cast<int64_t>(s.size()) + 1 > max_len || static_cast<int64_t>(t.size()) + 1 > max_len)) {
      ++*dropped;
      continue;
    }
    set.lengths.push_back({s.size() + 1, t.size() + 1});
    set.src.push_back(std::move(s));
    set.tgt.push_back(std::move(t));
    set.src_text.push_back(corpus.source[i]);
    set.tgt_text.push_back(corpus.target[i]);
  }
  return set;
}

void sample_segmentations(EncodedSet& set, const text::SubwordPair& sp, int nbest, double alpha, uint64_t seed,
                          int64_t epoch, int64_t max_len) {
  const uint64_t epoch_seed =
      data::mix_seed(data::mix_seed(seed, kSubwordSamplingStream), static_cast<uint64_t>(epoch));
  const auto a = static_cast<float>(alpha);
  auto sample = [&](const text::SubwordModel& side, const std::string& text, uint64_t pair_seed) {
    Ids ids = side.sample_encode(text, nbest, a, pair_seed);
    if (static_cast<int64_t>(ids.size()) + 1 > max_len) return side.encode(text);
    return ids;
  };
  // Each pair independently (sample_encode is thread-safe and call-order free), so the
  // result does not depend on how the range is split. Cost per epoch, Multi30k's 29k pairs, 8k
  // vocabulary, one thread (`nmt train` gives LibTorch's pool 1, see tensor/threads.h): the
  // whole lattice 1.3 s, --subword-nbest 8 3.2 s, 64 19 s (SentencePiece's n-best search), BPE-
  // dropout 1.3 s; plain encoding 0.4 s; against a transformer-small epoch of ~5 minutes on 2 cores.
  at::parallel_for(0, static_cast<int64_t>(set.src_text.size()), 256, [&](int64_t begin, int64_t end) {
    for (auto i = static_cast<size_t>(begin); i < static_cast<size_t>(end); ++i) {
      const uint64_t pair_seed = data::mix_seed(epoch_seed, i);
      set.src[i] = sample(sp.source, set.src_text[i], pair_seed);
      set.tgt[i] = sample(sp.target, set.tgt_text[i], data::mix_seed(pair_seed, 1));
      set.lengths[i] = {set.src[i].size() + 1, set.tgt[i].size() + 1};
    }
  });
}

text::SubwordOptions subword_options(const TrainOptions& o, bool source_side) {
  text::SubwordOptions so;
  so.vocab_size = source_side && o.src_vocab_size > 0 ? o.src_vocab_size : o.vocab_size;
  so.model_type = enum_to_string(o.subword_type);
  so.seed = o.seed;
  so.hard_vocab_limit = false;
  return so;
}

std::vector<std::string> joint_sentences(const data::ParallelCorpus& corpus) {
  std::vector<std::string> joint;
  joint.reserve(corpus.size() * 2);
  joint.insert(joint.end(), corpus.source.begin(), corpus.source.end());
  joint.insert(joint.end(), corpus.target.begin(), corpus.target.end());
  return joint;
}

namespace {

std::string timestamp() {
  std::time_t now = std::time(nullptr);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%d %H:%M:%S", std::localtime(&now));
  return buf;
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
  if (!o.train_prefix.empty() == !o.train_tsv.empty())
    throw OptionError(std::vector<std::string>{"train_prefix", "train_tsv"}, "give exactly one of {0} PREFIX or {1} FILE");
  auto read = [&](const std::string& prefix, const std::string& tsv) {
    auto r = !prefix.empty() ? data::read_parallel(prefix, o.src_lang, o.tgt_lang, ro) : data::read_tsv(tsv, ro);
    print_warnings(r.report);
    return std::move(r.corpus);
  };
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

// SIGINT / SIGTERM ask the training loop to save a checkpoint and stop after the current
// update; a second signal kills at once (the default action is restored by the first).
volatile std::sig_atomic_t g_stop_signal = 0;
extern "C" void on_stop_signal(int sig) {
  g_stop_signal = sig;
  std::signal(sig, SIG_DFL);
}

class SignalScope {
 public:
  SignalScope() {
    g_stop_signal = 0;
    previous_int_ = std::signal(SIGINT, on_stop_signal);
    previous_term_ = std::signal(SIGTERM, on_stop_signal);
  }
  ~SignalScope() {
    std::signal(SIGINT, previous_int_);
    std::signal(SIGTERM, previous_term_);
  }

 private:
  void (*previous_int_)(int) = SIG_DFL;
  void (*previous_term_)(int) = SIG_DFL;
};

// ---- the output directory

// The saved run's identity against this one's: "" when they are the same run, otherwise what
// differs ("heads: 2 in config.json, 4 now"). The model section counts as a whole (minus the
// vocabulary sizes, which come from the subword model), so --heads 4 is another run.
struct IdentityDifference {
  std::string model;  // a model option differs (never resumable)
  std::string train;  // a training option differs (resumable with --resume)
};

std::string first_difference(const nlohmann::json& saved, const nlohmann::json& now) {
  for (const auto& [key, value] : now.items())
    if (!saved.contains(key) || saved[key] != value)
      return fmt::format("{}: {} in config.json, {} now", key, saved.contains(key) ? saved[key].dump() : "unset", value.dump());
  for (const auto& [key, value] : saved.items())
    if (!now.contains(key)) return fmt::format("{}: {} in config.json, unset now", key, value.dump());
  return "";
}

IdentityDifference run_difference(const fs::path& out, const TrainOptions& o) {
  const std::string path = (out / models::kConfigFile).string();
  const nlohmann::json saved = json_read::parse(read_small_file(path, kMaxJsonBytes), path);
  nlohmann::json saved_model, saved_train;
  try {
    // Through the option tables, so options added since (at their defaults) still match.
    saved_model = models::ModelConfig::from_json(json_read::object(saved, "model")).to_json();
    saved_train = TrainOptions::from_json(json_read::object(saved, "train")).to_json();
  } catch (const nlohmann::json::exception& e) {
    throw RuntimeError(fmt::format("{}: corrupt: {}", path, e.what()));
  } catch (const RuntimeError& e) {
    throw RuntimeError(fmt::format("{}: corrupt: {}", path, e.what()));
  }
  nlohmann::json now_model = o.model.to_json();
  for (const char* derived : {"src_vocab", "tgt_vocab", "shared_vocab"}) {
    saved_model.erase(derived);
    now_model.erase(derived);
  }
  return {first_difference(saved_model, now_model), first_difference(run_identity(saved_train), run_identity(o.to_json()))};
}

// Decides, with OUT locked, whether this run starts afresh (clearing what an earlier attempt
// of the same run left) or resumes, and refuses everything else: a directory nmt did not make,
// another run, a finished model without checkpoints. Returns true to resume.
bool claim_out_dir(const fs::path& out, const TrainOptions& o, const CheckpointManager& checkpoints) {
  std::vector<std::string> names;
  for (const auto& entry : fs::directory_iterator(out)) {
    const std::string name = entry.path().filename().string();
    if (name != DirectoryLock::kFileName) names.push_back(name);
  }
  if (names.empty()) return false;
  auto is_temporary = [](const std::string& name) { return name.size() > 4 && name.compare(name.size() - 4, 4, ".tmp") == 0; };
  auto only = [&](std::initializer_list<const char*> allowed) {
    return std::all_of(names.begin(), names.end(), [&](const std::string& n) {
      return is_temporary(n) || std::any_of(allowed.begin(), allowed.end(), [&](const char* a) { return n == a; });
    });
  };
  // config.json is a run's signature: nmt writes it before metrics.jsonl, checkpoints/ or
  // model.pt. Without it, only a run killed during set-up (spm.model) is ours to redo.
  if (!fs::exists(out / models::kConfigFile)) {
    if (only({models::kSubwordFile, models::kSourceSubwordFile})) return false;
    throw UsageError(fmt::format("{}: --out is not empty and holds no nmt run (no {}); choose a new --out", o.out_dir,
                                 models::kConfigFile));
  }
  const IdentityDifference diff = run_difference(out, o);
  if (!checkpoints.list().empty()) {
    if (!diff.model.empty())
      throw UsageError(fmt::format("{}: holds a run of another model ({}); a model option cannot change on the same --out, "
                                   "choose a new --out",
                                   o.out_dir, diff.model));
    if (o.resume || diff.train.empty()) return true;
    throw UsageError(fmt::format("{}: holds a run with other options ({}); use --resume to continue it with the new "
                                 "options or choose a new --out",
                                 o.out_dir, diff.train));
  }
  if (o.resume)
    throw UsageError(fmt::format("{}: --resume given but there is no complete checkpoint to resume from", o.out_dir));
  if (fs::exists(out / models::kWeightsFile))
    throw UsageError(fmt::format("{}: holds a trained model ({}) but no checkpoint to continue from; choose a new --out "
                                 "(or delete {} to train again)",
                                 o.out_dir, models::kWeightsFile, (out / models::kWeightsFile).string()));
  if (!diff.model.empty() || !diff.train.empty())
    throw UsageError(fmt::format("{}: holds another run ({}); choose a new --out", o.out_dir,
                                 diff.model.empty() ? diff.train : diff.model));
  if (!only({models::kConfigFile, models::kSubwordFile, models::kSourceSubwordFile, "metrics.jsonl", "checkpoints"}))
    throw UsageError(fmt::format("{}: holds files nmt did not write; choose a new --out", o.out_dir));
  // The same run, killed before its first checkpoint: it simply starts again.
  for (const char* f : {"metrics.jsonl", "checkpoints"}) fs::remove_all(out / f);
  return false;
}

// --init-from DIR: the directory holds a model whose architecture is this run's (vocabulary
// sizes aside: they come from DIR's subword models, which this run takes; joint or separate
// vocabularies must match, as the embeddings do). Checked before any work.
void check_init_from(const TrainOptions& o) {
  const fs::path dir(o.init_from);
  for (const char* f : {models::kConfigFile, models::kWeightsFile})  // the subword files once the layout is known
    if (!fs::is_regular_file(dir / f))
      throw OptionError("init_from", fmt::format(" {}: not a model directory (no {})", o.init_from, f));
  const std::string path = (dir / models::kConfigFile).string();
  const nlohmann::json saved = json_read::parse(read_small_file(path, kMaxJsonBytes), path);
  nlohmann::json theirs, ours = o.model.to_json();
  models::ModelConfig their_config;
  try {
    their_config = models::ModelConfig::from_json(json_read::object(saved, "model"));
    theirs = their_config.to_json();
  } catch (const RuntimeError& e) {
    throw RuntimeError(fmt::format("{}: corrupt: {}", path, e.what()));
  }
  if (their_config.shared_vocab == o.separate_vocab)
    throw OptionError("init_from", fmt::format(" {}: has {}; {}", o.init_from,
                                               their_config.shared_vocab ? "one joint vocabulary" : "separate vocabularies",
                                               their_config.shared_vocab ? "leave out --separate-vocab" : "give --separate-vocab"));
  for (const std::string& f : models::subword_files(their_config.shared_vocab))
    if (!fs::is_regular_file(dir / f))
      throw OptionError("init_from", fmt::format(" {}: not a model directory (no {})", o.init_from, f));
  for (const char* derived : {"src_vocab", "tgt_vocab", "shared_vocab"}) {
    theirs.erase(derived);
    ours.erase(derived);
  }
  if (const std::string diff = first_difference(theirs, ours); !diff.empty())
    throw OptionError("init_from", fmt::format(" {}: another architecture ({}); give the same model options (e.g. its "
                                               "--preset)",
                                               o.init_from, diff));
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

// OUT/metrics.jsonl, appended to line by line; every write checked (a full disk stops the run
// with an error naming the file instead of losing its records silently), and a line cut short
// taken back (AppendFile), so a resumed run appends after whole records.
class MetricsLog {
 public:
  explicit MetricsLog(const fs::path& path) : file_(path.string()) {}
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
  Logger(const TrainOptions& o, const TrainingState& state, viz::ProgressLine& progress, const fs::path& metrics_path,
         std::function<void(const std::string&)> log)
      : o_(o), state_(state), progress_(progress), metrics_(metrics_path), log_(std::move(log)) {}

  void update_done(const UpdateInfo& u) override {
    const TrainState& s = state_.saved;
    loss_sum_ += u.sums.loss.to(torch::kCPU, torch::kDouble);
    nll_sum_ += u.sums.nll.to(torch::kCPU, torch::kDouble);
    window_tokens_ += u.tgt_tokens;
    window_src_tokens_ += u.src_tokens;
    if (progress_.due()) {
      const double secs = std::chrono::duration<double>(Clock::now() - window_start_).count();
      const double in_epoch = std::chrono::duration<double>(Clock::now() - u.epoch_start).count();
      const double loss = window_tokens_ ? loss_sum_.item<double>() / window_tokens_ : 0.0;
      progress_.show(fmt::format("epoch {} | batch {}/{} | step {} | loss {:.3f} | tok/s {:.0f} | elapsed {} | epoch ETA {}",
                                 s.epoch, u.batch_end, u.plan_size, s.step, loss,
                                 (window_tokens_ + window_src_tokens_) / std::max(secs, 1e-9),
                                 viz::format_duration(state_.elapsed()),
                                 viz::eta_text(static_cast<double>(u.batch_end - u.epoch_first_batch),
                                               static_cast<double>(u.plan_size - u.epoch_first_batch), in_epoch)));
    }
    if (o_.log_every <= 0 || s.step % o_.log_every != 0) return;
    const double secs = std::chrono::duration<double>(Clock::now() - window_start_).count();
    const double loss = loss_sum_.item<double>() / window_tokens_, nll = nll_sum_.item<double>() / window_tokens_;
    const double tps = (window_tokens_ + window_src_tokens_) / std::max(secs, 1e-9);
    // On a terminal the live line shows this; the numbers still go to metrics.jsonl.
    if (!progress_.enabled())
      log_(fmt::format("step {} | epoch {} | batch {}/{} | loss {:.3f} | ppl {:.2f} | lr {:.3g} | tok/s {:.0f} | elapsed {}",
                       s.step, s.epoch, u.batch_end, u.plan_size, loss, std::exp(std::min(nll, 50.0)),
                       u.lr, tps, viz::format_duration(state_.elapsed())));
    metrics_.write({{"event", "train"}, {"step", s.step}, {"epoch", s.epoch}, {"train_loss", loss}, {"train_nll", nll},
                    {"lr", u.lr}, {"tokens_per_s", tps}, {"wall_time", state_.elapsed()}});
    loss_sum_.zero_();
    nll_sum_.zero_();
    window_tokens_ = window_src_tokens_ = 0;
    window_start_ = Clock::now();
  }

  void validation_done(const ValidationResult& v) override {
    const TrainState& s = state_.saved;
    metrics_.write(v.entry);
    log_(fmt::format("validation | step {} | epoch {} | loss {:.3f} | ppl {:.2f}{} | {}", s.step, s.epoch, v.loss, v.ppl,
                     o_.valid_bleu ? fmt::format(" | BLEU {:.2f}", v.bleu) : "",
                     v.improved ? "new best" : fmt::format("no improvement ({}/{})", s.bad_validations,
                                                           o_.patience > 0 ? std::to_string(o_.patience) : "-")));
  }

 private:
  const TrainOptions& o_;
  const TrainingState& state_;
  viz::ProgressLine& progress_;
  MetricsLog metrics_;
  std::function<void(const std::string&)> log_;
  torch::Tensor loss_sum_ = torch::zeros({}, torch::kDouble), nll_sum_ = torch::zeros({}, torch::kDouble);
  int64_t window_tokens_ = 0, window_src_tokens_ = 0;
  Clock::time_point window_start_ = Clock::now();
};

}  // namespace

namespace {
// --valid-after N: no scheduled validation before update N (the final weights are validated at
// the stop all the same).
bool validations_open(const TrainOptions& o, int64_t step) { return step >= o.valid_after; }

// Whether the update that just ended is followed by a validation (--valid-every N > 0): every N
// updates once validations are open. Checkpointer asks too, to save once.
bool validates_after_update(const TrainOptions& o, int64_t step) {
  return o.valid_every > 0 && step % o.valid_every == 0 && validations_open(o, step);
}
}  // namespace

// Validates every --valid-every updates (or at each epoch's end) from --valid-after on, keeps the
// best weights in OUT/model.pt and counts validations without improvement (--patience).
class Validator : public TrainingObserver {
 public:
  Validator(const TrainOptions& o, TrainingState& state, models::Seq2SeqModelImpl& model,
            const text::SubwordModel& target_subwords, const EncodedSet& valid, const torch::Device& device,
            const fs::path& out)
      : o_(o), state_(state), model_(model), target_subwords_(target_subwords), valid_(valid), device_(device), out_(out) {}

  void update_done(const UpdateInfo&) override {
    if (validates_after_update(o_, state_.saved.step)) validate();
  }
  void epoch_done() override {
    if (o_.valid_every <= 0 && validations_open(o_, state_.saved.step)) validate();
  }
  // The final weights are always validated (and saved).
  void stopped(StopReason reason) override {
    if (reason == StopReason::kSignal || reason == StopReason::kNonFinite) return;
    const auto& history = state_.saved.history;
    if (history.empty() || history.back()["step"] != state_.saved.step) validate();
  }

  void validate() {
    TrainState& s = state_.saved;
    ValidationResult v = measure();
    // Diverged weights give a NaN loss (and BLEU 0): never a "new best", never saved.
    if (!std::isfinite(v.loss) || !std::isfinite(v.bleu)) {
      const bool loss_bad = !std::isfinite(v.loss);
      const double bad = loss_bad ? v.loss : v.bleu;
      // NaN is shown as "nan" whatever its sign bit: x86's default NaN is negative, and fmt
      // prints it "-nan", which some CPUs' and kernels' results gave and others' did not.
      throw RuntimeError(fmt::format("validation at step {}: the {} is {}; training diverged (try a lower --lr or "
                                     "--clip-norm); the best weights so far and the last good checkpoint are kept in {}",
                                     s.step, loss_bad ? "loss" : "BLEU", std::isnan(bad) ? "nan" : fmt::format("{}", bad),
                                     o_.out_dir));
    }
    const double metric = o_.best_metric == BestMetric::kBleu ? v.bleu : -v.loss;
    v.improved = !s.has_best || metric > s.best;
    if (v.improved) {
      s.best = metric;
      s.has_best = true;
      s.bad_validations = 0;
      models::save_weights(model_, (out_ / models::kWeightsFile).string());
    } else {
      s.bad_validations += 1;
    }
    v.entry = {{"event", "valid"}, {"step", s.step}, {"epoch", s.epoch},
               {"val_loss", v.loss}, {"val_ppl", v.ppl}, {"wall_time", state_.elapsed()}};
    if (o_.valid_bleu) v.entry["val_bleu"] = v.bleu;
    s.history.push_back(v.entry);
    state_.validation_done(v);
  }

 private:
  // Loss and perplexity by teacher forcing, then BLEU of greedy (or beam) translations.
  ValidationResult measure() {
    ValidationResult r;
    const bool was_training = model_.is_training();
    model_.eval();
    {
      torch::InferenceMode guard;
      data::BatchOptions bo;
      bo.max_tokens = static_cast<size_t>(o_.max_tokens);
      bo.shuffle = false;
      torch::Tensor nll = torch::zeros({}, torch::kDouble);
      int64_t tokens = 0;
      for (const auto& idx : data::plan_batches(valid_.lengths, bo, 0)) {
        std::vector<const Ids*> s, t;
        for (size_t i : idx) {
          s.push_back(&valid_.src[i]);
          t.push_back(&valid_.tgt[i]);
        }
        Batch b = to_device(make_batch(s, t), device_);
        auto logits = model_.forward(b.src, b.src_mask, b.tgt_in).to(torch::kFloat);
        nll += label_smoothed_loss(logits, b.tgt_out, 0.0).nll.to(torch::kCPU, torch::kDouble);
        tokens += b.tgt_tokens;
      }
      r.loss = nll.item<double>() / static_cast<double>(std::max<int64_t>(tokens, 1));
      r.ppl = std::exp(std::min(r.loss, 50.0));
    }
    if (o_.valid_bleu) {
      decode::DecodeOptions d;
      d.max_len_b = o_.valid_max_len_b;
      std::vector<std::string> out;
      out.reserve(valid_.src.size());
      decode::SearchOptions search;
      search.beam = o_.valid_beam;
      for (const auto& n : decode::search(model_, valid_.src, d, *decode::make_search_strategy(search)))
        out.push_back(n.empty() ? std::string() : target_subwords_.decode(n.front().tokens));
      r.bleu = metrics::BleuScorer().corpus_score(out, {valid_.tgt_text}).score;
    }
    if (was_training) model_.train();
    return r;
  }

  const TrainOptions& o_;
  TrainingState& state_;
  models::Seq2SeqModelImpl& model_;
  const text::SubwordModel& target_subwords_;
  const EncodedSet& valid_;
  torch::Device device_;
  fs::path out_;
};

namespace {

// Saves a checkpoint after each validation, every --save-every updates, and at the stop.
class Checkpointer : public TrainingObserver {
 public:
  Checkpointer(const TrainOptions& o, TrainingState& state, CheckpointManager& checkpoints,
               models::Seq2SeqModelImpl& model, torch::optim::Adam& optimizer, bool resumed)
      : o_(o), state_(state), checkpoints_(checkpoints), model_(model), optimizer_(optimizer),
        saved_step_(resumed ? state.saved.step : -1) {}

  void update_done(const UpdateInfo&) override {
    const int64_t step = state_.saved.step;
    const bool validated = validates_after_update(o_, step);  // saved with the validation
    if (!validated && o_.save_every > 0 && step % o_.save_every == 0) save();
  }
  void validation_done(const ValidationResult&) override { save(); }
  // Interrupted: the state exactly where it is, so --resume continues bit for bit. Diverged:
  // the last good checkpoint stays the newest.
  void stopped(StopReason reason) override {
    if (reason != StopReason::kNonFinite && saved_step_ != state_.saved.step) save();
  }

 private:
  void save() {
    state_.saved.elapsed = state_.elapsed();
    checkpoints_.save(model_, optimizer_, state_.saved, o_.model.type);
    saved_step_ = state_.saved.step;
  }

  const TrainOptions& o_;
  TrainingState& state_;
  CheckpointManager& checkpoints_;
  models::Seq2SeqModelImpl& model_;
  torch::optim::Adam& optimizer_;
  int64_t saved_step_;
};

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
  fs::create_directories(out_, ec);
  if (ec) throw RuntimeError(fmt::format("{}: cannot create: {}", o_.out_dir, ec.message()));
  owner_.emplace(out_.string());
  resuming_ = claim_out_dir(out_, o_, checkpoints_);
}

// Every rank reads the corpus; rank 0 makes the subword model(s) and shares them.
void Trainer::prepare_data() {
  Corpora corpora = read_corpora(o_);
  if (is_main_ && !resuming_) make_subword_models(corpora.train);
  auto load = [&](const char* file) {
    const fs::path path = out_ / file;
    if (!dist_->active()) return text::SubwordModel::load(path.string());
    const std::string bytes = dist_->share_from_main(file, is_main_ ? read_file(path.string()) : "");
    return text::SubwordModel::load_from_serialized(bytes, is_main_ ? path.string() : fmt::format("rank 0's {}", file));
  };
  sp_.target = load(models::kSubwordFile);
  sp_.source = o_.separate_vocab ? load(models::kSourceSubwordFile) : sp_.target;
  o_.model.src_vocab = sp_.source.vocab_size();
  o_.model.tgt_vocab = sp_.target.vocab_size();
  o_.model.shared_vocab = !o_.separate_vocab;

  size_t dropped = 0;
  train_ = encode_set(corpora.train, sp_, o_.model.max_positions - 1, true, &dropped);
  if (dropped)
    log(fmt::format("warning: {} training pairs longer than {} subwords were left out", dropped, o_.model.max_positions - 1));
  // Only subword sampling reads the training text again (Multi30k's: 3.9 MB in 58k strings).
  if (o_.subword_alpha == 0) {
    train_.src_text = std::vector<std::string>();
    train_.tgt_text = std::vector<std::string>();
  }
  size_t unused = 0;
  valid_ = encode_set(corpora.valid, sp_, 0, false, &unused);
  log(fmt::format("data: {} training pairs, {} validation pairs, {}", train_.src.size(), valid_.src.size(),
                  o_.separate_vocab ? fmt::format("vocabularies {} (source) and {} (target)", sp_.source.vocab_size(),
                                                  sp_.target.vocab_size())
                                    : fmt::format("vocabulary {}", sp_.target.vocab_size())));
}

// Rank 0 of a fresh run: --init-from's subword models, or new ones trained on the training
// text: one joint model, or with --separate-vocab one per side.
void Trainer::make_subword_models(const data::ParallelCorpus& train) {
  if (!o_.init_from.empty()) {
    // The source model's subwords: its embeddings are indexed by them.
    const std::vector<std::string> files = models::subword_files(/*shared_vocab=*/!o_.separate_vocab);
    for (const std::string& f : files)
      write_file_atomic((out_ / f).string(), read_file((fs::path(o_.init_from) / f).string()));
    log(fmt::format("starting from {}: its {} and {}", o_.init_from, fmt::join(files, ", "), models::kWeightsFile));
    return;
  }
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
  if (g_stop_signal) stop = StopReason::kSignal;
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

// Before the epoch's batch plan, which is made from the sampled lengths; on resume the
// interrupted epoch's sampling is redone, so its plan and batches are the same.
void Trainer::sample_epoch_data() {
  const auto start = Clock::now();
  sample_segmentations(train_, sp_, o_.subword_nbest, o_.subword_alpha, o_.seed, state_->saved.epoch,
                       o_.model.max_positions - 1);
  if (logged_sampling_time_) return;
  logged_sampling_time_ = true;
  log(fmt::format(
      "subword sampling (--subword-alpha {}, --subword-nbest {}): {} training pairs re-segmented in {:.2f} s "
      "per epoch",
      o_.subword_alpha, o_.subword_nbest, train_.src.size(),
      std::chrono::duration<double>(Clock::now() - start).count()));
}

// An update takes `per_update` consecutive batches of the epoch's plan (the plan is a pure
// function of seed and epoch, so every rank computes the same one): rank r takes the r-th run
// of accum_steps of them. Every rank also knows the update's total target tokens from the
// plan, which is what makes the summed gradient exactly the combined batch's.
StopReason Trainer::run_epoch() {
  TrainState& state = state_->saved;
  if (o_.max_epochs > 0 && state.epoch > o_.max_epochs) return StopReason::kMaxEpochs;
  if (o_.subword_alpha > 0) sample_epoch_data();
  data::BatchOptions bo;
  bo.max_tokens = static_cast<size_t>(o_.max_tokens);
  bo.seed = o_.seed;
  bo.shuffle = true;
  const auto plan = data::plan_batches(train_.lengths, bo, static_cast<uint64_t>(state.epoch));
  const size_t per_update = static_cast<size_t>(o_.accum_steps) * static_cast<size_t>(dist_->world_size());
  const SumAcrossProcesses sum_across_processes =
      dist_->active() ? SumAcrossProcesses([this](const std::vector<torch::Tensor>& t) { dist_->all_reduce_sum(t); })
                      : SumAcrossProcesses();
  UpdateInfo info;
  info.plan_size = plan.size();
  info.epoch_start = Clock::now();
  info.epoch_first_batch = static_cast<size_t>(state.batch_in_epoch);
  for (size_t first = static_cast<size_t>(state.batch_in_epoch); first < plan.size(); first += per_update) {
    if (const StopReason stop = stop_before_update(); stop != StopReason::kNone) return stop;
    const size_t end = std::min(plan.size(), first + per_update);
    int64_t update_tgt_tokens = 0, update_src_tokens = 0;
    for (size_t b = first; b < end; ++b)
      for (size_t i : plan[b]) {
        update_tgt_tokens += static_cast<int64_t>(train_.lengths[i].tgt);
        update_src_tokens += static_cast<int64_t>(train_.lengths[i].src);
      }
    std::vector<Batch> micro_batches;
    for (int64_t k = 0; k < o_.accum_steps; ++k) {
      const size_t b = first + static_cast<size_t>(dist_->rank() * o_.accum_steps + k);
      if (b >= end) break;
      std::vector<const Ids*> s, t;
      s.reserve(plan[b].size());
      t.reserve(plan[b].size());
      for (size_t i : plan[b]) {
        s.push_back(&train_.src[i]);
        t.push_back(&train_.tgt[i]);
      }
      micro_batches.push_back(to_device(make_batch(s, t), device_));
    }
    const double lr = learning_rate(o_, state.step + 1, budget_progress_before_update());
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
    info.batch_end = end;
    state_->update_done(info);
  }
  state.epoch += 1;
  state.batch_in_epoch = 0;
  state_->epoch_done();
  return StopReason::kNone;
}

TrainSummary Trainer::finish(StopReason reason) {
  const TrainState& state = state_->saved;
  TrainSummary summary;
  summary.signal = static_cast<int>(g_stop_signal);
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

TrainSummary run_training(const TrainOptions& options) { return Trainer(options).run(); }

}  // namespace nmt::train
