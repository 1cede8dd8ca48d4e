// Subword regularisation (`nmt train --subword-alpha A --subword-nbest N`): every epoch trains on
// a new sampled segmentation of the training pairs, which depends on the seed and the epoch
// alone, so a run is reproducible and resumes mid-epoch exactly. Off (alpha 0), training is
// unchanged (scripts/checks/check-equivalence.sh checks that bit for bit against a recorded reference).
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <sstream>

#include <nlohmann/json.hpp>

#include "nmt/data/corpus.h"
#include "nmt/text/subword.h"
#include "nmt/train/trainer.h"
#include "test_support.h"

namespace fs = std::filesystem;
using nmt::test::fixture;
using nmt::test::run_command;
using nmt::test::slurp;
using nmt::text::SubwordModel;
namespace train = nmt::train;

namespace {

// The tiny fixture, repeated so that sampling spreads over several threads' chunks.
class SubwordSampling : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string why;
    if (!SubwordModel::available(&why)) GTEST_SKIP() << why;
    const auto tiny = nmt::data::read_parallel(fixture("tiny"), "en", "fr").corpus;
    for (int copy = 0; copy < 100; ++copy) {
      corpus.source.insert(corpus.source.end(), tiny.source.begin(), tiny.source.end());
      corpus.target.insert(corpus.target.end(), tiny.target.begin(), tiny.target.end());
    }
    nmt::text::SubwordOptions so;
    so.vocab_size = 100;
    so.hard_vocab_limit = false;
    sp = nmt::text::SubwordPair::joint(
        SubwordModel::load_from_serialized(SubwordModel::train_serialized(train::joint_sentences(tiny), so)));
  }
  train::EncodedSet plain(int64_t max_len = 256) {
    size_t dropped = 0;
    return train::encode_set(corpus, sp, max_len, true, &dropped);
  }
  train::EncodedSet sampled(uint64_t seed, int64_t epoch, int nbest = -1, double alpha = 0.2, int64_t max_len = 256) {
    auto set = plain(max_len);
    train::sample_segmentations(set, sp, nbest, alpha, seed, epoch, max_len);
    return set;
  }
  nmt::data::ParallelCorpus corpus;
  nmt::text::SubwordPair sp;
};

TEST_F(SubwordSampling, SameSeedAndEpochGiveTheSameSegmentationWhateverTheThreads) {
  const int threads = at::get_num_threads();
  at::set_num_threads(1);
  const auto one = sampled(7, 3);
  at::set_num_threads(3);
  const auto three = sampled(7, 3);
  at::set_num_threads(threads);
  EXPECT_EQ(one.src, three.src);
  EXPECT_EQ(one.tgt, three.tgt);
  EXPECT_EQ(sampled(7, 3, 16).src, sampled(7, 3, 16).src);
}

TEST_F(SubwordSampling, EpochsSeedsAndPairsDrawDifferentSegmentations) {
  const auto base = sampled(7, 3);
  EXPECT_NE(base.src, plain().src) << "sampling changed nothing";
  EXPECT_NE(base.src, sampled(7, 4).src) << "two epochs segmented alike";
  EXPECT_NE(base.src, sampled(8, 3).src) << "two seeds segmented alike";
  EXPECT_NE(base.tgt, sampled(8, 3).tgt);
  // The copies of one sentence are segmented independently.
  EXPECT_NE(base.src[0], base.src[8]);
}

TEST_F(SubwordSampling, SamplesSpellTheSameTextAndCarryTheirLengths) {
  for (const int nbest : {-1, 8}) {
    const auto set = sampled(7, 1, nbest);
    const auto ref = plain();
    ASSERT_EQ(set.src.size(), ref.src.size());
    for (size_t i = 0; i < set.src.size(); ++i) {
      EXPECT_EQ(sp.source.decode(set.src[i]), sp.source.decode(ref.src[i])) << i;
      EXPECT_EQ(sp.target.decode(set.tgt[i]), sp.target.decode(ref.tgt[i])) << i;
      EXPECT_EQ(set.lengths[i].src, set.src[i].size() + 1) << i;
      EXPECT_EQ(set.lengths[i].tgt, set.tgt[i].size() + 1) << i;
    }
  }
}

// A sample longer than the model's positions allow is replaced by the plain segmentation
// (which fits), never dropped: every epoch trains on the same pairs.
TEST_F(SubwordSampling, TooLongSamplesFallBackToThePlainSegmentation) {
  size_t longest = 0;
  for (const auto& ids : plain().src) longest = std::max(longest, ids.size());
  const auto max_len = static_cast<int64_t>(longest) + 1;  // the longest plain source + EOS just fits
  // alpha 0: uniform over the lattice, so samples are often much longer than the best segmentation.
  const auto set = sampled(7, 1, -1, 0.0, max_len);
  const auto ref = plain(max_len);
  ASSERT_EQ(set.src.size(), ref.src.size());
  size_t fell_back = 0;
  for (size_t i = 0; i < set.src.size(); ++i) {
    EXPECT_LE(set.lengths[i].src, static_cast<size_t>(max_len)) << i;
    EXPECT_LE(set.lengths[i].tgt, static_cast<size_t>(max_len)) << i;
    fell_back += set.src[i] == ref.src[i];
  }
  EXPECT_GT(fell_back, 0u);
  EXPECT_LT(fell_back, set.src.size());
}

// ---- nmt train

// About 3 batches an epoch on the 8-pair fixture (how many depends on the epoch's sampled lengths), a checkpoint at
// every update.
std::string sampling_command(const std::string& out, int steps, const std::string& extra = "") {
  return nmt::test::nmt_binary() + " train --preset transformer-tiny --train " + fixture("tiny") + " --valid " +
         fixture("tiny") + " --out " + out + " --max-steps " + std::to_string(steps) +
         " --max-tokens 96 --subword-alpha 0.2 --valid-bleu false --save-every 1 --keep-last 20 --log-every 1 --seed 5"
         " --threads 1 -q " +
         extra;
}

std::vector<double> train_losses(const std::string& out) {
  std::vector<double> losses;
  std::istringstream in(slurp(out + "/metrics.jsonl"));
  for (std::string line; std::getline(in, line);) {
    const auto j = nlohmann::json::parse(line);
    if (j["event"] == "train") losses.push_back(j["train_loss"].get<double>());
  }
  return losses;
}

std::string checkpoint(const std::string& out, int step, const std::string& file) {
  char name[32];
  std::snprintf(name, sizeof name, "step-%08d", step);
  return slurp(out + "/checkpoints/" + name + "/" + file);
}

TEST(SubwordRegularisation, TheSameSeedTrainsIdentically) {
  nmt::test::TempDir dir;
  for (const char* run : {"a", "b"}) {
    auto r = run_command(sampling_command(dir.file(run), 8));
    ASSERT_EQ(r.exit_code, 0) << r.err;
  }
  EXPECT_EQ(train_losses(dir.file("a")).size(), 8u);
  EXPECT_EQ(train_losses(dir.file("a")), train_losses(dir.file("b")));
  EXPECT_TRUE(checkpoint(dir.file("a"), 8, "model.pt") == checkpoint(dir.file("b"), 8, "model.pt"));
  // Sampling is what changed the data: the same run without it trains otherwise.
  ASSERT_EQ(run_command(sampling_command(dir.file("off"), 8, "--subword-alpha 0")).exit_code, 0);
  EXPECT_NE(train_losses(dir.file("a")), train_losses(dir.file("off")));
  // Saved, and part of the run: another alpha on the same --out is another run.
  const auto config = nlohmann::json::parse(slurp(dir.file("a/config.json")));
  EXPECT_DOUBLE_EQ(config["train"]["subword_alpha"].get<double>(), 0.2);
  EXPECT_EQ(config["train"]["subword_nbest"], -1);
  auto other = run_command(sampling_command(dir.file("a"), 8, "--subword-alpha 0.3"));
  EXPECT_EQ(other.exit_code, 2) << other.err;
  EXPECT_NE(other.err.find("subword_alpha"), std::string::npos) << other.err;
}

// Stopped mid-epoch (after the first epoch, so that an epoch other than the first is resampled)
// and continued, a run ends with the weights and losses of one trained straight through.
TEST(SubwordRegularisation, ResumingMidEpochEqualsAStraightRun) {
  nmt::test::TempDir dir;
  const std::string extra = "--subword-nbest 16";
  ASSERT_EQ(run_command(sampling_command(dir.file("straight"), 14, extra)).exit_code, 0);
  const std::string resumed = dir.file("resumed");
  ASSERT_EQ(run_command(sampling_command(resumed, 5, extra)).exit_code, 0);
  const auto stop = nlohmann::json::parse(checkpoint(resumed, 5, "state.json"));
  ASSERT_GE(stop["epoch"].get<int>(), 2) << stop.dump();
  ASSERT_GT(stop["batch_in_epoch"].get<int>(), 0) << "stopped at an epoch boundary: " << stop.dump();
  auto r = run_command(sampling_command(resumed, 14, extra));  // --max-steps changes; the run continues
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(train_losses(resumed), train_losses(dir.file("straight")));
  const std::string expected = checkpoint(dir.file("straight"), 14, "model.pt");
  ASSERT_FALSE(expected.empty());
  EXPECT_TRUE(checkpoint(resumed, 14, "model.pt") == expected);
}

TEST(SubwordRegularisation, BadValuesAreRefusedInOneLineBeforeAnyWork) {
  nmt::test::TempDir dir;
  const std::string out = dir.file("never");
  for (const std::string& bad : std::vector<std::string>
       {"--subword-alpha -0.1", "--subword-alpha nan", "--subword-alpha 101", "--subword-alpha x", "--subword-nbest 0",
        "--subword-nbest -2", "--subword-nbest 513", "--subword-nbest 1.5"}) {
    auto r = run_command(nmt::test::nmt_binary() + " train --preset transformer-tiny --train " + fixture("tiny") +
                         " --valid " + fixture("tiny") + " --out " + out + " " + bad);
    EXPECT_EQ(r.exit_code, 2) << bad << ": " << r.err;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << bad << ": " << r.err;
    EXPECT_NE(r.err.find(bad.substr(0, bad.find(' '))), std::string::npos) << bad << ": " << r.err;
    EXPECT_FALSE(fs::exists(out)) << bad;
  }
}

}  // namespace
