// Token-budget batch plans: coverage, budget, determinism per (seed, epoch), padding.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>

#include "nmt/data/batching.h"
#include "nmt/data/corpus.h"
#include "nmt/util/rng.h"
#include "nmt/text/subword.h"
#include "nmt/util/error.h"
#include "test_support.h"

using nmt::data::Batch;
using nmt::data::BatchOptions;
using nmt::data::ExampleLength;
using nmt::data::plan_batches;

namespace {

// Sentence-like lengths: mostly 5..40 tokens, a few long ones.
std::vector<ExampleLength> random_lengths(size_t n, uint64_t seed) {
  nmt::SplitMix64 rng(seed);
  std::vector<ExampleLength> v(n);
  for (auto& e : v) {
    e.src = 3 + rng.below(38) + (rng.below(50) == 0 ? rng.below(150) : 0);
    e.tgt = std::max<size_t>(2, e.src + rng.below(9) - 4);
  }
  return v;
}

void expect_each_once(const std::vector<Batch>& batches, size_t n) {
  std::vector<int> seen(n, 0);
  for (const auto& b : batches) {
    EXPECT_FALSE(b.empty());
    for (size_t i : b) {
      ASSERT_LT(i, n);
      ++seen[i];
    }
  }
  for (size_t i = 0; i < n; ++i) ASSERT_EQ(seen[i], 1) << "example " << i;
}

}  // namespace

TEST(BatchPlan, EveryExampleOncePerEpochWithinBudget) {
  const auto lengths = random_lengths(5000, 1);
  BatchOptions o;
  o.max_tokens = 1000;
  for (uint64_t epoch = 0; epoch < 4; ++epoch) {
    const auto batches = plan_batches(lengths, o, epoch);
    expect_each_once(batches, lengths.size());
    for (const auto& b : batches) {
      if (b.size() > 1) {
        EXPECT_LE(nmt::data::batch_cost(lengths, b), o.max_tokens);
      }
      // Both padded tensors fit the budget.
      size_t ms = 0, mt = 0;
      for (size_t i : b) ms = std::max(ms, lengths[i].src), mt = std::max(mt, lengths[i].tgt);
      if (b.size() > 1) {
        EXPECT_LE(b.size() * ms, o.max_tokens);
        EXPECT_LE(b.size() * mt, o.max_tokens);
      }
    }
  }
}

TEST(BatchPlan, OverlongExampleGetsItsOwnBatch) {
  std::vector<ExampleLength> lengths = {{10, 10}, {500, 20}, {10, 12}, {20, 900}, {11, 9}};
  BatchOptions o;
  o.max_tokens = 100;
  const auto batches = plan_batches(lengths, o, 0);
  expect_each_once(batches, lengths.size());
  for (const auto& b : batches)
    if (std::find(b.begin(), b.end(), size_t{1}) != b.end() || std::find(b.begin(), b.end(), size_t{3}) != b.end()) {
      EXPECT_EQ(b.size(), 1u);
    }
}

TEST(BatchPlan, MaxSentences) {
  const std::vector<ExampleLength> lengths(103, ExampleLength{2, 2});
  BatchOptions o;
  o.max_tokens = 100000;
  o.max_sentences = 10;
  const auto batches = plan_batches(lengths, o, 0);
  expect_each_once(batches, lengths.size());
  EXPECT_EQ(batches.size(), 11u);
  for (const auto& b : batches) EXPECT_LE(b.size(), 10u);
  // Budget limits too: 8 * 12 = 96 <= 100 < 9 * 12.
  const std::vector<ExampleLength> twelve(16, ExampleLength{12, 5});
  o.max_tokens = 100;
  o.max_sentences = 0;
  for (const auto& b : plan_batches(twelve, o, 0)) EXPECT_EQ(b.size(), 8u);
}

TEST(BatchPlan, DeterministicPerSeedAndEpoch) {
  const auto lengths = random_lengths(3000, 2);
  BatchOptions o;
  o.max_tokens = 2048;
  o.seed = 17;
  const auto e0 = plan_batches(lengths, o, 0);
  EXPECT_EQ(e0, plan_batches(lengths, o, 0));  // recomputable: resume mid-epoch by batch index
  const auto e1 = plan_batches(lengths, o, 1);
  EXPECT_NE(e0, e1);
  // Not only the order differs: batch contents change through random tie-breaking.
  auto sorted_sets = [](std::vector<Batch> bs) {
    for (auto& b : bs) std::sort(b.begin(), b.end());
    std::sort(bs.begin(), bs.end());
    return bs;
  };
  EXPECT_NE(sorted_sets(e0), sorted_sets(e1));
  o.seed = 18;
  EXPECT_NE(e0, plan_batches(lengths, o, 0));
}

TEST(BatchPlan, PinnedPlan) {
  // The plan must be identical on every machine and compiler: pin a small one.
  const std::vector<ExampleLength> lengths = {{3, 4}, {5, 5}, {3, 3}, {2, 8}, {5, 6}, {3, 4}, {2, 2}, {9, 9}};
  BatchOptions o;
  o.max_tokens = 12;
  o.seed = 3;
  const auto plan = plan_batches(lengths, o, 5);
  // Sorted by max(src, tgt): 6 (2,2), 2 (3,3), 0/5 (3,4) in random order, 1 (5,5), 4 (5,6),
  // 3 (2,8), 7 (9,9); packed greedily under 12 = n * longest, then the batch order shuffled.
  const std::vector<Batch> expected = {{6, 2, 5}, {0, 1}, {3}, {4}, {7}};
  EXPECT_EQ(plan, expected);
}

TEST(BatchPlan, NoShuffleIsLengthOrdered) {
  const auto lengths = random_lengths(500, 3);
  BatchOptions o;
  o.max_tokens = 300;
  o.shuffle = false;
  const auto a = plan_batches(lengths, o, 0);
  EXPECT_EQ(a, plan_batches(lengths, o, 7));  // the epoch does not matter without shuffling
  size_t prev = 0;
  for (const auto& b : a)
    for (size_t i : b) {
      const size_t key = std::max(lengths[i].src, lengths[i].tgt);
      EXPECT_GE(key, prev);
      prev = key;
    }
}

TEST(BatchPlan, EdgeCases) {
  EXPECT_TRUE(plan_batches({}, BatchOptions{}, 0).empty());
  BatchOptions o;
  o.max_tokens = 0;
  EXPECT_THROW(plan_batches({{1, 1}}, o, 0), nmt::UsageError);
  // Empty examples cannot form one unbounded batch: they count as length 1.
  o.max_tokens = 4;
  const auto batches = plan_batches(std::vector<ExampleLength>(10, ExampleLength{0, 0}), o, 0);
  expect_each_once(batches, 10);
  for (const auto& b : batches) EXPECT_LE(b.size(), 4u);
}

TEST(BatchPadding, HandComputed) {
  const std::vector<ExampleLength> lengths = {{2, 4}, {4, 4}, {3, 1}};
  // One batch: src padded to 3x4 = 12 (9 real), tgt to 3x4 = 12 (9 real): 6/24 padding.
  EXPECT_DOUBLE_EQ(nmt::data::padding_fraction(lengths, {{0, 1, 2}}), 6.0 / 24.0);
  EXPECT_DOUBLE_EQ(nmt::data::padding_fraction(lengths, {{0}, {1}, {2}}), 0.0);
  EXPECT_DOUBLE_EQ(nmt::data::padding_fraction(lengths, {}), 0.0);
  EXPECT_EQ(nmt::data::batch_cost(lengths, {0, 1, 2}), 12u);
}

// Padding with real subword lengths: Multi30k train, a joint unigram model of 8000 pieces,
// BOS/EOS added as the trainer does (+1 per side).
TEST(BatchPadding, Multi30kTrain) {
  const std::string prefix = nmt::test::data_dir() + "/multi30k/train";
  if (!std::filesystem::exists(prefix + ".en")) GTEST_SKIP() << "Multi30k not found under " << nmt::test::data_dir();
  std::string why;
  if (!nmt::text::SubwordModel::available(&why)) GTEST_SKIP() << why;
  const auto corpus = nmt::data::read_parallel(prefix, "en", "fr").corpus;
  std::vector<std::string> joint = corpus.source;
  joint.insert(joint.end(), corpus.target.begin(), corpus.target.end());
  nmt::text::SubwordOptions so;
  so.vocab_size = 8000;
  so.num_threads = 2;
  const auto model = nmt::text::SubwordModel::load_from_serialized(nmt::text::SubwordModel::train_serialized(joint, so));
  std::vector<ExampleLength> lengths;
  for (size_t i = 0; i < corpus.size(); ++i)
    lengths.push_back({model.encode(corpus.source[i]).size() + 1, model.encode(corpus.target[i]).size() + 1});

  BatchOptions o;
  o.max_tokens = 4096;
  for (uint64_t epoch = 0; epoch < 3; ++epoch) {
    const auto batches = plan_batches(lengths, o, epoch);
    expect_each_once(batches, lengths.size());
    const double pad = nmt::data::padding_fraction(lengths, batches);
    std::printf("[ info ] Multi30k train, max_tokens 4096, epoch %llu: %zu batches, padding %.2f%%\n",
                static_cast<unsigned long long>(epoch), batches.size(), 100.0 * pad);
    EXPECT_LT(pad, 0.055);  // measured 4.2% (129 batches)
  }
  o.max_tokens = 1024;
  EXPECT_LT(nmt::data::padding_fraction(lengths, plan_batches(lengths, o, 0)), 0.025);  // measured 1.6%
}
