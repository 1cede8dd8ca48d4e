// How `nmt translate` turns its input and per-line files into requests (decode/request_reader.h):
// every file checked before a model is loaded, each error naming the file.
#include <sstream>

#include <gtest/gtest.h>

#include "nmt/decode/request_reader.h"
#include "nmt/util/error.h"
#include "test_support.h"

namespace {

using nmt::decode::RequestFiles;
using nmt::decode::RequestReader;
using nmt::test::expect_error;

class RequestReaderTest : public ::testing::Test {
 protected:
  std::string file(const std::string& name, const std::string& text) {
    const std::string path = dir_.file(name);
    nmt::test::write_bytes(path, text);
    return path;
  }
  nmt::test::TempDir dir_{"nmt-requests"};
};

TEST_F(RequestReaderTest, PrefixTabSplitsEachLineIntoSourceAndPrefix) {
  RequestFiles f;
  f.prefix_tab = true;
  const auto r = RequestReader(f).requests({"A dog.\tUn", "A cat."}, 0);
  ASSERT_EQ(r.size(), 2u);
  EXPECT_EQ(r[0].source, "A dog.");
  EXPECT_EQ(r[0].prefix, "Un");
  EXPECT_EQ(r[1].source, "A cat.");
  EXPECT_EQ(r[1].prefix, "");
}

TEST_F(RequestReaderTest, PerLineFilesGiveLineNOfTheInputLineNOfEachFile) {
  RequestFiles f;
  f.prefix_file = file("prefixes", "Le\n\nLa\n");
  f.include = file("include", "chien\tnoir\n\nchat\n");
  f.avoid = file("avoid", "un\n \n");  // a blank line is no phrase
  const RequestReader reader(f);
  EXPECT_TRUE(reader.has_positive_constraints());
  // The second chunk of a file read in chunks: input lines 2 and 3.
  const auto r = reader.requests({"b", "c"}, 1);
  EXPECT_EQ(r[0].prefix, "");
  EXPECT_EQ(r[1].prefix, "La");
  EXPECT_TRUE(r[0].constraints.include.empty());
  EXPECT_EQ(r[1].constraints.include, (std::vector<std::string>{"chat"}));
  EXPECT_EQ(r[0].constraints.avoid, (std::vector<std::string>{"un"}));  // --avoid: every line
  EXPECT_EQ(reader.requests({"a"}, 0)[0].constraints.include, (std::vector<std::string>{"chien", "noir"}));
}

TEST_F(RequestReaderTest, FilesOfAnotherLengthThanTheInputAreRefusedNamingThem) {
  RequestFiles f;
  f.include = file("include", "x\ny\n");
  const RequestReader reader(f);
  expect_error<nmt::UsageError>([&] { reader.check_count(3, "in.txt"); }, {f.include, "2 lines", "in.txt has 3"});
  expect_error<nmt::UsageError>([&] { reader.requests({"a", "b", "c"}, 0); }, {f.include, "fewer than the input"});
  expect_error<nmt::UsageError>([&] { reader.check_used(1); }, {f.include, "the input had 1"});
  EXPECT_NO_THROW(reader.check_used(2));
}

TEST_F(RequestReaderTest, PrefixFileAndPrefixTabAreExclusive) {
  RequestFiles f;
  f.prefix_file = file("prefixes", "Le\n");
  f.prefix_tab = true;
  expect_error<nmt::UsageError>([&] { RequestReader{f}; }, {"--prefix-file and --prefix-tab are exclusive"});
}

TEST_F(RequestReaderTest, APhraseTheModelCannotWriteIsRefusedWithItsFileAndLine) {
  RequestFiles f;
  f.include = file("include", "ok\n\xE2\x98\x83\n");
  const RequestReader reader(f);
  const auto refuse_snowmen = [](const nmt::text::PhraseConstraints& c) {
    for (const auto& p : c.include)
      if (p == "\xE2\x98\x83") throw nmt::UsageError("the phrase has characters the vocabulary lacks");
  };
  expect_error<nmt::UsageError>([&] { reader.check_phrases(refuse_snowmen); }, {f.include + ":2:", "lacks"});
}

TEST_F(RequestReaderTest, InvalidUtf8IsAnErrorAtItsLineOrTheLinesBeforeIt) {
  const std::string path = file("in", "good\nbad \xFF\nlater\n");
  expect_error<nmt::RuntimeError>([&] { nmt::decode::read_source_lines(path); }, {path + ":2: not valid UTF-8"});
  size_t first_bad = 0;
  EXPECT_EQ(nmt::decode::read_source_lines(path, &first_bad), (std::vector<std::string>{"good"}));
  EXPECT_EQ(first_bad, 2u);
}

TEST(ReadChunks, StdinGoesInChunksWithoutItsBomAndStopsAtABadLine) {
  std::istringstream in("\xEF\xBB\xBFone\r\ntwo\nthr\xFF\nfour\n");
  std::vector<std::vector<std::string>> chunks;
  bool several = false;
  EXPECT_THROW(nmt::decode::read_chunks(in, true, false, [&](std::vector<std::string> c) { chunks.push_back(c); }, several),
               nmt::RuntimeError);
  // One line at a time (a terminal), then what was pending when line 3 was found bad.
  ASSERT_GE(chunks.size(), 2u);
  EXPECT_EQ(chunks[0], (std::vector<std::string>{"one"}));
  EXPECT_EQ(chunks[1], (std::vector<std::string>{"two"}));
  std::istringstream all("a\nb\n");
  chunks.clear();
  nmt::decode::read_chunks(all, false, true, [&](std::vector<std::string> c) { chunks.push_back(c); }, several);
  EXPECT_EQ(chunks, (std::vector<std::vector<std::string>>{{"a", "b"}}));
  EXPECT_TRUE(several);
}

}  // namespace
