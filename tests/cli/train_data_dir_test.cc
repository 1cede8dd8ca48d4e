// `nmt train --data DIR`: a dataset made by `nmt prepare` trains like its text, its epochs cross
// pools and resume mid-pool exactly, and a dataset of another subword model is refused.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include "test_support.h"

namespace fs = std::filesystem;
using nmt::test::fixture;
using nmt::test::run_command;
using nmt::test::slurp;

namespace {

std::string nmt_cmd() { return nmt::test::nmt_binary(); }

std::string prepare(const std::string& out, int vocab) {
  return nmt_cmd() + " prepare --train " + fixture("tiny") + " -o " + out + " --vocab-size " + std::to_string(vocab) +
         " --shard-size 3 -q";
}

// Three pools of at most 3 pairs per epoch, batches of about one pair, dropout on.
std::string train_command(const std::string& data, const std::string& out, int steps) {
  return nmt_cmd() + " train --preset transformer-tiny --data " + data + " --data-pool 3 --max-tokens 24 --valid " +
         fixture("tiny") + " --out " + out + " --max-steps " + std::to_string(steps) +
         " --dropout 0.2 --save-every 5 --valid-every 100 --valid-bleu false --seed 5 --threads 1 -q";
}

std::string weights(const std::string& out, int step) {
  char name[32];
  std::snprintf(name, sizeof name, "step-%08d", step);
  return slurp(out + "/checkpoints/" + name + "/model.pt");
}

}  // namespace

TEST(DataDir, ARunStoppedMidPoolResumesToTheSameWeights) {
  nmt::test::TempDir dir;
  auto r = run_command(prepare(dir.file("data"), 60));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  r = run_command(train_command(dir.file("data"), dir.file("straight"), 30));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  r = run_command(train_command(dir.file("data"), dir.file("stopped"), 13));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::string state = slurp(dir.file("stopped/checkpoints/step-00000013/state.json"));
  EXPECT_NE(state.find("\"pool_in_epoch\""), std::string::npos) << state;
  r = run_command(train_command(dir.file("data"), dir.file("stopped"), 30) + " --resume");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::string a = weights(dir.file("straight"), 30);
  ASSERT_FALSE(a.empty());
  EXPECT_TRUE(a == weights(dir.file("stopped"), 30));
}

TEST(DataDir, ADatasetOfAnotherSubwordModelIsRefusedOnResume) {
  nmt::test::TempDir dir;
  ASSERT_EQ(run_command(prepare(dir.file("a"), 60)).exit_code, 0);
  ASSERT_EQ(run_command(prepare(dir.file("b"), 40)).exit_code, 0);
  auto r = run_command(train_command(dir.file("a"), dir.file("run"), 5));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  r = run_command(train_command(dir.file("b"), dir.file("run"), 10) + " --resume");
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("another subword model"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find(dir.file("b")), std::string::npos) << r.err;
}

TEST(DataDir, TrainingOptionsThatNeedTextAreRefusedBeforeAnyWork) {
  nmt::test::TempDir dir;
  ASSERT_EQ(run_command(prepare(dir.file("a"), 60)).exit_code, 0);
  auto r = run_command(nmt_cmd() + " train --data " + dir.file("a") + " --out " + dir.file("run"));
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("--valid"), std::string::npos) << r.err;
  r = run_command(train_command(dir.file("a"), dir.file("run"), 5) + " --subword-alpha 0.1");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("--subword-alpha"), std::string::npos) << r.err;
  r = run_command(nmt_cmd() + " prepare --train " + fixture("tiny") + " -o " + dir.file("a") + " -q");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("exists"), std::string::npos) << r.err;
}
