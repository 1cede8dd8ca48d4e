// Crash safety: a run killed with SIGKILL at random moments and resumed until done ends with
// bit-identical weights to an uninterrupted run; SIGTERM saves and exits; bad checkpoints are
// refused with a clear error.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>
#include <thread>

#include <nlohmann/json.hpp>

#include "test_support.h"

namespace fs = std::filesystem;
using nmt::test::run_command;

namespace {

using nmt::test::fixture;
using nmt::test::slurp;

// Dropout on, so the RNG state matters; checkpoints every few updates.
std::string train_command(const std::string& out, int steps) {
  return nmt::test::nmt_binary() + " train --preset transformer-tiny --train " + fixture("tiny") + " --valid " +
         fixture("tiny") + " --out " + out + " --max-steps " + std::to_string(steps) +
         " --dropout 0.2 --save-every 3 --valid-every 40 --valid-bleu false --keep-last 2 --seed 17 --threads 1 -q";
}

pid_t spawn(const std::string& command) {
  pid_t pid = fork();
  if (pid == 0) {
    execl("/bin/sh", "sh", "-c", ("exec " + command + " 2>/dev/null").c_str(), static_cast<char*>(nullptr));
    _exit(127);
  }
  return pid;
}

// The step of the newest checkpoint in a run directory (0 when there is none yet).
int latest_step(const std::string& out) {
  int latest = 0;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(out + "/checkpoints", ec)) {
    const std::string name = entry.path().filename().string();
    if (name.rfind("step-", 0) == 0 && name.find('.') == std::string::npos)
      latest = std::max(latest, std::atoi(name.c_str() + 5));
  }
  return latest;
}

std::string final_weights(const std::string& out, int steps) {
  char name[32];
  std::snprintf(name, sizeof name, "step-%08d", steps);
  return slurp(out + "/checkpoints/" + name + "/model.pt");
}

TEST(Resume, KilledAtRandomMomentsGivesBitIdenticalWeights) {
  nmt::test::TempDir dir;
  const int steps = 200;
  auto reference = run_command(train_command(dir.file("straight"), steps));
  ASSERT_EQ(reference.exit_code, 0) << reference.err;
  const std::string expected = final_weights(dir.file("straight"), steps);
  ASSERT_FALSE(expected.empty());

  // Each kill comes a random 1-5 checkpoints after the run's (re)start plus 0-40 ms, so it
  // lands mid-run whatever the machine's speed (fixed delays let a fast LibTorch 2.15 run
  // finish before the 3rd kill, and a loaded machine kill before the first checkpoint).
  std::mt19937 rng(1234);
  std::uniform_int_distribution<int> checkpoints_ahead(1, 5), extra_ms(0, 40);
  const std::string killed = dir.file("killed");
  int kills = 0, status = 0;
  for (int attempt = 0; attempt < 60; ++attempt) {
    const int target = latest_step(killed) + 3 * checkpoints_ahead(rng);
    pid_t pid = spawn(train_command(killed, steps));
    if (kills < 6) {
      while (waitpid(pid, &status, WNOHANG) == 0 && latest_step(killed) < target)
        std::this_thread::sleep_for(std::chrono::milliseconds(5));
      std::this_thread::sleep_for(std::chrono::milliseconds(extra_ms(rng)));
      if (waitpid(pid, &status, WNOHANG) == 0) {
        kill(pid, SIGKILL);
        waitpid(pid, &status, 0);
        ++kills;
        continue;
      }
    } else {
      waitpid(pid, &status, 0);
    }
    ASSERT_TRUE(WIFEXITED(status)) << "attempt " << attempt;
    ASSERT_EQ(WEXITSTATUS(status), 0) << "attempt " << attempt;
    break;
  }
  EXPECT_GE(kills, 3) << "the run finished before it could be killed: make it longer";
  EXPECT_TRUE(final_weights(dir.file("killed"), steps) == expected) << "resumed weights differ after " << kills << " kills";
}

TEST(Resume, SigtermSavesACheckpointAndResumeFinishesIdentically) {
  nmt::test::TempDir dir;
  const int steps = 150;
  ASSERT_EQ(run_command(train_command(dir.file("straight"), steps)).exit_code, 0);
  pid_t pid = spawn(train_command(dir.file("stopped"), steps));
  // Wait until training runs (its first checkpoint appears): before main() starts, loading
  // LibTorch takes a while and a signal then simply kills the process.
  const std::string first = dir.file("stopped/checkpoints/step-00000003/manifest.json");
  for (int i = 0; i < 400 && !fs::exists(first); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(50));
  kill(pid, SIGTERM);
  const auto t0 = std::chrono::steady_clock::now();
  int status = 0;
  waitpid(pid, &status, 0);
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  EXPECT_LT(seconds, 5.0);
  ASSERT_TRUE(WIFEXITED(status));
  if (WEXITSTATUS(status) != 0) {  // it had not finished yet: it must say so with 128+SIGTERM
    EXPECT_EQ(WEXITSTATUS(status), 128 + SIGTERM);
    auto resumed = run_command(train_command(dir.file("stopped"), steps) + " --resume");
    ASSERT_EQ(resumed.exit_code, 0) << resumed.err;
  }
  EXPECT_TRUE(final_weights(dir.file("stopped"), steps) == final_weights(dir.file("straight"), steps));
}

class BadCheckpoint : public ::testing::Test {
 protected:
  void SetUp() override {
    out = dir.file("run");
    auto r = run_command(train_command(out, 12));
    ASSERT_EQ(r.exit_code, 0) << r.err;
    latest = out + "/checkpoints/step-00000012";
    ASSERT_TRUE(fs::exists(latest + "/manifest.json"));
  }
  // Resuming must fail with exit 1, name `file`, and leave the directory as it was.
  void expect_refused(const std::string& file, const std::string& words) {
    const std::string before = slurp(out + "/model.pt");
    auto r = run_command(train_command(out, 20) + " --resume");
    EXPECT_EQ(r.exit_code, 1) << r.err;
    EXPECT_NE(r.err.find(file), std::string::npos) << r.err;
    EXPECT_NE(r.err.find(words), std::string::npos) << r.err;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
    EXPECT_EQ(slurp(out + "/model.pt"), before);
    EXPECT_FALSE(fs::exists(out + "/checkpoints/step-00000020"));
  }
  nmt::test::TempDir dir;
  std::string out, latest;
};

TEST_F(BadCheckpoint, TruncatedWeightsAreRefused) {
  fs::resize_file(latest + "/model.pt", fs::file_size(latest + "/model.pt") / 2);
  expect_refused(latest + "/model.pt", "checksum");
}

TEST_F(BadCheckpoint, CorruptedOptimizerStateIsRefused) {
  std::fstream f(latest + "/optimizer.pt", std::ios::in | std::ios::out | std::ios::binary);
  f.seekp(100);
  f.put('\x7f');
  f.close();
  expect_refused(latest + "/optimizer.pt", "checksum");
}

TEST_F(BadCheckpoint, NewerFormatIsRefused) {
  std::string manifest = slurp(latest + "/manifest.json");
  manifest.replace(manifest.find("\"format\": 1"), 11, "\"format\": 99");
  nmt::test::write_bytes(latest + "/manifest.json", manifest);
  expect_refused(latest + "/manifest.json", "newer");
}

TEST_F(BadCheckpoint, CheckpointOfAnotherModelTypeIsRefused) {
  std::string manifest = slurp(latest + "/manifest.json");
  manifest.replace(manifest.find("\"transformer\""), 13, "\"gru\"");
  nmt::test::write_bytes(latest + "/manifest.json", manifest);
  expect_refused(latest + "/manifest.json", "gru");
}

TEST_F(BadCheckpoint, ModelDirectoryWithoutSubwordModelIsRefused) {
  fs::remove(out + "/spm.model");
  auto r = run_command("echo hello | " + nmt::test::nmt_binary() + " translate -m " + out);
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find(out + "/spm.model"), std::string::npos) << r.err;
}

TEST_F(BadCheckpoint, ConfigNotMatchingTheWeightsIsRefused) {
  std::string config = slurp(out + "/config.json");
  config.replace(config.find("\"d_model\": 32"), 13, "\"d_model\": 64");
  nmt::test::write_bytes(out + "/config.json", config);
  // The weights file named is the one read: model.safetensors on the CPU engine (the default),
  // model.pt on LibTorch's path.
  for (const auto& [flags, file] : {std::pair{"", "/model.safetensors"}, std::pair{" --engine torch", "/model.pt"}}) {
    auto r = run_command("echo hello | " + nmt::test::nmt_binary() + " translate -m " + out + flags);
    EXPECT_EQ(r.exit_code, 1);
    EXPECT_NE(r.err.find(out + file), std::string::npos) << r.err;
  }
}

TEST(Resume, OutputDirectoryOfAnotherRunIsRefused) {
  nmt::test::TempDir dir;
  const std::string out = dir.file("run");
  ASSERT_EQ(run_command(train_command(out, 6)).exit_code, 0);
  // Same data, different recipe: not the same run, so no silent resume and no overwrite.
  auto r = run_command(train_command(out, 6) + " --lr 0.01");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("--resume"), std::string::npos) << r.err;
  // The same command again resumes (and, being finished, stops at once).
  auto again = run_command(train_command(out, 6));
  EXPECT_EQ(again.exit_code, 0) << again.err;
}

}  // namespace

namespace {

// Averaging two identical checkpoints returns the same weights; averaging different ones gives
// their mean, and the result is a model directory that translates.
TEST(Average, IdenticalCheckpointsAverageToThemselves) {
  nmt::test::TempDir dir;
  const std::string out = dir.file("run");
  ASSERT_EQ(run_command(train_command(out, 9)).exit_code, 0);
  // Make step-9 a copy of step-6 (both verified by the same manifest checksums).
  fs::remove_all(out + "/checkpoints/step-00000009");
  fs::copy(out + "/checkpoints/step-00000006", out + "/checkpoints/step-00000009", fs::copy_options::recursive);
  auto r = run_command(nmt::test::nmt_binary() + " average " + out + " --last 2 -o " + dir.file("avg"));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(slurp(dir.file("avg/model.pt")) == slurp(out + "/checkpoints/step-00000006/model.pt"));
  auto t1 = run_command("printf 'A dog runs.\\n' | " + nmt::test::nmt_binary() + " translate -m " + dir.file("avg"));
  ASSERT_EQ(t1.exit_code, 0) << t1.err;
  // Weights equal to step-6's: translating with a directory holding step-6's weights agrees.
  fs::create_directories(dir.file("six"));
  fs::copy(out + "/config.json", dir.file("six/config.json"));
  fs::copy(out + "/spm.model", dir.file("six/spm.model"));
  fs::copy(out + "/checkpoints/step-00000006/model.pt", dir.file("six/model.pt"));
  auto t2 = run_command("printf 'A dog runs.\\n' | " + nmt::test::nmt_binary() + " translate -m " + dir.file("six"));
  EXPECT_EQ(t1.out, t2.out);
}

TEST(Average, TooFewCheckpointsIsAClearError) {
  nmt::test::TempDir dir;
  const std::string out = dir.file("run");
  ASSERT_EQ(run_command(train_command(out, 6)).exit_code, 0);
  auto r = run_command(nmt::test::nmt_binary() + " average " + out + " --last 5 -o " + dir.file("avg"));
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("cannot average the last 5"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(dir.file("avg")));
}

// A run trained with nmt's default --keep-last averages without options: `nmt average` takes
// every checkpoint the run kept unless --last says how many.
TEST(Average, WithoutLastEveryCheckpointTheRunKeptIsAveraged) {
  nmt::test::TempDir dir;
  const std::string out = dir.file("run");
  std::string command = train_command(out, 12);
  command.replace(command.find(" --keep-last 2"), 14, "");  // training's default
  ASSERT_EQ(run_command(command).exit_code, 0);
  size_t kept = 0;
  for ([[maybe_unused]] const auto& entry : fs::directory_iterator(out + "/checkpoints")) ++kept;
  ASSERT_GE(kept, 2u);
  auto r = run_command(nmt::test::nmt_binary() + " average " + out + " -o " + dir.file("avg"));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("averaged " + std::to_string(kept) + " checkpoints"), std::string::npos) << r.err;
  EXPECT_TRUE(fs::exists(dir.file("avg/model.pt")));
}

// `nmt train --init-from DIR`: a new run (optimizer, schedule, --out) that starts from another
// model's weights and subword model, e.g. to adapt a Multi30k model to other data; resumable
// like any run.
std::string init_from_cmd(const std::string& out, const std::string& extra) {
  return nmt::test::nmt_binary() + " train --preset transformer-tiny --train " + fixture("tiny") + " --valid " +
         fixture("tiny") + " --out " + out + " --valid-bleu false --best-metric loss --seed 3 --threads 1 -q " + extra;
}

std::vector<nlohmann::json> validations(const std::string& metrics_path) {
  std::vector<nlohmann::json> out;
  std::istringstream in(slurp(metrics_path));
  for (std::string line; std::getline(in, line);) {
    auto j = nlohmann::json::parse(line);
    if (j["event"] == "valid") out.push_back(j);
  }
  return out;
}

// The first validation of the new run is the source model's best (its model.pt) on the same
// data: the same weights and subwords, before any update.
TEST(InitFrom, FirstValidationIsTheSourceModels) {
  nmt::test::TempDir dir;
  ASSERT_EQ(run_command(init_from_cmd(dir.file("src"), "--max-steps 40 --valid-every 10")).exit_code, 0);
  auto r = run_command(init_from_cmd(dir.file("adapted"), "--max-steps 5 --lr 1e-3 --init-from " + dir.file("src")));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto source = validations(dir.file("src/metrics.jsonl"));
  const auto adapted = validations(dir.file("adapted/metrics.jsonl"));
  ASSERT_FALSE(source.empty());
  ASSERT_FALSE(adapted.empty());
  double best = source.front()["val_loss"].get<double>();
  for (const auto& v : source) best = std::min(best, v["val_loss"].get<double>());
  EXPECT_EQ(adapted.front()["step"], 0);
  EXPECT_DOUBLE_EQ(adapted.front()["val_loss"].get<double>(), best);
  EXPECT_EQ(slurp(dir.file("adapted/spm.model")), slurp(dir.file("src/spm.model")));
  const auto config = nlohmann::json::parse(slurp(dir.file("adapted/config.json")));
  EXPECT_EQ(config["train"]["init_from"], dir.file("src"));
  EXPECT_DOUBLE_EQ(config["train"]["lr"].get<double>(), 1e-3);
}

TEST(InitFrom, AnotherArchitectureIsRefusedInOneLine) {
  nmt::test::TempDir dir;
  ASSERT_EQ(run_command(init_from_cmd(dir.file("src"), "--max-steps 2")).exit_code, 0);
  auto r = run_command(init_from_cmd(dir.file("wide"), "--max-steps 2 --ffn 48 --init-from " + dir.file("src")));
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  EXPECT_NE(r.err.find("--init-from"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("ffn"), std::string::npos) << r.err;
  EXPECT_FALSE(std::filesystem::exists(dir.file("wide/spm.model"))) << "refused before any work";
  r = run_command(init_from_cmd(dir.file("none"), "--max-steps 2 --init-from " + dir.file("nowhere")));
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find("nowhere: does not exist"), std::string::npos) << r.err;
}

// Interrupted or extended, an adapted run continues like any other.
TEST(InitFrom, AnAdaptedRunResumes) {
  nmt::test::TempDir dir;
  ASSERT_EQ(run_command(init_from_cmd(dir.file("src"), "--max-steps 5")).exit_code, 0);
  const std::string adapt = "--init-from " + dir.file("src") + " --save-every 2";
  ASSERT_EQ(run_command(init_from_cmd(dir.file("a"), adapt + " --max-steps 4")).exit_code, 0);
  auto r = run_command(init_from_cmd(dir.file("a"), adapt + " --max-steps 8"));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  ASSERT_EQ(run_command(init_from_cmd(dir.file("b"), adapt + " --max-steps 8")).exit_code, 0);
  const std::string last = "/checkpoints/step-00000008/model.pt";
  ASSERT_FALSE(slurp(dir.file("b") + last).empty());
  EXPECT_EQ(slurp(dir.file("a") + last), slurp(dir.file("b") + last));
}

}  // namespace
