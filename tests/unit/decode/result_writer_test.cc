// The one writer of translations (decode/result_writer.h): the formats users parse.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "nmt/decode/result_writer.h"

namespace {

using nmt::decode::Nbest;
using nmt::decode::ResultFields;
using nmt::decode::TranslationResult;

TranslationResult hypothesis(std::string text, double score, std::string alignment = "") {
  TranslationResult t;
  t.text = std::move(text);
  t.score = score;
  t.log_prob = 2 * score;
  t.tokens = {"▁x"};
  t.token_log_probs = {score, score};
  t.alignment = std::move(alignment);
  return t;
}

TEST(ResultWriter, PlainIsTheBestTranslationAndNbestIsLineTextScore) {
  const Nbest n = {hypothesis("Un chien.", -0.5, "0-0 1-1"), hypothesis("Le chien.", -1.25, "0-0")};
  EXPECT_EQ(text_lines(7, n, {}), "Un chien.\n");
  EXPECT_EQ(text_lines(7, n, {false, true, false}), "Un chien. ||| 0-0 1-1\n");
  // LINE counts from 0, as fairseq and Marian number n-best lists.
  EXPECT_EQ(text_lines(7, n, {false, false, true}), "7 ||| Un chien. ||| -0.500000\n7 ||| Le chien. ||| -1.250000\n");
  EXPECT_EQ(text_lines(0, n, {false, true, true}), "0 ||| Un chien. ||| -0.500000 ||| 0-0 1-1\n0 ||| Le chien. ||| -1.250000 ||| 0-0\n");
}

TEST(ResultWriter, JsonHasEveryFieldOnceAndTheLineCountsFromOne) {
  const Nbest n = {hypothesis("Un chien.", -0.5, "0-0"), hypothesis("Le chien.", -1.25, "1-1")};
  const auto j = nlohmann::json::parse(json_line(0, n, {true, true, true}));
  EXPECT_EQ(j["line"], 1);
  EXPECT_EQ(j["translation"], "Un chien.");
  EXPECT_EQ(j["log_prob"], -1.0);
  EXPECT_EQ(j["alignment"], "0-0");
  EXPECT_TRUE(j["unmet_constraints"].is_array());
  ASSERT_EQ(j["nbest"].size(), 2u);
  EXPECT_EQ(j["nbest"][1]["translation"], "Le chien.");  // the same key as the best's
  EXPECT_EQ(j["nbest"][1]["alignment"], "1-1");
  // Without constraints, alignment or n-best those fields are absent, not empty.
  const auto plain = nlohmann::json::parse(json_line(4, n, {}));
  EXPECT_EQ(plain["line"], 5);
  for (const char* absent : {"unmet_constraints", "alignment", "nbest"}) EXPECT_FALSE(plain.contains(absent)) << absent;
  EXPECT_EQ(nmt::decode::result_json(n[0], {}).size(), 7u);
}

}  // namespace
