// `nmt bleu` end to end: the real binary on a sacreBLEU vector case and on bad inputs.
// The binary is part of every full build, so a missing binary is a failure, not a skip.
#include <algorithm>
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
  EXPECT_EQ(nmt(tmp_.file("ref.txt") + " < /dev/null").exit_code, 1);  // REF alone: hypotheses on stdin, none there
  r = nmt("-r " + tmp_.file("ref.txt") + " --tokenize ja-mecab " + tmp_.file("ref.txt"));
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("MeCab"), std::string::npos) << r.err;
  EXPECT_EQ(nmt("-r " + tmp_.file("ref.txt") + " -m bleu meteor " + tmp_.file("ref.txt")).exit_code, 2);
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

// sacreBLEU's `sacrebleu REF < HYP`: without -i (and without nmt's -r) the hypotheses come from
// standard input, one system per tab-separated field, named "System 1", "System 2", ...
TEST_F(CliBleu, HypothesesOnStandardInputAsSacreBleuReadsThem) {
  const fs::path dir = fs::path(source_dir()) / "tests" / "score-vectors" / "m30k_three_systems";
  const std::string ref = quote((dir / "ref1.txt").string()), sys1 = quote((dir / "sys1.txt").string());
  const CommandResult from_file = nmt(ref + " -i " + sys1 + " -m bleu chrf");
  const CommandResult from_stdin = nmt(ref + " -m bleu chrf < " + sys1);
  ASSERT_EQ(from_stdin.exit_code, 0) << from_stdin.err;
  EXPECT_EQ(from_stdin.out, from_file.out);

  write_bytes(tmp_.file("two.tsv"), "the cat sat on the mat\tx y z\r\na dog ran in the park\tf\n");  // CRLF: Python's universal newlines
  write_bytes(tmp_.file("ref.txt"), "the cat sat on the mat\na dog ran in the park\n");
  const CommandResult two = nmt(tmp_.file("ref.txt") + " -f text < " + tmp_.file("two.tsv"));
  ASSERT_EQ(two.exit_code, 0) << two.err;
  EXPECT_NE(two.out.find("│ System 1 │ 100.0  │"), std::string::npos) << two.out;
  EXPECT_NE(two.out.find("│ System 2 │  0.0   │"), std::string::npos) << two.out;

  write_bytes(tmp_.file("ragged.tsv"), "a\tb\nc\n");
  const CommandResult ragged = nmt(tmp_.file("ref.txt") + " < " + tmp_.file("ragged.tsv"));
  EXPECT_EQ(ragged.exit_code, 1);
  EXPECT_EQ(ragged.err, "nmt: error: standard input:2: 1 tab-separated systems, the first line has 2\n");
}

// sacreBLEU's -l is --language-pair; nmt's -l used to mean --lowercase, which it still does
// when no SRC-TGT follows, with a warning instead of a silent change of meaning.
TEST_F(CliBleu, DashLIsTheLanguagePairAndAloneAStillWorkingDeprecatedLowercase) {
  write_bytes(tmp_.file("hyp.txt"), "我爱你们\n");
  write_bytes(tmp_.file("ref.txt"), "我爱你\n");
  const CommandResult zh = nmt(tmp_.file("ref.txt") + " -i " + tmp_.file("hyp.txt") + " -l en-zh -b");
  ASSERT_EQ(zh.exit_code, 0) << zh.err;
  EXPECT_EQ(zh.out, "59.5\n");  // sacreBLEU 2.6.0 `-l en-zh -b`: the zh tokenizer (13a would give 0.0)
  EXPECT_EQ(nmt(tmp_.file("ref.txt") + " -i " + tmp_.file("hyp.txt") + " -l en-de -b").out, "0.0\n");
  const CommandResult ja = nmt(tmp_.file("ref.txt") + " -i " + tmp_.file("hyp.txt") + " -l en-ja");
  EXPECT_EQ(ja.exit_code, 2);
  EXPECT_NE(ja.err.find("ja-mecab"), std::string::npos) << ja.err;

  write_bytes(tmp_.file("upper.txt"), "THE CAT SAT DOWN\n");
  write_bytes(tmp_.file("lower.txt"), "the cat sat down\n");
  const CommandResult old_l = nmt("-l -r " + tmp_.file("lower.txt") + " " + tmp_.file("upper.txt") + " -b");
  ASSERT_EQ(old_l.exit_code, 0) << old_l.err;
  EXPECT_EQ(old_l.out, "100.00\n");
  EXPECT_NE(old_l.err.find("deprecated"), std::string::npos) << old_l.err;
}

// -f latex: tabulate's latex_booktabs table, as sacreBLEU 2.6.0 printed it for these files
// (`sacrebleu ref1.txt -i sys1.txt sys2.txt -m bleu chrf -f latex`), special characters escaped.
TEST_F(CliBleu, LatexTablesAreSacreBleusBooktabs) {
  const fs::path dir = fs::path(source_dir()) / "tests" / "score-vectors" / "m30k_three_systems";
  const CommandResult r = run_command("cd " + quote(dir.string()) + " && " + quote(nmt_binary()) +
                                      " bleu ref1.txt -i sys1.txt sys2.txt -m bleu chrf -f latex");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out.substr(0, r.out.find("\n\n")),
            "\\begin{tabular}{rcc}\n\\toprule\n   System &  BLEU  &  chrF2  \\\\\n\\midrule\n"
            " sys1.txt &  75.0  &  88.6   \\\\\n sys2.txt &  57.1  &  77.3   \\\\\n\\bottomrule\n\\end{tabular}");
  fs::copy_file(dir / "sys2.txt", tmp_.file("a&b_c%.txt"));
  const CommandResult escaped = run_command("cd " + quote(tmp_.path()) + " && " + quote(nmt_binary()) +
                                            " bleu " + quote((dir / "ref1.txt").string()) + " -i " +
                                            quote((dir / "sys1.txt").string()) + " 'a&b_c%.txt' -f latex");
  EXPECT_NE(escaped.out.find(" a\\&b\\_c\\%.txt &  57.1  \\\\"), std::string::npos) << escaped.out;
}

// -t reads sacreBLEU's cache ($SACREBLEU/TEST/TEST.PAIR.ref...) and never downloads.
TEST_F(CliBleu, TestSetsComeFromSacreBleusCacheOrAOneLineError) {
  const fs::path dir = fs::path(source_dir()) / "tests" / "score-vectors" / "m30k_three_systems";
  const fs::path cache = fs::path(tmp_.path()) / "sacrebleu";
  fs::create_directories(cache / "wmt14");
  fs::copy_file(dir / "ref1.txt", cache / "wmt14" / "wmt14.en-fr.ref");
  fs::copy_file(dir / "sys3.txt", cache / "wmt14" / "wmt14.en-fr.src");
  const std::string env = "SACREBLEU=" + quote(cache.string()) + " ";
  const CommandResult with_t = run_command(env + quote(nmt_binary()) + " bleu -t wmt14 -l en-fr -i " +
                                           quote((dir / "sys1.txt").string()) + " -b");
  ASSERT_EQ(with_t.exit_code, 0) << with_t.err;
  EXPECT_EQ(with_t.out, nmt(quote((dir / "ref1.txt").string()) + " -i " + quote((dir / "sys1.txt").string()) + " -b").out);
  const CommandResult echo = run_command(env + quote(nmt_binary()) + " bleu -t wmt14 -l en-fr --echo src ref");
  EXPECT_EQ(echo.out.substr(0, echo.out.find('\n')),
            "Un homme regardant avec un place viande\tUn homme avec un chapeau orange regardant quelque chose.");

  const CommandResult absent = run_command(env + quote(nmt_binary()) + " bleu -t wmt19 -l de-en -i " +
                                           quote((dir / "sys1.txt").string()));
  EXPECT_EQ(absent.exit_code, 1);
  EXPECT_EQ(std::count(absent.err.begin(), absent.err.end(), '\n'), 1) << absent.err;
  EXPECT_NE(absent.err.find("never downloads"), std::string::npos) << absent.err;
}

// What needs sacreBLEU's registry or its downloads is refused in one line naming why (exit 2).
TEST_F(CliBleu, SacreBleuOptionsNmtCannotHonourAreRefusedInOneLine) {
  write_bytes(tmp_.file("a.txt"), "a\n");
  for (const std::string option : {"--list", "--citation", "--download wmt14", "--origlang de", "--subset x", "-d",
                                   "--encoding latin-1"}) {
    const CommandResult r = nmt(tmp_.file("a.txt") + " -i " + tmp_.file("a.txt") + " " + option);
    EXPECT_EQ(r.exit_code, 2) << option;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << option << ": " << r.err;
    EXPECT_EQ(r.err.find("unknown", 0), std::string::npos) << option << ": " << r.err;
  }
  EXPECT_EQ(nmt("-V").out, "nmt bleu (sacreBLEU 2.6.0's metrics and command line)\n");  // sacreBLEU's -V
  // Sentence level with several metrics: sacreBLEU's form refuses it as sacreBLEU does, nmt's
  // form (-r REF) prints one line per sentence and metric.
  const std::string a = tmp_.file("a.txt");
  const CommandResult several = nmt(a + " -i " + a + " -sl -m bleu chrf");
  EXPECT_EQ(several.exit_code, 2);
  EXPECT_EQ(several.out, "");
  EXPECT_NE(several.err.find("Only one metric can be used in sentence-level mode"), std::string::npos) << several.err;
  EXPECT_EQ(std::count(several.err.begin(), several.err.end(), '\n'), 1) << several.err;
  const CommandResult own = nmt("-r " + a + " " + a + " -sl -m bleu,chrf");
  EXPECT_EQ(own.exit_code, 0) << own.err;
  EXPECT_EQ(std::count(own.out.begin(), own.out.end(), '\n'), 2) << own.out;
}

// Every run of tests/score-vectors through the binary, with sacreBLEU's own command line
// (`REF... -i SYS... -m ... FLAGS`, its several-letter short options included): stdout must be
// sacreBLEU's byte for byte, sentence-level runs and seeds included.
TEST_F(CliBleu, SacreBleuCommandLinesPrintSacreBleuOutput) {
  const fs::path root = fs::path(source_dir()) / "tests" / "score-vectors";
  size_t runs = 0;
  for (const auto& entry : fs::directory_iterator(root)) {
    if (!fs::exists(entry.path() / "expected.json")) continue;
    std::ifstream in(entry.path() / "expected.json");
    const json expected = json::parse(in);
    // sacreBLEU names systems by the path as given: run in the case directory, bare names.
    const auto path = [](const json& name) { return quote(name.get<std::string>()); };
    for (const json& run : expected["runs"]) {
      std::string args;
      for (const auto& r : expected["refs"]) args += path(r) + " ";
      args += "-i";
      for (const auto& s : run["systems"]) args += " " + path(s);
      args += " -m";
      for (const auto& m : run["metrics"]) args += " " + m.get<std::string>();
      for (const auto& f : run["flags"]) args += " " + f.get<std::string>();
      std::string env = "env -u SACREBLEU_SEED -u SACREBLEU_FORMAT ";
      if (run.contains("seed")) env += "SACREBLEU_SEED=" + run["seed"].get<std::string>() + " ";
      CommandResult r = run_command("cd " + quote(entry.path().string()) + " && " + env + quote(nmt_binary()) +
                                    " bleu " + args);
      EXPECT_EQ(r.exit_code, 0) << r.err;
      EXPECT_EQ(r.out, run["stdout"].get<std::string>()) << entry.path().filename() << " " << args;
      ++runs;
    }
  }
  EXPECT_GE(runs, 33u);
}

TEST_F(CliBleu, NmtFormOfAPairedTestEqualsSacreBleuForm) {
  const fs::path dir = fs::path(source_dir()) / "tests" / "score-vectors" / "m30k_three_systems";
  const std::string cd = "cd " + quote(dir.string()) + " && env -u SACREBLEU_SEED " + quote(nmt_binary()) + " bleu ";
  CommandResult sacre = run_command(cd + "ref1.txt -i sys1.txt sys2.txt sys3.txt -m bleu ter -pbs -pbsn 120 -f json");
  CommandResult ours = run_command(cd + "-r ref1.txt sys1.txt sys2.txt sys3.txt -m bleu,ter --paired-bs --paired-bs-n 120 -f json");
  ASSERT_EQ(sacre.exit_code, 0) << sacre.err;
  EXPECT_EQ(ours.out, sacre.out);
  const json table = json::parse(ours.out);
  ASSERT_EQ(table.size(), 3u);
  EXPECT_EQ(table[0]["system"], "Baseline: sys1.txt");
  EXPECT_TRUE(table[0]["BLEU"]["p_value"].is_null());
  EXPECT_GT(table[2]["TER"]["score"].get<double>(), table[1]["TER"]["score"].get<double>());
  EXPECT_LT(table[2]["BLEU"]["p_value"].get<double>(), 0.05);
}

TEST_F(CliBleu, SeveralSystemsBadInput) {
  write_bytes(tmp_.file("ref.txt"), "a b c\nd e f\n");
  write_bytes(tmp_.file("s1.txt"), "a b c\nd e\n");
  write_bytes(tmp_.file("s2.txt"), "a b c\n");
  // A line-count mismatch in any system is a usage error naming that system.
  CommandResult r = nmt("-r " + tmp_.file("ref.txt") + " " + tmp_.file("s1.txt") + " " + tmp_.file("s2.txt"));
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find(tmp_.file("s2.txt")), std::string::npos) << r.err;
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  EXPECT_TRUE(r.out.empty());
  // Paired tests need two systems; --confidence is for one.
  EXPECT_EQ(nmt("-r " + tmp_.file("ref.txt") + " " + tmp_.file("s1.txt") + " --paired-bs").exit_code, 2);
  write_bytes(tmp_.file("s3.txt"), "a b c\nd\n");
  const std::string two = " " + tmp_.file("s1.txt") + " " + tmp_.file("s3.txt");
  EXPECT_EQ(nmt("-r " + tmp_.file("ref.txt") + two + " --confidence").exit_code, 2);
  EXPECT_EQ(nmt("-r " + tmp_.file("ref.txt") + two + " --paired-bs --paired-ar").exit_code, 2);
  // A seed that is not a number names the variable.
  r = run_command("SACREBLEU_SEED=abc " + quote(nmt_binary()) + " bleu -r " + tmp_.file("ref.txt") + two + " --paired-bs");
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find("SACREBLEU_SEED"), std::string::npos) << r.err;
  // The same system twice (not as the baseline of a paired test) is refused.
  EXPECT_EQ(nmt("-r " + tmp_.file("ref.txt") + " " + tmp_.file("s1.txt") + two).exit_code, 2);
}

TEST_F(CliBleu, WriteErrorsAreNotSuccess) {
  if (!fs::exists("/dev/full")) GTEST_SKIP() << "no /dev/full";
  write_bytes(tmp_.file("ref.txt"), "a b c\n");
  CommandResult r = run_command(quote(nmt_binary()) + " bleu -r " + tmp_.file("ref.txt") + " " + tmp_.file("ref.txt") +
                                " -m bleu chrf ter > /dev/full");
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_NE(r.err.find("standard output"), std::string::npos) << r.err;
}

TEST_F(CliBleu, TerAndTokenizersInNmtsOwnLayout) {
  write_bytes(tmp_.file("ref.txt"), "The cat sat down\n我们去北京\n");
  write_bytes(tmp_.file("hyp.txt"), "the cat sat\n我们去上海\n");
  CommandResult r = nmt("-r " + tmp_.file("ref.txt") + " " + tmp_.file("hyp.txt") + " -m ter bleu -tok zh --json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const json out = json::parse(r.out);
  EXPECT_EQ(out[0]["name"], "TER");
  EXPECT_EQ(out[0]["num_edits"], 2);  // a deletion, then the whole second line is one word
  EXPECT_NE(out[1]["signature"].get<std::string>().find("tok:zh"), std::string::npos);
  r = nmt("-r " + tmp_.file("ref.txt") + " " + tmp_.file("hyp.txt") + " -m ter -sl");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out,
            "TER|nrefs:1|case:lc|tok:tercom|norm:no|punct:yes|asian:no|version:2.6.0 = 25.00\n"
            "TER|nrefs:1|case:lc|tok:tercom|norm:no|punct:yes|asian:no|version:2.6.0 = 100.00\n");
}

// A sacreBLEU command line (`REF -i HYP`, no -f) prints what sacreBLEU prints by default: its
// JSON, one object per metric with the score rounded to one decimal, as a script parsing
// sacreBLEU's output expects; nmt's own `-r REF HYP` keeps nmt's one-line layout.
TEST_F(CliBleu, SacreBleuShapedCallDefaultsToSacreBleusJson) {
  const fs::path dir = fs::path(bleu_vectors_dir()) / "02_drop_words";
  if (!fs::exists(dir / "expected.json")) GTEST_SKIP() << "no sacreBLEU vectors at " << bleu_vectors_dir();
  CommandResult r = nmt(quote((dir / "ref.txt").string()) + " -i " + quote((dir / "hyp.txt").string()) + " -m bleu chrf");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  json out = json::parse(r.out, nullptr, false);
  ASSERT_TRUE(out.is_array()) << r.out;
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(out[0]["name"], "BLEU");
  EXPECT_EQ(out[1]["name"], "chrF2");
  r = nmt("-r " + quote((dir / "ref.txt").string()) + " " + quote((dir / "hyp.txt").string()));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out.rfind("BLEU|", 0), 0u) << r.out;
}

}  // namespace
}  // namespace nmt::test
