// `nmt bleu` end to end: the real binary on a sacreBLEU vector case and on bad inputs.
// The binary is part of every full build, so a missing binary is a failure, not a skip.
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "test_support.h"

namespace nmt::test {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

std::string quote(const std::string& s) {
  std::string out = "'";
  for (char c : s) {
    if (c == '\'') out += "'\\''";
    else out.push_back(c);
  }
  return out + "'";
}

class CliBleu : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(fs::is_regular_file(nmt_binary()))
        << "the nmt binary is missing at " << nmt_binary() << " (build the nmt_cli target)";
  }

  CommandResult nmt(const std::string& args) { return run_command(quote(nmt_binary()) + " bleu " + args); }

  TempDir tmp_{"nmt-cli-bleu"};
};

TEST_F(CliBleu, MatchesSacreBleuTextLines) {
  const fs::path dir = fs::path(bleu_vectors_dir()) / "02_drop_words";
  if (!fs::exists(dir / "expected.json")) GTEST_SKIP() << "no sacreBLEU vectors at " << bleu_vectors_dir();
  std::ifstream in(dir / "expected.json");
  json expected = json::parse(in);

  CommandResult r = nmt("-r " + quote((dir / "ref.txt").string()) + " " + quote((dir / "hyp.txt").string()) +
                        " -m bleu chrf");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  char chrf_score[64];
  std::snprintf(chrf_score, sizeof chrf_score, "%.2f", expected["corpus_chrf"]["score"].get<double>());
  const std::string want = expected["corpus_bleu"]["text_line"].get<std::string>() + "\n" + "chrF2|" +
                           expected["corpus_chrf"]["signature"].get<std::string>() + " = " + chrf_score + "\n";
  EXPECT_EQ(r.out, want);

  // Same thing with -i and JSON output; the JSON carries the exact doubles.
  r = nmt("-r " + quote((dir / "ref.txt").string()) + " -i " + quote((dir / "hyp.txt").string()) +
          " -m bleu,chrf --json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  json out = json::parse(r.out);
  ASSERT_TRUE(out.is_array());
  ASSERT_EQ(out.size(), 2u);
  for (const char* key : {"score", "precisions", "bp", "sys_len", "ref_len", "counts", "totals", "ratio", "signature"})
    EXPECT_EQ(out[0][key], expected["corpus_bleu"][key]) << key;
  EXPECT_EQ(out[1]["score"], expected["corpus_chrf"]["score"]);
  EXPECT_EQ(out[1]["signature"], expected["corpus_chrf"]["signature"]);
}

TEST_F(CliBleu, MultiReferenceSentenceAndD2l) {
  const fs::path dir = fs::path(bleu_vectors_dir()) / "11_multiref";
  if (!fs::exists(dir / "expected.json")) GTEST_SKIP() << "no sacreBLEU vectors at " << bleu_vectors_dir();
  std::ifstream in(dir / "expected.json");
  json expected = json::parse(in);
  const std::string refs = "-r " + quote((dir / "ref.txt").string()) + " -r " + quote((dir / "ref2.txt").string());
  const std::string hyp = quote((dir / "hyp.txt").string());

  CommandResult r = nmt(refs + " " + hyp);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, expected["corpus_bleu"]["text_line"].get<std::string>() + "\n");

  r = nmt(refs + " " + hyp + " --sentence --json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  json lines = json::parse(r.out);
  ASSERT_EQ(lines.size(), expected["sentence_bleu"]["scores"].size());
  for (size_t i = 0; i < lines.size(); ++i) {
    EXPECT_EQ(lines[i]["score"], expected["sentence_bleu"]["scores"][i]) << "line " << i + 1;
    EXPECT_EQ(lines[i]["signature"], expected["sentence_bleu"]["signature"]);
  }

  r = nmt(refs + " " + hyp + " --d2l-k 4 --json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  json d2l = json::parse(r.out);
  EXPECT_EQ(d2l["non_standard"], true);
  EXPECT_EQ(d2l["scores"], expected["d2l_bleu_k4"]);

  r = nmt(refs + " " + hyp + " --d2l-k 2");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("non-standard"), std::string::npos) << r.out;
}

TEST_F(CliBleu, MismatchedLineCountsIsUsageError) {
  write_bytes(tmp_.file("hyp.txt"), "a b c\nd e f\n");
  write_bytes(tmp_.file("ref.txt"), "a b c\n");
  CommandResult r = nmt("-r " + tmp_.file("ref.txt") + " " + tmp_.file("hyp.txt"));
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find(tmp_.file("hyp.txt")), std::string::npos) << r.err;
  EXPECT_NE(r.err.find(tmp_.file("ref.txt")), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("2 lines"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("1 line"), std::string::npos) << r.err;
  EXPECT_TRUE(r.out.empty()) << r.out;
}

TEST_F(CliBleu, MissingFileAndDirectory) {
  write_bytes(tmp_.file("hyp.txt"), "a\n");
  CommandResult r = nmt("-r " + tmp_.file("missing.txt") + " " + tmp_.file("hyp.txt"));
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_NE(r.err.find(tmp_.file("missing.txt")), std::string::npos) << r.err;

  r = nmt("-r " + tmp_.file("hyp.txt") + " " + tmp_.file("nope.txt"));
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_NE(r.err.find(tmp_.file("nope.txt")), std::string::npos) << r.err;

  r = nmt("-r " + tmp_.path() + " " + tmp_.file("hyp.txt"));
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_NE(r.err.find(tmp_.path()), std::string::npos) << r.err;
}

TEST_F(CliBleu, InvalidUtf8NamesFileAndLine) {
  write_bytes(tmp_.file("hyp.txt"), "bonjour\nun \xC3\x28 deux\ntrois\n");
  write_bytes(tmp_.file("ref.txt"), "bonjour\nun deux\ntrois\n");
  CommandResult r = nmt("-r " + tmp_.file("ref.txt") + " " + tmp_.file("hyp.txt"));
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_NE(r.err.find(tmp_.file("hyp.txt") + ":2"), std::string::npos) << r.err;

  // A surrogate in the reference, on line 3.
  write_bytes(tmp_.file("ref2.txt"), "bonjour\nun deux\n\xED\xA0\x80\n");
  r = nmt("-r " + tmp_.file("ref2.txt") + " " + tmp_.file("ref.txt"));
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_NE(r.err.find(tmp_.file("ref2.txt") + ":3"), std::string::npos) << r.err;
}

TEST_F(CliBleu, EmptyHypothesisAndOtherUsageErrors) {
  write_bytes(tmp_.file("empty.txt"), "");
  write_bytes(tmp_.file("ref.txt"), "a\n");
  CommandResult r = nmt("-r " + tmp_.file("ref.txt") + " " + tmp_.file("empty.txt"));
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.err.find(tmp_.file("empty.txt")), std::string::npos) << r.err;

  EXPECT_EQ(nmt("-r " + tmp_.file("ref.txt")).exit_code, 2);                                  // no HYP
  EXPECT_EQ(nmt(tmp_.file("ref.txt")).exit_code, 2);                                         // no -r
  EXPECT_EQ(nmt("-r " + tmp_.file("ref.txt") + " --tokenize intl " + tmp_.file("ref.txt")).exit_code, 2);
  EXPECT_EQ(nmt("-r " + tmp_.file("ref.txt") + " -m bleu ter " + tmp_.file("ref.txt")).exit_code, 2);
}

TEST_F(CliBleu, NulBytesAreCharactersAndWhitespaceIsPython) {
  // NUL inside a line, CRLF and NBSP at line ends, no final newline in the reference.
  write_bytes(tmp_.file("hyp.txt"), std::string("le\0chat dort\r\nici\xC2\xA0\n", 20));
  write_bytes(tmp_.file("ref.txt"), std::string("le\0chat dort\nici", 16));
  CommandResult r = nmt("-r " + tmp_.file("ref.txt") + " " + tmp_.file("hyp.txt") + " --json -m bleu chrf");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  json out = json::parse(r.out);
  EXPECT_EQ(out[0]["sys_len"], 3);
  EXPECT_EQ(out[0]["ref_len"], 3);
  EXPECT_EQ(out[1]["score"], 100.0);
}

}  // namespace
}  // namespace nmt::test
