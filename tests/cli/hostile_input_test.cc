// Hostile input to `nmt translate` / `nmt eval`: each case has its documented behaviour and
// never crashes, hangs or loses output already produced.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "test_support.h"

namespace fs = std::filesystem;
using nmt::test::run_command;

namespace {

class HostileInput : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new nmt::test::TempDir("nmt-hostile");
    const std::string fixtures = nmt::test::source_dir() + "/data/fixtures/tiny";
    auto r = nmt::test::run_once_per_ctest(
        [&](const std::string& out) {
          return nmt::test::nmt_binary() + " train --preset transformer-tiny --train " + fixtures + " --valid " + fixtures +
                 " --out " + out + " --max-steps 30 --valid-bleu false -q --threads 1";
        },
        dir_->file("model"));
    ASSERT_EQ(r.exit_code, 0) << r.err;
  }
  static void TearDownTestSuite() { delete dir_; }

  static std::string translate(const std::string& args) {
    return nmt::test::nmt_binary() + " translate -m " + dir_->file("model") + " " + args;
  }
  static size_t lines_of(const std::string& text) { return static_cast<size_t>(std::count(text.begin(), text.end(), '\n')); }

  static nmt::test::TempDir* dir_;
};
nmt::test::TempDir* HostileInput::dir_ = nullptr;

TEST_F(HostileInput, MissingInputFileIsNamed) {
  auto r = run_command(translate("--input /nonexistent/in.txt"));
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("/nonexistent/in.txt"), std::string::npos) << r.err;
}

TEST_F(HostileInput, DirectoryAsInputIsNamed) {
  auto r = run_command(translate("--input " + dir_->path()));
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("is a directory"), std::string::npos) << r.err;
}

TEST_F(HostileInput, EmptyFileGivesNoOutput) {
  nmt::test::write_bytes(dir_->file("empty.txt"), "");
  auto r = run_command(translate("--input " + dir_->file("empty.txt")));
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "");
}

TEST_F(HostileInput, SpacesOnlyCrlfBomAndNulLinesKeepOneOutputLineEach) {
  nmt::test::write_bytes(dir_->file("odd.txt"), std::string("\xEF\xBB\xBF" "A dog runs.\r\n   \r\n\ta\tb\n") +
                                                     std::string("x\0y\n", 4) + "last line without newline");
  auto r = run_command(translate("--input " + dir_->file("odd.txt")));
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(lines_of(r.out), 5u) << r.out;
  std::stringstream ss(r.out);
  std::vector<std::string> lines;
  for (std::string l; std::getline(ss, l);) lines.push_back(l);
  ASSERT_EQ(lines.size(), 5u);
  EXPECT_EQ(lines[1], "");  // only spaces → empty translation
  // The same bytes on stdin give the same output.
  auto piped = run_command("cat " + dir_->file("odd.txt") + " | " + translate(""));
  EXPECT_EQ(piped.exit_code, 0) << piped.err;
  EXPECT_EQ(piped.out, r.out);
}

TEST_F(HostileInput, InvalidUtf8IsAnErrorNamingTheLineAfterEarlierOutput) {
  nmt::test::write_bytes(dir_->file("bad.txt"), "A dog runs.\nTwo cats.\nbad \xC3\x28 byte\nnever reached\n");
  auto piped = run_command("cat " + dir_->file("bad.txt") + " | " + translate(""));
  EXPECT_EQ(piped.exit_code, 1);
  EXPECT_NE(piped.err.find("<stdin>:3"), std::string::npos) << piped.err;
  EXPECT_EQ(lines_of(piped.out), 2u) << "the lines before the bad one are translated and written";
  auto file = run_command(translate("--input " + dir_->file("bad.txt")));
  EXPECT_EQ(file.exit_code, 1);
  EXPECT_NE(file.err.find(dir_->file("bad.txt") + ":3"), std::string::npos) << file.err;
}

TEST_F(HostileInput, AMegabyteLineTranslatedWholeIsTruncatedWithAWarning) {
  std::string huge;
  while (huge.size() < (1 << 20)) huge += "a dog runs across the field ";
  nmt::test::write_bytes(dir_->file("huge.txt"), "A dog runs.\n" + huge + "\n");
  auto r = run_command(translate("--whole-lines --input " + dir_->file("huge.txt")));
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(lines_of(r.out), 2u);
  EXPECT_NE(r.err.find("1 input line(s) longer than the model's limit were truncated"), std::string::npos) << r.err;
}

TEST_F(HostileInput, ALineOverTheModelsLimitIsTranslatedInPiecesNotTruncated) {
  std::string long_line;
  while (long_line.size() < 8000) long_line += "a dog runs across the field, ";
  nmt::test::write_bytes(dir_->file("long.txt"), "A dog runs.\n" + long_line + "\n");
  auto r = run_command(translate("--input " + dir_->file("long.txt")));
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(lines_of(r.out), 2u);
  EXPECT_EQ(r.err.find("truncated"), std::string::npos) << r.err;
}

TEST_F(HostileInput, RandomBytesNeverCrash) {
  std::string bytes;
  uint64_t x = 88172645463325252ULL;
  for (int i = 0; i < 20000; ++i) {
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    bytes.push_back(static_cast<char>(x & 0xFF));
  }
  nmt::test::write_bytes(dir_->file("random.bin"), bytes);
  auto r = run_command(translate("--input " + dir_->file("random.bin")));
  EXPECT_TRUE(r.exit_code == 0 || r.exit_code == 1) << r.exit_code << " " << r.err;
  if (r.exit_code == 1) {
    EXPECT_NE(r.err.find("not valid UTF-8"), std::string::npos) << r.err;
  }
  auto e = run_command(nmt::test::nmt_binary() + " eval -m " + dir_->file("model") + " --src " + dir_->file("random.bin") +
                       " --ref " + dir_->file("random.bin"));
  EXPECT_EQ(e.exit_code, 1) << e.err;
}

TEST_F(HostileInput, EvalWithMismatchedReferenceIsAUsageError) {
  nmt::test::write_bytes(dir_->file("src.txt"), "a\nb\nc\n");
  nmt::test::write_bytes(dir_->file("ref.txt"), "a\nb\n");
  auto r = run_command(nmt::test::nmt_binary() + " eval -m " + dir_->file("model") + " --src " + dir_->file("src.txt") +
                       " --ref " + dir_->file("ref.txt"));
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("ref.txt has 2"), std::string::npos) << r.err;
}

}  // namespace
