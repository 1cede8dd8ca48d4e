#include "nmt/train/trainer.h"

#include <dlfcn.h>

#include <algorithm>
#include <chrono>
#include <csignal>
#include <cmath>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <limits>
#include <filesystem>
#include <fstream>
#include <optional>
#include <type_traits>
#include <sstream>

#include <ATen/CPUGeneratorImpl.h>
#include <fmt/format.h>
#include <torch/torch.h>

#include "nmt/data/batching.h"
#include "nmt/data/corpus.h"
#include "nmt/decode/beam.h"
#include "nmt/decode/greedy.h"
#include "nmt/metrics/bleu.h"
#include "nmt/models/model_io.h"
#include "nmt/tensor/batch.h"
#include "nmt/tensor/device.h"
#include "nmt/text/subword.h"
#include "nmt/train/checkpoint.h"
#include "nmt/train/distributed.h"
#include "nmt/train/loss.h"
#include "nmt/train/step.h"
#include "nmt/util/error.h"
#include "nmt/util/io.h"
#include "nmt/util/json_read.h"
#include "nmt/util/lock.h"
#include "nmt/viz/progress.h"

namespace nmt::train {
namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

void set_threads(int threads) {
  if (threads <= 0) return;
  // Matrix products dominate and run in OpenBLAS, which keeps its own thread pool. LibTorch's
  // OpenMP workers spin after each parallel region and steal those cores, so when OpenBLAS is
  // present it gets the N threads and LibTorch's intra-op pool 1 (measured on 2 cores,
  // transformer-small training: 1650 tok/s vs 1350 with 2+2 and 1050 with LibTorch 2 +
  // OpenBLAS 1). NMT_TORCH_THREADS overrides LibTorch's share. Found at run time: the BLAS
  // may not be OpenBLAS, and then LibTorch gets all N threads.
  using SetThreads = void (*)(int);
  auto openblas = reinterpret_cast<SetThreads>(dlsym(RTLD_DEFAULT, "openblas_set_num_threads"));
  int torch_threads = openblas ? 1 : threads;
  if (const char* env = std::getenv("NMT_TORCH_THREADS"); env && std::atoi(env) > 0) torch_threads = std::atoi(env);
  torch::set_num_threads(torch_threads);
  if (openblas) openblas(threads);
}

namespace {

std::string timestamp() {
  std::time_t now = std::time(nullptr);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%d %H:%M:%S", std::localtime(&now));
  return buf;
}

struct EncodedSet {
  std::vector<Ids> src, tgt;
  std::vector<std::string> src_text, tgt_text;  // raw sentences (validation references)
  std::vector<data::ExampleLength> lengths;     // with EOS / BOS added
};

EncodedSet encode_set(const data::ParallelCorpus& corpus, const text::SubwordModel& sp, int64_t max_len,
                      bool drop_long, size_t* dropped) {
  EncodedSet set;
  for (size_t i = 0; i < corpus.size(); ++i) {
    Ids s = sp.encode(corpus.source[i]);
    Ids t = sp.encode(corpus.target[i]);
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
    throw UsageError("give exactly one of --train PREFIX or --train-tsv FILE");
  if (!o.train_prefix.empty()) {
    auto r = data::read_parallel(o.train_prefix, o.src_lang, o.tgt_lang, ro);
    print_warnings(r.report);
    c.train = std::move(r.corpus);
  } else {
    auto r = data::read_tsv(o.train_tsv, ro);
    print_warnings(r.report);
    c.train = std::move(r.corpus);
  }
  if (!o.valid_prefix.empty()) {
    auto r = data::read_parallel(o.valid_prefix, o.src_lang, o.tgt_lang, ro);
    print_warnings(r.report);
    c.valid = std::move(r.corpus);
  } else if (!o.valid_tsv.empty()) {
    auto r = data::read_tsv(o.valid_tsv, ro);
    print_warnings(r.report);
    c.valid = std::move(r.corpus);
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

struct ValidResult {
  double loss = 0;  // nll per target token
  double ppl = 0;
  double bleu = 0;
};

ValidResult validate(models::Seq2SeqModelImpl& model, const text::SubwordModel& sp, const EncodedSet& valid,
                     const TrainOptions& o, const torch::Device& device) {
  ValidResult r;
  const bool was_training = model.is_training();
  model.eval();
  {
    torch::InferenceMode guard;
    data::BatchOptions bo;
    bo.max_tokens = static_cast<size_t>(o.max_tokens);
    bo.shuffle = false;
    torch::Tensor nll = torch::zeros({}, torch::kDouble);
    int64_t tokens = 0;
    for (const auto& idx : data::plan_batches(valid.lengths, bo, 0)) {
      std::vector<const Ids*> s, t;
      for (size_t i : idx) {
        s.push_back(&valid.src[i]);
        t.push_back(&valid.tgt[i]);
      }
      Batch b = to_device(make_batch(s, t), device);
      auto logits = model.forward(b.src, b.src_mask, b.tgt_in).to(torch::kFloat);
      nll += label_smoothed_loss(logits, b.tgt_out, 0.0).nll.to(torch::kCPU, torch::kDouble);
      tokens += b.tgt_tokens;
    }
    r.loss = nll.item<double>() / static_cast<double>(std::max<int64_t>(tokens, 1));
    r.ppl = std::exp(std::min(r.loss, 50.0));
  }
  if (o.valid_bleu) {
    decode::DecodeOptions d;
    d.max_len_b = o.valid_max_len_b;
    std::vector<std::string> out;
    out.reserve(valid.src.size());
    decode::BeamOptions beam;
    beam.beam = o.valid_beam;
    for (const auto& n : decode::search(model, valid.src, d, *decode::make_search_strategy(beam)))
      out.push_back(n.empty() ? std::string() : sp.decode(n.front().tokens));
    r.bleu = metrics::BleuScorer().corpus_score(out, {valid.tgt_text}).score;
  }
  if (was_training) model.train();
  return r;
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

// Training options that define the run (everything but the stopping limits and logging):
// re-running the same command on the same --out resumes only when these are unchanged.
nlohmann::json run_identity(const nlohmann::json& train) {
  nlohmann::json j = train;
  for (const char* key : {"max_epochs", "max_steps", "max_time_s", "patience", "log_every", "threads", "keep_last",
                          "save_every", "max_bad_steps", "device"})
    j.erase(key);
  return j;
}

// OUT/metrics.jsonl, appended to line by line; every write checked (a full disk stops the run
// with an error naming the file instead of losing its records silently).
class MetricsLog {
 public:
  explicit MetricsLog(const fs::path& path) : path_(path.string()) {
    file_ = std::fopen(path_.c_str(), "ab");
    if (!file_) throw RuntimeError(fmt::format("{}: cannot open for appending: {}", path_, std::strerror(errno)));
  }
  ~MetricsLog() {
    if (file_) std::fclose(file_);
  }
  MetricsLog(const MetricsLog&) = delete;
  MetricsLog& operator=(const MetricsLog&) = delete;
  void write(const nlohmann::json& j) {
    const std::string line = j.dump() + "\n";
    errno = 0;
    if (std::fwrite(line.data(), 1, line.size(), file_) != line.size() || std::fflush(file_) != 0)
      throw RuntimeError(fmt::format("{}: cannot write: {}", path_, std::strerror(errno ? errno : EIO)));
  }

 private:
  std::string path_;
  std::FILE* file_ = nullptr;
};

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
    // Through the option structs, so options added since (at their defaults) still match.
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
    if (only({models::kSubwordFile})) return false;
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
  if (!only({models::kConfigFile, models::kSubwordFile, "metrics.jsonl", "checkpoints"}))
    throw UsageError(fmt::format("{}: holds files nmt did not write; choose a new --out", o.out_dir));
  // The same run, killed before its first checkpoint: it simply starts again.
  for (const char* f : {"metrics.jsonl", "checkpoints"}) fs::remove_all(out / f);
  return false;
}

// Every option checked before any work (SentencePiece training can take minutes): one line
// naming the flag, exit 2. NaN passes every `<`/`>` comparison, so ranges are written as
// !(lo <= x && x <= hi).
void validate_options(const TrainOptions& o) {
  auto flag = [](const std::string& key) {
    std::string f = "--" + key;
    std::replace(f.begin(), f.end(), '_', '-');
    return f == "--type" ? std::string("--model") : f;
  };
  auto real = [&](const char* key, double v, double lo, double hi, bool lo_open = false) {
    if (!std::isfinite(v) || v < lo || v > hi || (lo_open && v == lo))
      throw UsageError(fmt::format("{} is {}, must be a number {} {} and <= {}", flag(key), v, lo_open ? ">" : ">=", lo, hi));
  };
  auto whole = [&](const char* key, int64_t v, int64_t lo, int64_t hi) {
    if (v < lo || v > hi) throw UsageError(fmt::format("{} is {}, must be between {} and {}", flag(key), v, lo, hi));
  };
  constexpr double kHuge = std::numeric_limits<double>::max();
  constexpr int64_t kMany = int64_t{1} << 40;
  real("lr", o.lr, 0, kHuge, true);
  real("weight_decay", o.weight_decay, 0, kHuge);
  real("label_smoothing", o.label_smoothing, 0, 0.999);
  real("clip_norm", o.clip_norm, 0, kHuge);
  real("max_time", o.max_time_s, 0, kHuge);
  whole("warmup", o.warmup, 0, kMany);
  whole("max_tokens", o.max_tokens, 1, 100'000'000);
  whole("accum_steps", o.accum_steps, 1, 1 << 16);
  whole("max_epochs", o.max_epochs, 0, kMany);
  whole("max_steps", o.max_steps, 0, kMany);
  whole("patience", o.patience, 0, kMany);
  whole("valid_every", o.valid_every, 0, kMany);
  whole("log_every", o.log_every, 0, kMany);
  whole("valid_beam", o.valid_beam, 1, 1000);
  whole("save_every", o.save_every, 0, kMany);
  whole("keep_last", o.keep_last, 0, 1'000'000);
  whole("max_bad_steps", o.max_bad_steps, 1, kMany);
  whole("vocab_size", o.vocab_size, 5, models::kMaxVocab);
  whole("max_chars", static_cast<int64_t>(std::min<size_t>(o.max_chars, kMany + 1)), 1, kMany);
  whole("threads", o.threads, 0, 4096);
  try {
    o.model.validate(flag, /*check_vocab=*/false);
  } catch (const RuntimeError& e) {
    throw UsageError(e.what());
  }
}

// Stopping must be decided identically on every process, or one would wait forever in a
// collective the others never enter: each process proposes its reason and the largest code
// wins (a signal on any process stops all of them).
enum StopCode : int64_t { kKeepGoing = 0, kMaxSteps = 1, kMaxTime = 2, kPatience = 3, kSignal = 4 };
const char* stop_name(int64_t code) {
  switch (code) {
    case kMaxSteps: return "max-steps";
    case kMaxTime: return "max-time";
    case kPatience: return "patience";
    case kSignal: return "signal";
    default: return "";
  }
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

}  // namespace

TrainSummary run_training(const TrainOptions& o_in) {
  TrainOptions o = o_in;
  if (o.out_dir.empty()) throw UsageError("--out DIR is required");
  validate_options(o);
  if (o.best_metric != "bleu" && o.best_metric != "loss") throw UsageError("--best-metric must be bleu or loss");
  if (o.lr_schedule != "inverse-sqrt" && o.lr_schedule != "constant")
    throw UsageError("--lr-schedule must be inverse-sqrt or constant");
  if (o.best_metric == "bleu" && !o.valid_bleu) o.best_metric = "loss";
  const DistOptions dist_options = o.dist.resolved();
  torch::Device device = resolve_device(o.device);
  // One GPU per process: "cuda" in a multi-process job means the GPU of this LOCAL_RANK.
  if (device.is_cuda() && dist_options.world_size > 1 && (o.device.empty() || o.device == "cuda"))
    device = torch::Device(torch::kCUDA, static_cast<c10::DeviceIndex>(dist_options.local_rank));
  if (o.bf16 && !device.is_cuda()) throw UsageError("--bf16 needs a CUDA device (--device cuda)");
  const fs::path out(o.out_dir);
  CheckpointManager checkpoints(out, static_cast<int>(o.keep_last));
  SignalScope signals;  // from the start: a signal during set-up stops before the first update

  // Joined first, so that when rank 0 refuses the options or the output directory below, its
  // exit closes the rendezvous and the other ranks fail at once instead of waiting.
  Distributed dist(dist_options, device);
  const bool is_main = dist.is_main();

  // Resume when asked, or when the same command is run again on the same --out. Only rank 0
  // looks at --out (and only rank 0 ever writes there): the other ranks may be on machines
  // that cannot see it.
  bool resuming = false;
  std::optional<DirectoryLock> owner;  // held until training ends: one run per directory at a time
  if (is_main) {
    if (fs::exists(out) && !fs::is_directory(out)) throw UsageError(fmt::format("{}: --out exists and is not a directory", o.out_dir));
    std::error_code ec;
    fs::create_directories(out, ec);
    if (ec) throw RuntimeError(fmt::format("{}: cannot create: {}", o.out_dir, ec.message()));
    owner.emplace(out.string());
    resuming = claim_out_dir(out, o, checkpoints);
  }
  set_threads(o.threads);
  torch::manual_seed(o.seed);

  // On a terminal: a live progress line per epoch plus permanent lines for events and
  // validations. Redirected: plain timestamped lines at --log-every. Only rank 0 talks.
  viz::ProgressLine progress(!o.quiet && is_main && viz::is_terminal(stderr));
  auto log = [&](const std::string& line) {
    progress.clear();
    if (!o.quiet && is_main) std::fprintf(stderr, "[%s] %s\n", timestamp().c_str(), line.c_str());
  };

  // ---- data and subwords (every rank reads the corpus; rank 0 makes the subword model)
  Corpora corpora = read_corpora(o);
  const fs::path sp_path = out / models::kSubwordFile;
  if (is_main && !resuming) {
    std::vector<std::string> joint;
    joint.reserve(corpora.train.size() * 2);
    joint.insert(joint.end(), corpora.train.source.begin(), corpora.train.source.end());
    joint.insert(joint.end(), corpora.train.target.begin(), corpora.train.target.end());
    text::SubwordOptions so;
    so.vocab_size = o.vocab_size;
    so.model_type = o.subword_type;
    so.seed = o.seed;
    so.hard_vocab_limit = false;
    log(fmt::format("training a {} SentencePiece model (vocab {}) on {} sentences", o.subword_type, o.vocab_size,
                    joint.size()));
    text::SubwordModel::train(joint, so, sp_path.string());
  }
  text::SubwordModel sp;
  if (!dist.active()) {
    sp = text::SubwordModel::load(sp_path.string());
  } else {
    const std::string sp_bytes = dist.share_from_main("spm.model", is_main ? read_file(sp_path.string()) : "");
    sp = text::SubwordModel::load_from_serialized(sp_bytes, is_main ? sp_path.string() : "rank 0's spm.model");
  }
  o.model.src_vocab = o.model.tgt_vocab = sp.vocab_size();
  o.model.shared_vocab = true;

  size_t dropped = 0;
  EncodedSet train = encode_set(corpora.train, sp, o.model.max_positions - 1, true, &dropped);
  if (dropped)
    log(fmt::format("warning: {} training pairs longer than {} subwords were left out", dropped, o.model.max_positions - 1));
  size_t unused = 0;
  EncodedSet valid = encode_set(corpora.valid, sp, 0, false, &unused);
  log(fmt::format("data: {} training pairs, {} validation pairs, vocabulary {}", train.src.size(), valid.src.size(),
                  sp.vocab_size()));

  const nlohmann::json config = {{"format", 1}, {"nmt_version", "0.1.0"}, {"model", o.model.to_json()}, {"train", o.to_json()}};
  if (is_main) write_file_atomic((out / models::kConfigFile).string(), config.dump(2) + "\n");

  // ---- model and optimizer
  models::Seq2SeqModel model = models::make_model(o.model);
  model->to(device);
  auto params = model->parameters();
  torch::optim::Adam optimizer = make_optimizer(params, o);
  TrainState state;
  if (resuming) {
    const fs::path latest = checkpoints.list().back();
    state = CheckpointManager::load(latest, *model, optimizer, o.model.type, device);
    if (state.world_size != dist.world_size() || state.accum_steps != o.accum_steps)
      throw UsageError(fmt::format("{}: checkpoint made with {} process(es) × --accum-steps {}; resume it with the same "
                                   "(now {} × {})",
                                   latest.string(), state.world_size, state.accum_steps, dist.world_size(), o.accum_steps));
    log(fmt::format("resumed from {} at step {} (epoch {}, batch {})", latest.string(), state.step, state.epoch,
                    state.batch_in_epoch));
  }
  state.world_size = dist.world_size();
  state.accum_steps = o.accum_steps;
  if (dist.active()) {
    // Rank 0's weights (fresh or resumed), optimizer moments and position go to every rank.
    // (The models' buffers, e.g. the positional table, are computed, not learned.)
    dist.broadcast(params);
    const nlohmann::json start = {{"resuming", resuming}, {"state", state.to_json()}};
    const nlohmann::json shared = nlohmann::json::parse(dist.share_from_main("start", is_main ? start.dump() : ""));
    resuming = shared.at("resuming").get<bool>();
    if (!is_main) state = TrainState::from_json(shared.at("state"));
    if (resuming) {
      const std::string bytes = dist.share_from_main("optimizer", is_main ? optimizer_bytes(optimizer) : "");
      if (!is_main) load_optimizer_bytes(optimizer, bytes, device);
    }
    // Dropout: rank 0 keeps the seeded (or resumed) generator, so a 1-process run is
    // unchanged; the other ranks draw their own masks.
    if (!is_main) torch::manual_seed(o.seed + 1000003ULL * static_cast<uint64_t>(dist.rank()) + static_cast<uint64_t>(state.step));
  }
  log(fmt::format("model: {} with {} parameters on {}; --threads {} (LibTorch intra-op {}){}", o.model.type,
                  models::count_parameters(*model), device.str(), o.threads, torch::get_num_threads(),
                  dist.active() || o.accum_steps > 1
                      ? fmt::format("; {} process(es) × {} batch(es) per update", dist.world_size(), o.accum_steps)
                      : ""));
  std::optional<MetricsLog> metrics;
  if (is_main) metrics.emplace(out / "metrics.jsonl");

  data::BatchOptions bo;
  bo.max_tokens = static_cast<size_t>(o.max_tokens);
  bo.seed = o.seed;
  bo.shuffle = true;

  const double elapsed_before = state.elapsed;
  const auto start = Clock::now();
  auto elapsed = [&] { return elapsed_before + std::chrono::duration<double>(Clock::now() - start).count(); };
  std::string stop_reason;

  torch::Tensor loss_sum = torch::zeros({}, torch::kDouble), nll_sum = torch::zeros({}, torch::kDouble);
  int64_t window_tokens = 0, window_src_tokens = 0, bad_in_a_row = 0;
  auto window_start = Clock::now();
  int64_t saved_step = resuming ? state.step : -1;

  auto save = [&] {
    if (!is_main) return;
    state.elapsed = elapsed();
    checkpoints.save(*model, optimizer, state, o.model.type);
    saved_step = state.step;
  };

  // Rank 0 only: the other ranks meanwhile wait at the next update's first collective.
  auto run_validation = [&] {
    if (!is_main) return;
    ValidResult v = validate(*model, sp, valid, o, device);
    // Diverged weights give a NaN loss (and BLEU 0): never a "new best", never saved.
    if (!std::isfinite(v.loss) || !std::isfinite(v.bleu))
      throw RuntimeError(fmt::format("validation at step {}: the loss is {}; training diverged (try a lower --lr or "
                                     "--clip-norm); the best weights so far and the last good checkpoint are kept in {}",
                                     state.step, v.loss, o.out_dir));
    const double metric = o.best_metric == "bleu" ? v.bleu : -v.loss;
    const bool improved = !state.has_best || metric > state.best;
    if (improved) {
      state.best = metric;
      state.has_best = true;
      state.bad_validations = 0;
      models::save_weights(*model, (out / models::kWeightsFile).string());
    } else {
      state.bad_validations += 1;
    }
    nlohmann::json entry = {{"event", "valid"}, {"step", state.step}, {"epoch", state.epoch},
                            {"val_loss", v.loss}, {"val_ppl", v.ppl}, {"wall_time", elapsed()}};
    if (o.valid_bleu) entry["val_bleu"] = v.bleu;
    state.history.push_back(entry);
    metrics->write(entry);
    log(fmt::format("validation | step {} | epoch {} | loss {:.3f} | ppl {:.2f}{} | {}", state.step, state.epoch, v.loss,
                    v.ppl, o.valid_bleu ? fmt::format(" | BLEU {:.2f}", v.bleu) : "",
                    improved ? "new best" : fmt::format("no improvement ({}/{})", state.bad_validations,
                                                          o.patience > 0 ? std::to_string(o.patience) : "-")));
    save();
  };

  // An update takes `per_update` consecutive batches of the epoch's plan (the plan is a pure
  // function of seed and epoch, so every rank computes the same one): rank r takes the r-th
  // run of accum_steps of them. Every rank also knows the update's total target tokens from
  // the plan, which is what makes the summed gradient exactly the combined batch's.
  const size_t per_update = static_cast<size_t>(o.accum_steps) * static_cast<size_t>(dist.world_size());
  const SumAcrossProcesses sum_across_processes =
      dist.active() ? SumAcrossProcesses([&dist](const std::vector<torch::Tensor>& t) { dist.all_reduce_sum(t); })
                    : SumAcrossProcesses();
  model->train();
  while (stop_reason.empty()) {
    if (o.max_epochs > 0 && state.epoch > o.max_epochs) {
      stop_reason = "max-epochs";
      break;
    }
    const auto plan = data::plan_batches(train.lengths, bo, static_cast<uint64_t>(state.epoch));
    const auto epoch_start = Clock::now();
    const size_t epoch_first_batch = static_cast<size_t>(state.batch_in_epoch);
    for (size_t first = static_cast<size_t>(state.batch_in_epoch); first < plan.size(); first += per_update) {
      // Stopping is decided before each update, so a run resumed at its limit stops at once.
      int64_t stop = kKeepGoing;
      if (g_stop_signal) stop = kSignal;
      else if (o.patience > 0 && state.bad_validations >= o.patience) stop = kPatience;
      else if (o.max_steps > 0 && state.step >= o.max_steps) stop = kMaxSteps;
      else if (o.max_time_s > 0 && elapsed() >= o.max_time_s) stop = kMaxTime;
      stop = dist.all_reduce_max(stop);
      if (stop != kKeepGoing) {
        stop_reason = stop_name(stop);
        break;
      }
      const size_t end = std::min(plan.size(), first + per_update);
      int64_t update_tgt_tokens = 0, update_src_tokens = 0;
      for (size_t b = first; b < end; ++b)
        for (size_t i : plan[b]) {
          update_tgt_tokens += static_cast<int64_t>(train.lengths[i].tgt);
          update_src_tokens += static_cast<int64_t>(train.lengths[i].src);
        }
      std::vector<Batch> micro_batches;
      for (int64_t k = 0; k < o.accum_steps; ++k) {
        const size_t b = first + static_cast<size_t>(dist.rank() * o.accum_steps + k);
        if (b >= end) break;
        std::vector<const Ids*> s, t;
        s.reserve(plan[b].size());
        t.reserve(plan[b].size());
        for (size_t i : plan[b]) {
          s.push_back(&train.src[i]);
          t.push_back(&train.tgt[i]);
        }
        micro_batches.push_back(to_device(make_batch(s, t), device));
      }
      const StepResult step = train_step(*model, optimizer, params, micro_batches, update_tgt_tokens, o,
                                         learning_rate(o, state.step + 1), sum_across_processes);
      const LossSums& sums = step.sums;
      state.batch_in_epoch = static_cast<int64_t>(end);
      if (!step.applied) {
        state.skipped_steps += 1;
        bad_in_a_row += 1;
        log(fmt::format("warning: non-finite loss or gradient at update {}: skipped ({} in a row, {} in all)",
                        state.step + 1, bad_in_a_row, state.skipped_steps));
        if (bad_in_a_row >= o.max_bad_steps) {
          stop_reason = "non-finite";
          break;
        }
        continue;
      }
      bad_in_a_row = 0;
      state.step += 1;
      loss_sum += sums.loss.to(torch::kCPU, torch::kDouble);
      nll_sum += sums.nll.to(torch::kCPU, torch::kDouble);
      window_tokens += update_tgt_tokens;
      window_src_tokens += update_src_tokens;

      if (progress.due()) {
        const double secs = std::chrono::duration<double>(Clock::now() - window_start).count();
        const double in_epoch = std::chrono::duration<double>(Clock::now() - epoch_start).count();
        const double loss = window_tokens ? loss_sum.item<double>() / window_tokens : 0.0;
        progress.show(fmt::format("epoch {} | batch {}/{} | step {} | loss {:.3f} | tok/s {:.0f} | elapsed {} | epoch ETA {}",
                                  state.epoch, end, plan.size(), state.step, loss,
                                  (window_tokens + window_src_tokens) / std::max(secs, 1e-9), viz::format_duration(elapsed()),
                                  viz::eta_text(static_cast<double>(end - epoch_first_batch),
                                                static_cast<double>(plan.size() - epoch_first_batch), in_epoch)));
      }
      if (o.log_every > 0 && state.step % o.log_every == 0) {
        const double secs = std::chrono::duration<double>(Clock::now() - window_start).count();
        const double loss = loss_sum.item<double>() / window_tokens, nll = nll_sum.item<double>() / window_tokens;
        const double tps = (window_tokens + window_src_tokens) / std::max(secs, 1e-9);
        // On a terminal the live line shows this; the numbers still go to metrics.jsonl.
        if (!progress.enabled())
          log(fmt::format("step {} | epoch {} | batch {}/{} | loss {:.3f} | ppl {:.2f} | lr {:.3g} | tok/s {:.0f} | elapsed {}",
                        state.step, state.epoch, end, plan.size(), loss, std::exp(std::min(nll, 50.0)),
                        learning_rate(o, state.step), tps, viz::format_duration(elapsed())));
        if (metrics)
          metrics->write({{"event", "train"}, {"step", state.step}, {"epoch", state.epoch}, {"train_loss", loss},
                          {"train_nll", nll}, {"lr", learning_rate(o, state.step)}, {"tokens_per_s", tps},
                          {"wall_time", elapsed()}});
        loss_sum.zero_();
        nll_sum.zero_();
        window_tokens = window_src_tokens = 0;
        window_start = Clock::now();
      }
      if (o.valid_every > 0 && state.step % o.valid_every == 0) run_validation();
      else if (o.save_every > 0 && state.step % o.save_every == 0) save();
    }
    if (stop_reason.empty()) {
      state.epoch += 1;
      state.batch_in_epoch = 0;
      if (o.valid_every <= 0) run_validation();
    }
  }

  TrainSummary summary;
  summary.signal = static_cast<int>(g_stop_signal);
  if (stop_reason == "signal") {
    // Interrupted: keep the state exactly where it is, so --resume continues bit for bit.
    if (saved_step != state.step) save();
    if (summary.signal)
      log(fmt::format("interrupted by signal {} at step {}; checkpoint saved, continue with --resume", summary.signal,
                      state.step));
    else
      log(fmt::format("another rank was interrupted by a signal at step {}; checkpoint saved, continue with --resume",
                      state.step));
  } else if (stop_reason == "non-finite") {
    log(fmt::format("stopping: {} consecutive updates had a non-finite loss or gradient; the last good checkpoint "
                    "and the best weights are kept",
                    bad_in_a_row));
  } else if (!is_main) {
    // Rank 0 validates and saves the final weights alone.
  } else if (state.history.empty() || state.history.back()["step"] != state.step) {
    run_validation();  // the final weights are always validated (and saved)
  } else if (saved_step != state.step) {
    save();
  }
  summary.steps = state.step;
  summary.epochs = state.epoch;
  summary.best_metric = state.best;
  summary.seconds = elapsed();
  summary.skipped_steps = state.skipped_steps;
  summary.stop_reason = stop_reason;
  for (const auto& h : state.history) {
    if (h.contains("val_bleu")) summary.best_valid_bleu = std::max(summary.best_valid_bleu, h["val_bleu"].get<double>());
    const double l = h["val_loss"].get<double>();
    if (summary.best_valid_loss == 0 || l < summary.best_valid_loss) summary.best_valid_loss = l;
  }
  if (stop_reason != "signal" && stop_reason != "non-finite")
    log(fmt::format("stopped ({}) after {} steps, {}; best validation {} {:.3f}; model in {}", stop_reason, state.step,
                    viz::format_duration(summary.seconds), o.best_metric, o.best_metric == "bleu" ? state.best : -state.best,
                    o.out_dir));
  if (stop_reason == "non-finite")
    throw RuntimeError(fmt::format("training diverged: {} consecutive non-finite updates (see {}/metrics.jsonl)", bad_in_a_row,
                                   o.out_dir));
  return summary;
}

}  // namespace nmt::train
