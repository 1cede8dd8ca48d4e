// A command line that forgives: a misspelt subcommand, option or --config key is named with the
// nearest one that exists; every usage error is one line with one prefix and exit 2; a missing
// model directory says it does not exist; ranges read as people write them.
#include <algorithm>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "nmt/util/suggest.h"
#include "test_support.h"

using nmt::test::nmt_binary;
using nmt::test::run_command;

namespace {

// One line on stderr, "nmt: error: ...", exit 2 (a usage error); returns that line.
std::string usage_error_of(const std::string& args) {
  const auto r = run_command(nmt_binary() + " " + args + " < /dev/null");
  EXPECT_EQ(r.exit_code, 2) << args << "\n" << r.err;
  EXPECT_EQ(r.err.rfind("nmt: error: ", 0), 0u) << r.err;
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  return r.err;
}

// The build without LibTorch (NMT_LIBTORCH=none) has no `nmt train`.
#ifdef NMT_TESTS_WITHOUT_TORCH
constexpr bool kWithoutTorch = true;
#else
constexpr bool kWithoutTorch = false;
#endif

TEST(ForgivingCli, TheNearestNameIsSuggestedAndNoneWhenNothingIsNear) {
  const std::vector<std::string> commands = {"train", "translate", "eval", "bleu", "serve"};
  EXPECT_EQ(nmt::nearest_name("translat", commands), "translate");
  EXPECT_EQ(nmt::nearest_name("tarin", commands), "train");  // two letters swapped
  EXPECT_EQ(nmt::nearest_name("serv", commands), "serve");
  EXPECT_EQ(nmt::nearest_name("--beem", {"--beam", "--nbest"}), "--beam");
  EXPECT_EQ(nmt::nearest_name("--max-tok", {"--max-tokens", "--max-len-a"}), "--max-tokens");  // a prefix
  EXPECT_EQ(nmt::nearest_name("frobnicate", commands), "");
  EXPECT_EQ(nmt::nearest_name("x", commands), "");
}

TEST(ForgivingCli, AnUnknownSubcommandIsNamedWithTheNearestOne) {
  const std::string err = usage_error_of("translat");
  EXPECT_NE(err.find("unknown subcommand 'translat'; did you mean 'translate'?"), std::string::npos) << err;
  EXPECT_NE(usage_error_of("frobnicate").find("unknown subcommand 'frobnicate' (nmt --help lists them)"), std::string::npos);
}

TEST(ForgivingCli, AnUnknownOptionIsNamedWithTheNearestOne) {
  std::string err = usage_error_of("translate -m models/none --beem 5");
  EXPECT_NE(err.find("unknown option --beem for nmt translate; did you mean '--beam'?"), std::string::npos) << err;
  err = usage_error_of("bleu -r a.txt b.txt --tokenise 13a");
  EXPECT_NE(err.find("unknown option --tokenise for nmt bleu; did you mean '--tokenize'?"), std::string::npos) << err;
  err = usage_error_of("translate -m models/none --beam=5 --frobnicate");
  EXPECT_NE(err.find("unknown option --frobnicate for nmt translate (nmt translate --help lists them)"), std::string::npos) << err;
}

TEST(ForgivingCli, AnUnknownConfigKeyNamesTheKeyTheFileAndTheLine) {
  nmt::test::TempDir dir;
  const std::string config = dir.file("run.toml");
  nmt::test::write_bytes(config, "# a run\n[translate]\nbeam = 4\nbeem = 5\n");
  std::string err = usage_error_of("--config " + config + " translate -m models/none");
  EXPECT_NE(err.find(config + ":4: unknown key 'beem' in [translate]; did you mean 'beam'?"), std::string::npos) << err;
  if (kWithoutTorch) return;  // nmt train is LibTorch's
  nmt::test::write_bytes(config, "[train]\nlearning_rate = 0.1\n");
  err = usage_error_of("--config " + config + " train --out x");
  EXPECT_NE(err.find(config + ":2: unknown key 'learning_rate' in [train]"), std::string::npos) << err;
  nmt::test::write_bytes(config, "[trian]\nlr = 0.1\n");
  err = usage_error_of("--config " + config + " train --out x");
  EXPECT_NE(err.find("unknown section [trian]; did you mean [train]?"), std::string::npos) << err;
}

TEST(ForgivingCli, RangesReadAsPeopleWriteThem) {
  std::string err;
  if (!kWithoutTorch) {  // nmt train is LibTorch's
    err = usage_error_of("train --preset transformer-tiny --train a --valid a --out x --lr -1");
    EXPECT_NE(err.find("--lr is -1, must be a number above 0"), std::string::npos) << err;
    EXPECT_EQ(err.find("1.79"), std::string::npos) << "no type limits in a message: " << err;
  }
  err = usage_error_of("translate -m models/none --beam 0");
  EXPECT_NE(err.find("--beam is 0, must be between 1 and 1000"), std::string::npos) << err;
}

TEST(ForgivingCli, AMissingModelDirectorySaysItDoesNotExist) {
  const auto r = run_command("echo Hello. | " + nmt_binary() + " translate -m /nonexistent/model");
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_NE(r.err.find("nmt: error: /nonexistent/model: does not exist"), std::string::npos) << r.err;
}

}  // namespace
