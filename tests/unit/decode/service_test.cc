// The translation service (decode/service.h): what every front end reports of a translation is
// computed there once, and `nmt translate` writes exactly what the library returns.
#include <cmath>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "nmt/decode/result_writer.h"
#include "nmt/decode/service.h"
#include "nmt/tensor/threads.h"
#include "test_support.h"

namespace {

using nmt::decode::ResultOptions;
using nmt::decode::SearchOptions;
using nmt::decode::TranslationRequest;
using nmt::decode::TranslationService;

const std::vector<std::string> kSources = {"A man is riding a bicycle.", "", "Two dogs play in the snow."};

class Service : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new nmt::test::TempDir("nmt-service");
    auto r = nmt::test::run_once_per_ctest(
        [](const std::string& out) {
          return nmt::test::nmt_binary() + " train --preset transformer-tiny --train " + nmt::test::fixture("tiny") +
                 " --valid " + nmt::test::fixture("tiny") + " --out " + out +
                 " --max-steps 300 --valid-every 300 --lr 5e-3 --seed 3 --threads 1 -q";
        },
        model());
    ASSERT_EQ(r.exit_code, 0) << r.err;
  }
  static void TearDownTestSuite() { delete dir_; }
  static std::string model() { return dir_->file("tiny-model"); }
  static std::vector<TranslationRequest> requests() {
    std::vector<TranslationRequest> out;
    for (const auto& s : kSources) out.push_back({s, {}, {}});
    return out;
  }
  static nmt::test::TempDir* dir_;
};
nmt::test::TempDir* Service::dir_ = nullptr;

TEST_F(Service, EachResultCarriesItsScoresTokensAndConfidence) {
  TranslationService service({model()}, {});
  SearchOptions beam;
  beam.beam = 4;
  beam.nbest = 2;
  ResultOptions fields;
  fields.token_log_probs = true;
  const auto results = service.translate(requests(), beam, fields);
  ASSERT_EQ(results.size(), kSources.size());
  EXPECT_EQ(results[1].size(), 1u);  // an empty line: one empty translation
  EXPECT_EQ(results[1].front().text, "");
  for (const auto& t : results[0]) {
    EXPECT_EQ(t.tokens.size(), t.token_ids.size());
    ASSERT_FALSE(t.token_log_probs.empty());
    double sum = 0;
    for (double lp : t.token_log_probs) sum += lp;
    EXPECT_NEAR(t.log_prob, sum, 1e-6);
    EXPECT_NEAR(t.confidence, t.log_prob / static_cast<double>(t.token_log_probs.size()), 1e-12);
  }
  EXPECT_GE(results[0][0].score, results[0][1].score);  // best first
  // The text `nmt eval` scores is the best hypothesis's.
  EXPECT_EQ(service.translate_text(kSources, beam)[2], results[2].front().text);
}

TEST_F(Service, AttentionRowsCoverTheSourceAndEachSumsToOne) {
  TranslationService service({model()}, {});
  ResultOptions fields;
  fields.attention = true;
  fields.alignment = true;
  const auto best = service.translate(requests(), {}, fields)[0].front();
  ASSERT_EQ(best.attention.size(), best.token_ids.size() + 1);  // one row per token and the EOS
  for (const auto& row : best.attention) {
    double sum = 0;
    for (float w : row) sum += w;
    EXPECT_NEAR(sum, 1.0, 1e-4);
  }
  EXPECT_FALSE(best.alignment.empty());
  const auto map = service.attention_map(best, kSources[0]);
  EXPECT_EQ(map.target.size(), best.attention.size());
  EXPECT_EQ(map.source.size(), best.attention.front().size());
}

TEST_F(Service, NmtTranslateJsonIsTheWriterOfTheServicesResults) {
  nmt::test::TempDir tmp("nmt-service-cli");
  std::string text;
  for (const auto& s : kSources) text += s + "\n";
  nmt::test::write_bytes(tmp.file("in"), text);
  const auto r = nmt::test::run_command(nmt::test::nmt_binary() + " translate -q --threads 1 -m " + model() + " -i " +
                                        tmp.file("in") + " --beam 3 --nbest 2 --json --alignment");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  nmt::set_threads(1);  // as --threads 1: the same sums in the same order
  TranslationService service({model()}, {});
  SearchOptions search;
  search.beam = 3;
  search.nbest = 2;
  ResultOptions fields;
  fields.token_log_probs = true;
  fields.alignment = true;
  const auto results = service.translate(requests(), search, fields);
  std::string expected;
  for (size_t i = 0; i < results.size(); ++i) expected += nmt::decode::json_line(i, results[i], {false, true, true});
  EXPECT_EQ(r.out, expected);
}

TEST_F(Service, MarkupIsTakenOutAndPutBackAroundTheAlignedWords) {
  TranslationService service({model()}, {});
  ResultOptions fields;
  fields.markup = true;
  const auto t = service.translate({{"A <b>man</b> is riding a bicycle.", {}, {}}, {"A <i>dog.", {}, {}}}, {}, fields);
  EXPECT_NE(t[0].front().text.find("<b>"), std::string::npos) << t[0].front().text;
  EXPECT_NE(t[0].front().text.find("</b>"), std::string::npos) << t[0].front().text;
  EXPECT_TRUE(t[0].front().warnings.empty());
  ASSERT_EQ(t[1].front().warnings.size(), 1u);  // "<i> is never closed"
  EXPECT_NE(t[1].front().warnings[0].find("<i>"), std::string::npos);
}

TEST_F(Service, AParagraphIsTranslatedSentenceBySentenceWithItsOwnSpacing) {
  TranslationService service({model()}, {});
  ResultOptions split;
  split.split_sentences = true;
  const auto alone = service.translate({{kSources[0], {}, {}}, {kSources[2], {}, {}}}, {}, {});
  const std::string paragraph = kSources[0] + "  " + kSources[2] + "\n\n" + kSources[0];
  const auto joined = service.translate({{paragraph, {}, {}}, {kSources[2], {}, {}}}, {}, split);
  const std::string t0 = alone[0].front().text, t2 = alone[1].front().text;
  EXPECT_EQ(joined[0].front().text, t0 + "  " + t2 + "\n\n" + t0);
  EXPECT_EQ(joined[1].front().text, t2);  // a request of one sentence, as without splitting
  EXPECT_NEAR(joined[0].front().log_prob, 2 * alone[0].front().log_prob + alone[1].front().log_prob, 1e-4);
}

TEST_F(Service, NmtTranslateSplitsALineOfSentencesUnlessAskedForWholeLines) {
  nmt::test::TempDir tmp("nmt-service-paragraph");
  nmt::test::write_bytes(tmp.file("in"), kSources[0] + " " + kSources[2] + "\n" + kSources[0] + "\n" + kSources[2] + "\n");
  const std::string cmd = nmt::test::nmt_binary() + " translate -q --threads 1 -m " + model() + " -i " + tmp.file("in");
  const auto split = nmt::test::run_command(cmd);
  ASSERT_EQ(split.exit_code, 0) << split.err;
  const auto lines = nmt::test::lines_of(split.out);
  ASSERT_EQ(lines.size(), 3u);
  EXPECT_EQ(lines[0], lines[1] + " " + lines[2]);
  const auto whole = nmt::test::run_command(cmd + " --whole-lines");
  ASSERT_EQ(whole.exit_code, 0) << whole.err;
  nmt::set_threads(1);
  TranslationService service({model()}, {});
  EXPECT_EQ(nmt::test::lines_of(whole.out)[0],
            service.translate({{kSources[0] + " " + kSources[2], {}, {}}}, {}, {})[0].front().text);
}

TEST_F(Service, AttentionChoicesOutsideTheModelAreRefusedNamingTheFlag) {
  TranslationService service({model()}, {});
  nmt::test::expect_error<nmt::UsageError>([&] { service.attention_choice(99, -1, "--attention-layer", "--x"); },
                                           {"--attention-layer is 99", "decoder layer(s)"});
  nmt::test::expect_error<nmt::UsageError>([&] { service.attention_choice(-1, 64, "--x", "--attention-head"); },
                                           {"--attention-head is 64", "head(s)"});
}

}  // namespace
