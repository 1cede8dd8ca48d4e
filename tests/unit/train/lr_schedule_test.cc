// The learning-rate schedule (nmt/train/step.h): --lr-schedule linear and cosine decay to --min-lr
// as the run's budget (--max-steps or --max-time) ends, after the warm-up ramp; a decay without a
// budget is refused before any work; and the trainer follows the schedule update after update.
#include <gtest/gtest.h>

#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "nmt/train/options.h"
#include "nmt/train/step.h"
#include "test_support.h"

namespace {

using nmt::test::fixture;
using nmt::test::run_command;
using nmt::test::slurp;
namespace train = nmt::train;

// The budgeted schedules end at --min-lr when the budget ends, whichever of --max-steps and
// --max-time comes first, and the warm-up ramp scales them from the first update.
TEST(Schedule, LinearAndCosineDecayToMinLrAsTheBudgetEnds) {
  train::TrainOptions o;
  o.lr = 1e-3;
  o.min_lr = 1e-5;
  o.warmup = 10;
  o.max_steps = 100;
  for (auto kind : {train::LrSchedule::kLinear, train::LrSchedule::kCosine}) {
    o.lr_schedule = kind;
    EXPECT_DOUBLE_EQ(train::learning_rate(o, 50, 1.0), 1e-5);
    EXPECT_DOUBLE_EQ(train::learning_rate(o, 50, 0.5), 1e-5 + (1e-3 - 1e-5) / 2);  // both halfway at half
    EXPECT_DOUBLE_EQ(train::learning_rate(o, 5, 0.0), 1e-3 / 2);                   // warm-up ramp
  }
  o.lr_schedule = train::LrSchedule::kCosine;
  const double cosine_quarter = train::learning_rate(o, 50, 0.25);
  o.lr_schedule = train::LrSchedule::kLinear;
  EXPECT_GT(cosine_quarter, train::learning_rate(o, 50, 0.25));  // cosine holds the peak longer
  EXPECT_DOUBLE_EQ(train::budget_progress(o, 1, 0), 0.0);
  EXPECT_DOUBLE_EQ(train::budget_progress(o, 51, 0), 0.5);
  o.max_time_s = 3600;
  EXPECT_DOUBLE_EQ(train::budget_progress(o, 51, 2700), 0.75);  // time ran out faster than steps
  EXPECT_DOUBLE_EQ(train::budget_progress(o, 51, 7200), 1.0);
  o.max_steps = 0;
  EXPECT_DOUBLE_EQ(train::budget_progress(o, 1000, 900), 0.25);
}

TEST(Schedule, ADecayWithoutABudgetIsRefusedBeforeAnyWork) {
  auto r = run_command(nmt::test::nmt_binary() + " train --train x --valid x --out /tmp/never --lr-schedule linear");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("--lr-schedule 'linear' decays over the run's budget: give --max-steps or --max-time"),
            std::string::npos)
      << r.err;
  r = run_command(nmt::test::nmt_binary() +
                  " train --train x --valid x --out /tmp/never --lr-schedule cosine --max-steps 9 --lr 1e-3 --min-lr 0.1");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("--min-lr is 0.1, above the peak --lr 0.001"), std::string::npos) << r.err;
}

// What the trainer runs: metrics.jsonl's learning rates fall after the warm-up, step after step,
// to (nearly) --min-lr at the last update of --max-steps.
TEST(Schedule, TrainingFollowsTheLinearDecayToTheLastUpdate) {
  nmt::test::TempDir dir;
  auto r = run_command(nmt::test::nmt_binary() + " train --preset transformer-tiny --train " + fixture("tiny") +
                       " --valid " + fixture("tiny") + " --out " + dir.file("m") +
                       " --max-steps 20 --valid-bleu false -q --log-every 1 --lr 1e-3 --warmup 4 --lr-schedule linear"
                       " --min-lr 1e-4 --threads 1");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::vector<double> lrs;
  std::istringstream lines(slurp(dir.file("m/metrics.jsonl")));
  for (std::string line; std::getline(lines, line);) {
    const auto j = nlohmann::json::parse(line);
    if (j["event"] == "train") lrs.push_back(j["lr"].get<double>());
  }
  ASSERT_EQ(lrs.size(), 20u);
  EXPECT_NEAR(lrs[3], 1e-4 + 9e-4 * (1 - 3.0 / 20), 1e-12);  // update 4: warm-up done, 3/20 of the budget spent
  for (size_t i = 4; i < lrs.size(); ++i) EXPECT_LT(lrs[i], lrs[i - 1]) << "update " << i + 1;
  EXPECT_NEAR(lrs.back(), 1e-4 + 9e-4 / 20, 1e-12);
}

}  // namespace
