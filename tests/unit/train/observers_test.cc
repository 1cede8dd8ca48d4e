// The training observers (lib/nmt/train/observers.h) and the stop signals, each driven in this
// process by firing a TrainingState's events as the trainer does (step counted, then
// update_done), on a tiny model: what the logger prints and records, when the validator
// validates and what it keeps, when the checkpointer saves and what it keeps.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/resource.h>

#include <cmath>
#include <csignal>
#include <cstdio>
#include <filesystem>
#include <functional>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>
#include <torch/torch.h>

#include "nmt/models/model_io.h"
#include "nmt/train/checkpoint.h"
#include "nmt/train/observers.h"
#include "nmt/train/stop_signals.h"
#include "nmt/train/training_state.h"
#include "nmt/util/error.h"
#include "test_support.h"
#include "torch_test_models.h"

namespace fs = std::filesystem;
namespace train = nmt::train;
using nmt::test::slurp;
using nmt::test::TempDir;
using nmt::test::write_bytes;
using nmt::test::lines_of;
using train::StopReason;

namespace {

// Every line of a JSON-lines file, parsed (a line that does not parse fails the test).
std::vector<nlohmann::json> records(const std::string& path) {
  std::vector<nlohmann::json> parsed;
  for (const std::string& line : lines_of(slurp(path))) {
    EXPECT_TRUE(nlohmann::json::accept(line)) << "not a whole JSON record: " << line;
    if (nlohmann::json::accept(line)) parsed.push_back(nlohmann::json::parse(line));
  }
  return parsed;
}

// Records the validations the validator announces.
class ValidationSpy : public train::TrainingObserver {
 public:
  void validation_done(const train::ValidationResult& v) override { seen.push_back(v); }
  std::vector<train::ValidationResult> seen;
};

// What every observer test has: options writing into a temporary --out, a training state and
// the trainer's way of announcing an update.
class ObserverTest : public ::testing::Test {
 protected:
  ObserverTest() {
    o.out_dir = dir.path();
    o.valid_bleu = false;
    o.best_metric = train::BestMetric::kLoss;
    o.log_every = 0;
    o.keep_last = 2;
    o.model.type = "transformer";
  }

  // One applied update of `tgt_tokens` target tokens whose summed loss (and nll) is `loss_sum`,
  // announced as Trainer::run_epoch does: the step counted first.
  void update(double loss_sum = 6.0, int64_t tgt_tokens = 3) {
    train::UpdateInfo u;
    u.sums.loss = torch::tensor(loss_sum, torch::kDouble);
    u.sums.nll = torch::tensor(loss_sum, torch::kDouble);
    u.tgt_tokens = tgt_tokens;
    u.src_tokens = tgt_tokens;
    u.lr = 1e-3;
    state.saved.step += 1;
    u.batch_end = static_cast<size_t>(state.saved.step);
    u.plan_size = 10;
    u.epoch_start = train::Clock::now();
    state.update_done(u);
  }
  void updates(int n) {
    for (int i = 0; i < n; ++i) update();
  }

  TempDir dir{"nmt-observers"};
  train::TrainOptions o;
  train::TrainingState state;
};

// ---- Logger

class LoggerObserver : public ObserverTest {
 protected:
  std::string metrics_path() const { return dir.file("metrics.jsonl"); }
  std::function<void(const std::string&)> collect() {
    return [this](const std::string& line) { logged.push_back(line); };
  }
  std::vector<std::string> logged;
  nmt::viz::ProgressLine redirected{false};  // stderr not a terminal: plain log lines
};

TEST_F(LoggerObserver, PrintsALineEveryLogEveryUpdatesWithTheLossOverThoseUpdates) {
  o.log_every = 2;
  train::Logger logger(o, state, redirected, metrics_path(), collect());
  state.subscribe(&logger);
  update(6.0, 3);   // loss 2 per token
  update(12.0, 3);  // loss 4 per token: the line at step 2 shows (6 + 12) / 6 = 3
  update(3.0, 3);
  update(3.0, 3);   // the window starts again after a line: (3 + 3) / 6 = 1
  update(3.0, 3);
  ASSERT_EQ(logged.size(), 2u);
  EXPECT_EQ(logged[0].rfind("step 2 | epoch 1 | batch 2/10 | loss 3.000 | ppl 20.09 | lr 0.001 | tok/s ", 0), 0u)
      << logged[0];
  EXPECT_EQ(logged[1].rfind("step 4 | epoch 1 | batch 4/10 | loss 1.000 | ppl 2.72 | ", 0), 0u) << logged[1];
}

TEST_F(LoggerObserver, RecordsEachLoggedWindowInMetricsJsonl) {
  o.log_every = 2;
  train::Logger logger(o, state, redirected, metrics_path(), collect());
  state.subscribe(&logger);
  update(6.0, 3);
  update(12.0, 3);
  update(3.0, 3);
  const auto written = records(metrics_path());
  ASSERT_EQ(written.size(), 1u);
  EXPECT_EQ(written[0]["event"], "train");
  EXPECT_EQ(written[0]["step"], 2);
  EXPECT_EQ(written[0]["epoch"], 1);
  EXPECT_DOUBLE_EQ(written[0]["train_loss"].get<double>(), 3.0);
  EXPECT_DOUBLE_EQ(written[0]["lr"].get<double>(), 1e-3);
  for (const char* key : {"train_nll", "tokens_per_s", "wall_time"}) EXPECT_TRUE(written[0].contains(key)) << key;
}

TEST_F(LoggerObserver, WithoutLogEveryPrintsAndRecordsNoUpdates) {
  o.log_every = 0;
  train::Logger logger(o, state, redirected, metrics_path(), collect());
  state.subscribe(&logger);
  updates(5);
  EXPECT_TRUE(logged.empty());
  EXPECT_TRUE(records(metrics_path()).empty());
}

TEST_F(LoggerObserver, OnATerminalTheLiveLineReplacesTheLogLinesButMetricsStillGetThem) {
  o.log_every = 1;
  std::FILE* terminal = std::tmpfile();
  ASSERT_NE(terminal, nullptr);
  {
    nmt::viz::ProgressLine live(true, terminal);
    train::Logger logger(o, state, live, metrics_path(), collect());
    state.subscribe(&logger);
    updates(3);
    EXPECT_TRUE(logged.empty());
    EXPECT_EQ(records(metrics_path()).size(), 3u);
  }
  std::rewind(terminal);
  char shown[64] = {};
  ASSERT_GT(std::fread(shown, 1, sizeof shown - 1, terminal), 0u);
  EXPECT_EQ(std::string(shown).rfind("\r\x1b[Kepoch 1 | batch 1/10 | step 1 | loss 2.000 | tok/s ", 0), 0u)
      << "the line drawn in place: " << shown;
  std::fclose(terminal);
}

TEST_F(LoggerObserver, ReportsAValidationAsNewBestOrWithItsPatienceCount) {
  o.patience = 3;
  train::Logger logger(o, state, redirected, metrics_path(), collect());
  state.subscribe(&logger);
  state.saved.step = 40;
  train::ValidationResult best;
  best.loss = 1.5;
  best.ppl = std::exp(1.5);
  best.improved = true;
  best.entry = {{"event", "valid"}, {"step", 40}};
  state.validation_done(best);
  state.saved.bad_validations = 2;
  train::ValidationResult worse = best;
  worse.improved = false;
  state.validation_done(worse);
  ASSERT_EQ(logged.size(), 2u);
  EXPECT_EQ(logged[0], "validation | step 40 | epoch 1 | loss 1.500 | ppl 4.48 | new best");
  EXPECT_EQ(logged[1], "validation | step 40 | epoch 1 | loss 1.500 | ppl 4.48 | no improvement (2/3)");
  const auto written = records(metrics_path());
  ASSERT_EQ(written.size(), 2u);
  EXPECT_EQ(written[0], best.entry) << "the validator's record, as it made it";
}

// ---- MetricsLog

TEST(MetricsLog, AppendsOneWholeJsonRecordPerLineAfterThoseAlreadyThere) {
  TempDir dir("nmt-metrics");
  const std::string path = dir.file("metrics.jsonl");
  write_bytes(path, "{\"event\":\"train\",\"step\":1}\n");  // a resumed run's earlier record
  {
    train::MetricsLog log(path);
    log.write({{"event", "train"}, {"step", 2}});
    log.write({{"event", "valid"}, {"step", 2}, {"note", "two\nlines"}});
  }
  const std::string text = slurp(path);
  ASSERT_FALSE(text.empty());
  EXPECT_EQ(text.back(), '\n');
  const auto written = records(path);
  ASSERT_EQ(written.size(), 3u);
  EXPECT_EQ(written[0]["step"], 1);
  EXPECT_EQ(written[1]["step"], 2);
  EXPECT_EQ(written[2]["note"], "two\nlines") << "a newline inside a value stays escaped";
}

// Under a file size limit (as on a full disk: SIGXFSZ ignored, the write fails with EFBIG), a
// record that does not fit is taken back whole and the run stops with an error naming the file.
// The limit is lowered in this process for the one write and then put back.
TEST(MetricsLog, ARecordThatDoesNotFitLeavesNoHalfLineAndNamesTheFile) {
  TempDir dir("nmt-metrics");
  const std::string path = dir.file("metrics.jsonl");
  train::MetricsLog log(path);
  log.write({{"step", 1}});
  const std::string before = slurp(path);
  rlimit saved{};
  ASSERT_EQ(::getrlimit(RLIMIT_FSIZE, &saved), 0);
  const rlim_t room = static_cast<rlim_t>(before.size()) + 16;
  if (saved.rlim_max != RLIM_INFINITY && saved.rlim_max < room) GTEST_SKIP() << "the file size limit is already lower";
  auto previous_handler = ::signal(SIGXFSZ, SIG_IGN);
  rlimit limited = saved;
  limited.rlim_cur = room;
  ASSERT_EQ(::setrlimit(RLIMIT_FSIZE, &limited), 0);
  std::string message;
  try {
    log.write({{"step", 2}, {"note", "a record longer than the sixteen bytes left"}});
  } catch (const nmt::RuntimeError& e) {
    message = e.what();
  }
  ::setrlimit(RLIMIT_FSIZE, &saved);
  ::signal(SIGXFSZ, previous_handler);
  EXPECT_NE(message.find(path + ": cannot append"), std::string::npos) << message;
  EXPECT_EQ(slurp(path), before);
  log.write({{"step", 3}});
  EXPECT_EQ(records(path).size(), 2u) << "the log goes on after whole records";
}

// ---- Validator

// A validator over four pairs of the tiny model's vocabulary (each target its source), with
// the weights in OUT/model.pt when best.
class ValidatorObserver : public ObserverTest {
 protected:
  ValidatorObserver() {
    for (const nmt::text::TokenIds& ids : nmt::test::sources()) {
      valid.src.push_back(ids);
      valid.tgt.push_back(ids);
      valid.lengths.push_back({ids.size() + 1, ids.size() + 1});
    }
    state.subscribe(&validator);
    state.subscribe(&spy);
  }
  std::string best_weights() const { return slurp(dir.file(nmt::models::kWeightsFile)); }
  // Weights far from anything likely: a high validation loss.
  void make_worse() {
    torch::NoGradGuard no_grad;
    for (auto& p : model->parameters()) p.mul_(10);
  }
  // All zero: every target token gets probability 1/12, a loss of ln 12, below make_worse()'s.
  void make_uniform() {
    torch::NoGradGuard no_grad;
    for (auto& p : model->parameters()) p.zero_();
  }
  std::vector<int64_t> validated_steps() const {
    std::vector<int64_t> steps;
    for (const auto& h : state.saved.history) steps.push_back(h["step"].get<int64_t>());
    return steps;
  }

  nmt::models::Seq2SeqModel model = nmt::test::random_model("transformer");
  nmt::text::SubwordModel target_subwords;  // only read for BLEU (--valid-bleu), off here
  train::EncodedSet valid;
  ValidationSpy spy;
  train::Validator validator{o, state, *model, target_subwords, valid, torch::kCPU, dir.path()};
};

TEST_F(ValidatorObserver, TheFirstValidationIsTheBestAndSavesItsWeights) {
  state.saved.step = 7;
  validator.validate();
  ASSERT_EQ(spy.seen.size(), 1u);
  const train::ValidationResult& v = spy.seen[0];
  EXPECT_TRUE(v.improved);
  EXPECT_TRUE(std::isfinite(v.loss) && v.loss > 0) << v.loss;
  EXPECT_DOUBLE_EQ(v.ppl, std::exp(v.loss));
  EXPECT_TRUE(state.saved.has_best);
  EXPECT_DOUBLE_EQ(state.saved.best, -v.loss) << "--best-metric loss: higher is better, so the loss negated";
  EXPECT_EQ(state.saved.bad_validations, 0);
  ASSERT_EQ(state.saved.history.size(), 1u);
  EXPECT_EQ(state.saved.history[0], v.entry);
  EXPECT_EQ(v.entry["event"], "valid");
  EXPECT_EQ(v.entry["step"], 7);
  EXPECT_DOUBLE_EQ(v.entry["val_loss"].get<double>(), v.loss);
  EXPECT_FALSE(v.entry.contains("val_bleu")) << "no BLEU without --valid-bleu";
  EXPECT_FALSE(best_weights().empty());
}

TEST_F(ValidatorObserver, CountsValidationsWithoutImprovementTowardsPatienceAndANewBestResetsTheCount) {
  o.patience = 2;
  make_worse();
  validator.validate();
  const std::string saved_weights = best_weights();
  validator.validate();  // the same weights: no better (a tie is no improvement)
  validator.validate();
  ASSERT_EQ(spy.seen.size(), 3u);
  EXPECT_FALSE(spy.seen[1].improved);
  EXPECT_FALSE(spy.seen[2].improved);
  EXPECT_EQ(state.saved.bad_validations, 2) << "= --patience: the trainer stops before the next update";
  EXPECT_EQ(best_weights(), saved_weights) << "OUT/model.pt keeps the best weights";

  make_uniform();
  validator.validate();
  ASSERT_LT(spy.seen[3].loss, spy.seen[0].loss) << "the test's premise: uniform predictions beat the scaled weights";
  EXPECT_TRUE(spy.seen[3].improved);
  EXPECT_EQ(state.saved.bad_validations, 0);
  EXPECT_DOUBLE_EQ(state.saved.best, -spy.seen[3].loss);
  EXPECT_NEAR(spy.seen[3].loss, std::log(12.0), 1e-5);
  EXPECT_NE(best_weights(), saved_weights);
}

TEST_F(ValidatorObserver, ValidatesEveryValidEveryUpdatesFromValidAfterOn) {
  o.valid_every = 2;
  o.valid_after = 4;
  updates(7);
  state.epoch_done();  // with --valid-every, not at the epoch's end
  EXPECT_EQ(validated_steps(), (std::vector<int64_t>{4, 6}));
}

TEST_F(ValidatorObserver, WithoutValidEveryValidatesAtEachEpochsEndFromValidAfterOn) {
  o.valid_after = 3;
  updates(2);
  state.epoch_done();
  updates(2);
  state.epoch_done();
  EXPECT_EQ(validated_steps(), (std::vector<int64_t>{4}));
}

TEST_F(ValidatorObserver, ValidatesTheFinalWeightsAtAStopUnlessJustValidated) {
  o.valid_every = 3;
  updates(3);
  state.stopped(StopReason::kMaxSteps);  // step 3 was just validated
  EXPECT_EQ(validated_steps(), (std::vector<int64_t>{3}));
  updates(1);
  state.stopped(StopReason::kPatience);
  EXPECT_EQ(validated_steps(), (std::vector<int64_t>{3, 4}));
}

TEST_F(ValidatorObserver, DoesNotValidateWhenInterruptedOrDiverged) {
  updates(2);
  state.stopped(StopReason::kSignal);
  state.stopped(StopReason::kNonFinite);
  EXPECT_TRUE(state.saved.history.empty());
}

TEST_F(ValidatorObserver, DivergedWeightsStopTrainingWithAnErrorAndKeepTheBestWeights) {
  state.saved.step = 10;
  validator.validate();
  const std::string best = best_weights();
  {
    torch::NoGradGuard no_grad;
    for (auto& p : model->parameters()) p.fill_(std::nan(""));
  }
  state.saved.step = 20;
  nmt::test::expect_error<nmt::RuntimeError>([&] { validator.validate(); },
                                             {"validation at step 20: the loss is nan; training diverged", dir.path()});
  EXPECT_EQ(best_weights(), best);
  EXPECT_EQ(state.saved.history.size(), 1u);
  EXPECT_EQ(spy.seen.size(), 1u);
}

// ---- Checkpointer

class CheckpointerObserver : public ObserverTest {
 protected:
  // The steps of the checkpoints in OUT/checkpoints, oldest first.
  std::vector<int64_t> checkpoint_steps() const {
    std::vector<int64_t> steps;
    for (const fs::path& c : checkpoints.list())
      steps.push_back(train::TrainState::from_json(nlohmann::json::parse(slurp((c / "state.json").string()))).step);
    return steps;
  }
  train::ValidationResult validation() const { return {}; }

  nmt::models::Seq2SeqModel model = nmt::test::random_model("transformer");
  torch::optim::Adam optimizer{model->parameters(), torch::optim::AdamOptions(1e-3)};
  train::CheckpointManager checkpoints{dir.path(), static_cast<int>(o.keep_last)};
};

TEST_F(CheckpointerObserver, SavesEverySaveEveryUpdatesAndKeepsTheLastKeepLast) {
  o.save_every = 3;
  train::Checkpointer checkpointer(o, state, checkpoints, *model, optimizer, false);
  state.subscribe(&checkpointer);
  updates(5);
  EXPECT_EQ(checkpoint_steps(), (std::vector<int64_t>{3}));
  updates(5);
  EXPECT_EQ(checkpoint_steps(), (std::vector<int64_t>{6, 9})) << "--keep-last 2";
}

TEST_F(CheckpointerObserver, SavesAfterEachValidationAndOnceWhenTheSaveIsDueWithIt) {
  o.save_every = 2;
  o.valid_every = 2;
  train::Checkpointer checkpointer(o, state, checkpoints, *model, optimizer, false);
  state.subscribe(&checkpointer);
  updates(2);
  EXPECT_TRUE(checkpoint_steps().empty()) << "step 2 is validated next: saved with the validation";
  state.validation_done(validation());
  EXPECT_EQ(checkpoint_steps(), (std::vector<int64_t>{2}));
}

TEST_F(CheckpointerObserver, SavesTheStateWhereItStopsAndRecordsTheTrainingTime) {
  train::Checkpointer checkpointer(o, state, checkpoints, *model, optimizer, false);
  state.subscribe(&checkpointer);
  state.saved.elapsed = 100;  // seconds before this process started
  state.start_clock();
  updates(5);
  state.stopped(StopReason::kSignal);
  EXPECT_EQ(checkpoint_steps(), (std::vector<int64_t>{5}));
  const auto saved = nlohmann::json::parse(slurp((checkpoints.list().back() / "state.json").string()));
  EXPECT_GE(train::TrainState::from_json(saved).elapsed, 100.0);
  state.stopped(StopReason::kMaxSteps);  // nothing new since: no second save
  EXPECT_EQ(checkpoint_steps(), (std::vector<int64_t>{5}));
}

TEST_F(CheckpointerObserver, KeepsTheLastGoodCheckpointNewestWhenTrainingDiverged) {
  o.save_every = 2;
  train::Checkpointer checkpointer(o, state, checkpoints, *model, optimizer, false);
  state.subscribe(&checkpointer);
  updates(3);
  state.stopped(StopReason::kNonFinite);
  EXPECT_EQ(checkpoint_steps(), (std::vector<int64_t>{2}));
}

TEST_F(CheckpointerObserver, AResumedRunStoppedBeforeAnUpdateSavesNothingNew) {
  state.saved.step = 8;  // the checkpoint it resumed from holds step 8
  train::Checkpointer checkpointer(o, state, checkpoints, *model, optimizer, /*resumed=*/true);
  state.subscribe(&checkpointer);
  state.stopped(StopReason::kSignal);
  EXPECT_TRUE(checkpoint_steps().empty());
}

// ---- stop signals

TEST(StopSignals, ASignalIsRecordedForTheTrainerAndThePreviousHandlersComeBack) {
  static volatile std::sig_atomic_t outer_calls = 0;
  void (*outer)(int) = [](int) { outer_calls = outer_calls + 1; };
  auto before_int = std::signal(SIGINT, outer);
  auto before_term = std::signal(SIGTERM, outer);
  {
    train::SignalScope scope;
    EXPECT_EQ(train::stop_signal(), 0);
    std::raise(SIGTERM);
    EXPECT_EQ(train::stop_signal(), SIGTERM);
    EXPECT_EQ(outer_calls, 0);
    // A second SIGTERM would now kill at once: the first put back the default action.
    EXPECT_EQ(std::signal(SIGTERM, SIG_DFL), SIG_DFL);
  }
  EXPECT_EQ(std::signal(SIGINT, before_int), outer);
  EXPECT_EQ(std::signal(SIGTERM, before_term), outer);
}

TEST(StopSignals, ANewScopeStartsWithoutTheLastRunsSignal) {
  auto before_int = std::signal(SIGINT, SIG_IGN);
  {
    train::SignalScope scope;
    std::raise(SIGINT);
    EXPECT_EQ(train::stop_signal(), SIGINT);
  }
  {
    train::SignalScope scope;
    EXPECT_EQ(train::stop_signal(), 0);
  }
  std::signal(SIGINT, before_int);
}

}  // namespace
