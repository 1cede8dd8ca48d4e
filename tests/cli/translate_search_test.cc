// `nmt translate` and `nmt score` of the search options end to end, on two tiny trained models:
// ensembles, prefix files, lexical constraints and avoided phrases, word alignment, markup,
// sampling and forced scoring, each as a user runs it (the search itself, in-process:
// tests/unit/decode/search_test.cc).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "nmt/text/markup.h"
#include "nmt/text/word_alignment.h"
#include "test_support.h"

using namespace nmt;

namespace {

using nmt::test::fixture;
using nmt::test::nmt_binary;
using nmt::test::run_command;
using nmt::test::slurp;

// Two tiny models trained once: A, and B with another subword vocabulary.
class SearchCli : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new nmt::test::TempDir("nmt-search");
    for (const auto& [name, extra] : {std::pair<std::string, std::string>{"a", ""}, {"b", " --vocab-size 90"}}) {
      auto r = nmt::test::run_once_per_ctest(
          [&](const std::string& out) {
            return nmt_binary() + " train --preset transformer-tiny --train " + fixture("tiny") + " --valid " +
                   fixture("tiny") + " --out " + out +
                   " --max-steps 200 --valid-every 100 --log-every 50 --lr 5e-3 --seed 3 --threads 1" + extra;
          },
          dir_->file(name));
      ASSERT_EQ(r.exit_code, 0) << r.err;
    }
  }
  static void TearDownTestSuite() {
    delete dir_;
    dir_ = nullptr;
  }
  static std::string model(const char* name) { return dir_->file(name); }
  static std::string translate(const std::string& args) { return nmt_binary() + " translate --threads 1 " + args; }
  static nmt::test::TempDir* dir_;
};
nmt::test::TempDir* SearchCli::dir_ = nullptr;

TEST_F(SearchCli, AnEnsembleOfOneModelTwiceTranslatesLikeTheModel) {
  for (const char* search : {"", " --beam 4"}) {
    auto alone = run_command(translate("-m " + model("a") + search + " --input " + fixture("tiny.en")));
    auto twice = run_command(translate("-m " + model("a") + " -m " + model("a") + search + " --input " + fixture("tiny.en")));
    ASSERT_EQ(alone.exit_code, 0) << alone.err;
    ASSERT_EQ(twice.exit_code, 0) << twice.err;
    EXPECT_EQ(twice.out, alone.out) << search;
  }
}

TEST_F(SearchCli, AnEnsembleOfDifferentVocabulariesIsRefusedInOneLine) {
  auto r = run_command(translate("-m " + model("a") + " -m " + model("b") + " --input " + fixture("tiny.en")));
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("subword vocabulary"), std::string::npos) << r.err;
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  EXPECT_TRUE(r.out.empty());
}

TEST_F(SearchCli, PrefixFileForcesTheStartOfEachTranslation) {
  nmt::test::write_bytes(dir_->file("prefixes"), "Une\n\nDes\n");
  nmt::test::write_bytes(dir_->file("three.en"), "a man rides a bike\nthe dog runs\ntwo women talk\n");
  for (const char* search : {"", " --beam 3"}) {
    auto r = run_command(translate("-m " + model("a") + search + " --input " + dir_->file("three.en") +
                                   " --prefix-file " + dir_->file("prefixes")));
    ASSERT_EQ(r.exit_code, 0) << r.err;
    std::istringstream lines(r.out);
    std::string first, second, third;
    std::getline(lines, first);
    std::getline(lines, second);
    std::getline(lines, third);
    EXPECT_EQ(first.rfind("Une", 0), 0u) << first;
    EXPECT_EQ(third.rfind("Des", 0), 0u) << third;
    // The empty prefix line leaves line 2 as it is without prefixes.
    auto plain = run_command(translate("-m " + model("a") + search + " --input " + dir_->file("three.en")));
    std::istringstream plain_lines(plain.out);
    std::string p1, p2;
    std::getline(plain_lines, p1);
    std::getline(plain_lines, p2);
    EXPECT_EQ(second, p2);
  }
  // Tab-separated input does the same from stdin.
  auto tab = run_command("printf 'a man rides a bike\\tUne\\n' | " + translate("-m " + model("a") + " --prefix-tab"));
  ASSERT_EQ(tab.exit_code, 0) << tab.err;
  EXPECT_EQ(tab.out.rfind("Une", 0), 0u) << tab.out;
}

TEST_F(SearchCli, PrefixFileOfAnotherLengthIsAUsageError) {
  nmt::test::write_bytes(dir_->file("one-prefix"), "Une\n");
  auto r = run_command(translate("-m " + model("a") + " --input " + fixture("tiny.en") + " --prefix-file " +
                                 dir_->file("one-prefix") + " -o " + dir_->file("never-written")));
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("one-prefix"), std::string::npos) << r.err;
  EXPECT_FALSE(std::filesystem::exists(dir_->file("never-written")));
}

// The JSON lines of `nmt translate --json`, parsed.
std::vector<nlohmann::json> json_lines(const std::string& out) {
  std::vector<nlohmann::json> lines;
  std::istringstream in(out);
  for (std::string line; std::getline(in, line);) lines.push_back(nlohmann::json::parse(line));
  return lines;
}

TEST_F(SearchCli, ConstraintsPutEachPhraseIntoItsLineAndJsonSaysWhatIsMissing) {
  nmt::test::write_bytes(dir_->file("three.en"), "a man rides a bike\nthe dog runs\ntwo women talk\n");
  nmt::test::write_bytes(dir_->file("phrases"), "plage\n\nchâteau de sable\tbus\n");
  for (const char* search : {"", " --beam 4"}) {
    auto r = run_command(translate("-m " + model("a") + search + " --input " + dir_->file("three.en") + " --json" +
                                   " --constraints " + dir_->file("phrases")));
    ASSERT_EQ(r.exit_code, 0) << r.err;
    const auto lines = json_lines(r.out);
    ASSERT_EQ(lines.size(), 3u);
    EXPECT_NE(lines[0]["translation"].get<std::string>().find("plage"), std::string::npos) << r.out;
    EXPECT_NE(lines[2]["translation"].get<std::string>().find("château de sable"), std::string::npos) << r.out;
    EXPECT_NE(lines[2]["translation"].get<std::string>().find("bus"), std::string::npos) << r.out;
    for (const auto& j : lines) {
      EXPECT_EQ(j["unmet_constraints"], nlohmann::json::array()) << j;
      EXPECT_LT(j["confidence"].get<double>(), 0) << j;
      EXPECT_TRUE(j["repetition"].is_boolean());
    }
  }
  // A phrase longer than the line's length limit is reported on that line, the rest translated.
  auto tight = run_command(translate("-m " + model("a") + " --input " + dir_->file("three.en") + " --json --max-len-a 0" +
                                     " --max-len-b 2 --constraints " + dir_->file("phrases")));
  ASSERT_EQ(tight.exit_code, 0) << tight.err;
  EXPECT_NE(tight.err.find("line 3: the translation lacks"), std::string::npos) << tight.err;
  EXPECT_NE(tight.err.find("more than its length limit of 2"), std::string::npos) << tight.err;
  EXPECT_FALSE(json_lines(tight.out)[2]["unmet_constraints"].empty()) << tight.out;
}

TEST_F(SearchCli, AvoidedPhrasesDisappearFromTheTranslations) {
  auto plain = run_command(translate("-m " + model("a") + " --input " + fixture("tiny.en")));
  ASSERT_EQ(plain.exit_code, 0) << plain.err;
  ASSERT_NE(plain.out.find("Un "), std::string::npos) << plain.out;
  nmt::test::write_bytes(dir_->file("avoid"), "Un\n");
  for (const char* search : {"", " --beam 3"}) {
    auto r = run_command(translate("-m " + model("a") + search + " --input " + fixture("tiny.en") + " --avoid " +
                                   dir_->file("avoid")));
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_EQ(r.out.find("Un "), std::string::npos) << r.out;
    EXPECT_EQ(std::count(r.out.begin(), r.out.end(), '\n'), 8) << r.out;
  }
}

TEST_F(SearchCli, BadConstraintsAreRefusedInOneLineBeforeAnythingIsWritten) {
  nmt::test::write_bytes(dir_->file("two-phrase-lines"), "plage\nbus\n");
  nmt::test::write_bytes(dir_->file("unwritable"), "plage\n\xE2\x98\x83\xE2\x98\x83\n");  // snowmen: not in the vocabulary
  nmt::test::write_bytes(dir_->file("two.en"), "a man rides a bike\nthe dog runs\n");
  nmt::test::write_bytes(dir_->file("kept"), "what was there\n");
  struct Case {
    std::string args, names;
    int exit_code = 2;  // usage errors; an unreadable file is a runtime error
  };
  const std::vector<Case> cases = {
      {" --input " + fixture("tiny.en") + " --constraints " + dir_->file("two-phrase-lines"), "two-phrase-lines"},
      {" --input " + dir_->file("two.en") + " --constraints " + dir_->file("unwritable"), "unwritable:2"},
      {" --input " + dir_->file("two.en") + " --constraints " + dir_->file("two-phrase-lines") + " --sampling top-k:3",
       "--sampling"},
      {" --input " + dir_->file("two.en") + " --constraints " + dir_->file("no-such-file"), "no-such-file", 1},
  };
  for (const auto& c : cases) {
    auto r = run_command(translate("-m " + model("a") + c.args + " -o " + dir_->file("kept")));
    EXPECT_EQ(r.exit_code, c.exit_code) << c.args << ": " << r.err;
    EXPECT_NE(r.err.find(c.names), std::string::npos) << r.err;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
    EXPECT_EQ(slurp(dir_->file("kept")), "what was there\n");
  }
  // From stdin the count is known only at the end: the error comes then, with a non-zero exit.
  auto piped = run_command("printf 'a\\nb\\nc\\n' | " + translate("-m " + model("a") + " --constraints " +
                                                               dir_->file("two-phrase-lines")));
  EXPECT_EQ(piped.exit_code, 2) << piped.err;
  EXPECT_NE(piped.err.find("fewer than the input"), std::string::npos) << piped.err;
}

TEST_F(SearchCli, AlignmentLinksWholeWordsOfTheSourceAndTheTranslation) {
  auto r = run_command(translate("-m " + model("a") + " --input " + fixture("tiny.en") + " --alignment"));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::istringstream out(r.out), src(slurp(fixture("tiny.en")));
  std::string line, source;
  size_t lines = 0;
  while (std::getline(out, line) && std::getline(src, source)) {
    ++lines;
    const auto bar = line.find(" ||| ");
    ASSERT_NE(bar, std::string::npos) << line;
    auto words = [](const std::string& s) {
      std::istringstream in(s);
      return static_cast<int>(std::distance(std::istream_iterator<std::string>(in), std::istream_iterator<std::string>()));
    };
    const int source_words = words(source), target_words = words(line.substr(0, bar));
    const auto gold = text::parse_pharaoh(line.substr(bar + 5));
    EXPECT_FALSE(gold.sure.empty()) << line;
    std::set<int> targets;
    for (const auto& link : gold.sure) {
      EXPECT_LT(link.source, source_words) << line;
      EXPECT_LT(link.target, target_words) << line;
      targets.insert(link.target);
    }
    EXPECT_EQ(static_cast<int>(targets.size()), target_words) << "every translated word is linked: " << line;
  }
  EXPECT_EQ(lines, 8u);
}

TEST_F(SearchCli, MarkupKeepsEveryTagWellFormedAndWarnsOfUnbalancedLines) {
  auto r = run_command(translate("-m " + model("a") + " --beam 3 --markup --input " + fixture("markup.en")));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::istringstream out(r.out), src(slurp(fixture("markup.en")));
  std::string line, source;
  size_t lines = 0, ok = 0, balanced_sources = 0;
  while (std::getline(out, line) && std::getline(src, source)) {
    ++lines;
    const auto check = text::check_markup(source, line);
    ok += check.ok();
    balanced_sources += text::strip_markup(source).warnings.empty();
    EXPECT_TRUE(check.ok()) << source << "\n → " << line;
  }
  EXPECT_EQ(lines, 40u);
  EXPECT_EQ(ok, lines);
  EXPECT_EQ(balanced_sources, 36u);
  // The four unbalanced lines' warnings, one line each, naming the line (two for a crossing).
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 6) << r.err;
  for (const char* line : {"warning: line 37: ", "warning: line 38: ", "warning: line 39: ", "warning: line 40: "})
    EXPECT_NE(r.err.find(line), std::string::npos) << r.err;
}

TEST_F(SearchCli, SamplingIsReproducibleForASeedAndChecksItsOptions) {
  const std::string base = "-m " + model("a") + " --input " + fixture("tiny.en") + " --sampling top-p:0.9 --temperature 3";
  auto a = run_command(translate(base + " --seed 7"));
  auto b = run_command(translate(base + " --seed 7"));
  ASSERT_EQ(a.exit_code, 0) << a.err;
  EXPECT_EQ(a.out, b.out);
  for (const std::string& bad : std::vector<std::string>{" --sampling top-k:0", " --sampling nucleus", " --temperature 2",
                                 " --sampling top-k:5 --beam 3", " --sampling top-k:5 --temperature 0"}) {
    auto r = run_command(translate("-m " + model("a") + " --input " + fixture("tiny.en") + bad));
    EXPECT_EQ(r.exit_code, 2) << bad << ": " << r.err;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  }
}

// `nmt score` gives each pair the log-probability beam search gave its own output (where the
// output's text encodes back to the same subwords, as a memorised corpus's does).
TEST_F(SearchCli, ScoreOfTheBeamOutputIsItsBeamScore) {
  auto nbest = run_command(translate("-m " + model("a") + " --beam 4 --nbest 2 --length-penalty none --input " +
                                     fixture("tiny.en")));
  ASSERT_EQ(nbest.exit_code, 0) << nbest.err;
  // The best entry of each line: "LINE ||| text ||| score", best first.
  std::istringstream n(nbest.out);
  std::string entry, targets;
  std::vector<std::string> texts;
  std::vector<double> beam_scores;
  for (size_t line = 0; std::getline(n, entry);) {
    if (entry.rfind(std::to_string(line) + " |||", 0) != 0) continue;
    const auto first = entry.find(" ||| "), last = entry.rfind(" ||| ");
    texts.push_back(entry.substr(first + 5, last - first - 5));
    targets += texts.back() + "\n";
    beam_scores.push_back(std::stod(entry.substr(last + 5)));
    ++line;
  }
  ASSERT_FALSE(beam_scores.empty());
  nmt::test::write_bytes(dir_->file("best.fr"), targets);
  auto scored = run_command(nmt_binary() + " score --threads 1 -m " + model("a") + " --src " + fixture("tiny.en") +
                            " --tgt " + dir_->file("best.fr") + " --per-token");
  ASSERT_EQ(scored.exit_code, 0) << scored.err;
  std::istringstream s(scored.out);
  std::string score_line;
  size_t line = 0, exact = 0;
  for (; std::getline(s, score_line); ++line) {
    ASSERT_LT(line, beam_scores.size());
    const double forced = std::stod(score_line.substr(0, score_line.find('\t')));
    // The per-token log-probabilities add up to the score.
    std::istringstream tokens(score_line.substr(score_line.find('\t') + 1));
    double sum = 0, eos = 0;
    for (double lp; tokens >> lp;) sum += eos = lp;
    EXPECT_NEAR(sum, forced, 1e-4);
    // A hypothesis the length limit cut off ended without EOS: its beam score lacks the EOS's
    // log-probability, which scoring always adds.
    // A hypothesis ending in a lone "▁" subword decodes to text with a trailing space, which
    // encodes back to other subwords: nothing to compare.
    if (!texts[line].empty() && texts[line].back() == ' ') continue;
    const bool same = std::abs(forced - beam_scores[line]) < 1e-3;
    const bool cut_by_limit = std::abs(forced - eos - beam_scores[line]) < 1e-3;
    EXPECT_TRUE(same || cut_by_limit) << "line " << line << ": scored " << forced << ", beam " << beam_scores[line];
    exact += same;
  }
  EXPECT_EQ(line, beam_scores.size());
  EXPECT_GT(exact, line / 2) << "most outputs of a memorised corpus end with EOS";
}

TEST_F(SearchCli, ScoreRefusesMismatchedFilesBeforeLoading) {
  nmt::test::write_bytes(dir_->file("two.fr"), "un\ndeux\n");
  auto r = run_command(nmt_binary() + " score -m /nonexistent --src " + fixture("tiny.en") + " --tgt " + dir_->file("two.fr"));
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("two.fr"), std::string::npos) << r.err;
  auto norm = run_command(nmt_binary() + " score --threads 1 -m " + model("a") + " --src " + fixture("tiny.en") +
                          " --tgt " + fixture("tiny.fr") + " --normalize");
  ASSERT_EQ(norm.exit_code, 0) << norm.err;
  const std::string sources = slurp(fixture("tiny.en"));
  EXPECT_EQ(std::count(norm.out.begin(), norm.out.end(), '\n'), std::count(sources.begin(), sources.end(), '\n'));
}

}  // namespace
