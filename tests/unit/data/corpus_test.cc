// Corpus readers, split and writer: every bad-input case with its exact behaviour.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <set>

#include "nmt/data/corpus.h"
#include "nmt/util/error.h"
#include "nmt/util/io.h"
#include "test_support.h"

namespace fs = std::filesystem;
using nmt::RuntimeError;
using nmt::UsageError;
using nmt::data::ParallelCorpus;
using nmt::data::read_parallel;
using nmt::data::read_tsv;
using nmt::data::ReadOptions;
using nmt::data::SkipReason;
using nmt::test::TempDir;
using nmt::test::write_bytes;

namespace {

std::string fixtures() { return nmt::test::source_dir() + "/data/fixtures"; }

using nmt::test::expect_error;

// Writes PREFIX.en and PREFIX.fr in a temp dir.
struct PairFiles {
  TempDir dir{"nmt-corpus"};
  std::string prefix = dir.file("c");
  PairFiles(const std::string& en, const std::string& fr) {
    write_bytes(prefix + ".en", en);
    write_bytes(prefix + ".fr", fr);
  }
};

}  // namespace

TEST(CorpusParallel, ReadsFixtureAndCollapsesWhitespace) {
  auto r = read_parallel(fixtures() + "/tiny", "en", "fr");
  ASSERT_EQ(r.corpus.size(), 8u);
  EXPECT_EQ(r.corpus.target.size(), 8u);
  EXPECT_EQ(r.corpus.source[0], "A dog runs across the green field.");
  EXPECT_EQ(r.corpus.target[0], "Un chien court à travers le champ vert.");
  EXPECT_EQ(r.corpus.source[4], "A cyclist rides past a row of shops.");  // runs of spaces collapsed
  EXPECT_EQ(r.report.lines, 8u);
  EXPECT_EQ(r.report.kept, 8u);
  EXPECT_EQ(r.report.skipped, 0u);
  EXPECT_TRUE(r.report.warnings.empty());
}

TEST(CorpusParallel, TrimsAndCollapsesTabsAndSpaces) {
  PairFiles f("  a \t b  \n\tc\t\n", "x  y\t\tz \n c \n");
  auto r = read_parallel(f.prefix, "en", "fr");
  ASSERT_EQ(r.corpus.size(), 2u);
  EXPECT_EQ(r.corpus.source[0], "a b");
  EXPECT_EQ(r.corpus.source[1], "c");
  EXPECT_EQ(r.corpus.target[0], "x y z");
  EXPECT_EQ(r.corpus.target[1], "c");
}

TEST(CorpusParallel, UnicodeSpacesAreLeftForNfkc) {
  // U+202F NARROW NO-BREAK SPACE (French punctuation) is not touched by the reader.
  PairFiles f("Run!\n", "Cours\xE2\x80\xAF!\n");
  auto r = read_parallel(f.prefix, "en", "fr");
  ASSERT_EQ(r.corpus.size(), 1u);
  EXPECT_EQ(r.corpus.target[0], "Cours\xE2\x80\xAF!");
}

TEST(CorpusParallel, CrlfAndBom) {
  PairFiles f("\xEF\xBB\xBFone\r\ntwo\r\n", "\xEF\xBB\xBFun\r\ndeux");  // no final newline on .fr
  auto r = read_parallel(f.prefix, "en", "fr");
  ASSERT_EQ(r.corpus.size(), 2u);
  EXPECT_EQ(r.corpus.source, (std::vector<std::string>{"one", "two"}));
  EXPECT_EQ(r.corpus.target, (std::vector<std::string>{"un", "deux"}));
  EXPECT_TRUE(r.report.warnings.empty());
}

TEST(CorpusParallel, EmptyFilesGiveEmptyCorpus) {
  PairFiles f("", "");
  auto r = read_parallel(f.prefix, "en", "fr");
  EXPECT_TRUE(r.corpus.empty());
  EXPECT_EQ(r.report.lines, 0u);
  EXPECT_TRUE(r.report.warnings.empty());
}

TEST(CorpusParallel, MismatchedLineCountsNameBothFilesAndCounts) {
  PairFiles f("a\nb\nc\n", "x\ny\n");
  // Exit 2, as the README promises for a line-count mismatch between files.
  expect_error<nmt::UsageError>([&] { read_parallel(f.prefix, "en", "fr"); },
                                {f.prefix + ".en", "3 lines", f.prefix + ".fr", "2 lines"});
}

TEST(CorpusParallel, MissingFileAndDirectory) {
  TempDir dir("nmt-corpus");
  write_bytes(dir.file("c.en"), "a\n");
  expect_error<RuntimeError>([&] { read_parallel(dir.file("c"), "en", "fr"); }, {dir.file("c.fr"), "no such file"});
  fs::create_directory(dir.file("d.en"));
  write_bytes(dir.file("d.fr"), "a\n");
  expect_error<RuntimeError>([&] { read_parallel(dir.file("d"), "en", "fr"); },
                             {dir.file("d.en"), "is a directory"});
}

TEST(CorpusParallel, BadLinesAreSkippedCountedAndSummarisedOncePerFile) {
  // line 1 ok; 2 invalid UTF-8 in en; 3 NUL in fr; 4 spaces only in fr; 5 ok; 6 invalid UTF-8 in
  // en again; 7 bad on both sides (empty en, overlong encoding in fr); 8 ok.
  const std::string en = std::string("one\n") + "tw\xC3(o\n" + "three\n" + "four\n" + "five\n" + "\xFF\n" +
                         "   \n" + "eight\n";
  const std::string fr = std::string("un\n") + "deux\n" + std::string("tr\0ois\n", 7) + "   \t \n" + "cinq\n" +
                         "six\n" + "\xC0\xAF\n" + "huit\n";
  PairFiles f(en, fr);
  auto r = read_parallel(f.prefix, "en", "fr");
  EXPECT_EQ(r.corpus.source, (std::vector<std::string>{"one", "five", "eight"}));
  EXPECT_EQ(r.corpus.target, (std::vector<std::string>{"un", "cinq", "huit"}));
  EXPECT_EQ(r.report.lines, 8u);
  EXPECT_EQ(r.report.kept, 3u);
  EXPECT_EQ(r.report.skipped, 5u);  // line 7 is bad on both sides but drops one pair

  ASSERT_EQ(r.report.files.size(), 2u);
  const auto& sen = r.report.files[0];
  const auto& sfr = r.report.files[1];
  EXPECT_EQ(sen.of(SkipReason::kInvalidUtf8), 2u);
  EXPECT_EQ(sen.first(SkipReason::kInvalidUtf8), 2u);
  EXPECT_EQ(sen.of(SkipReason::kEmptySide), 1u);
  EXPECT_EQ(sen.first(SkipReason::kEmptySide), 7u);
  EXPECT_EQ(sen.total(), 3u);
  EXPECT_EQ(sfr.of(SkipReason::kNulByte), 1u);
  EXPECT_EQ(sfr.first(SkipReason::kNulByte), 3u);
  EXPECT_EQ(sfr.of(SkipReason::kEmptySide), 1u);
  EXPECT_EQ(sfr.first(SkipReason::kEmptySide), 4u);
  EXPECT_EQ(sfr.of(SkipReason::kInvalidUtf8), 1u);
  EXPECT_EQ(sfr.first(SkipReason::kInvalidUtf8), 7u);

  ASSERT_EQ(r.report.warnings.size(), 2u);  // one summary per file, not one per line
  EXPECT_EQ(r.report.warnings[0],
            f.prefix + ".en: skipped 3 lines: 2 invalid UTF-8 (first at line 2), 1 empty side (first at line 7)");
  EXPECT_EQ(r.report.warnings[1], f.prefix +
                                      ".fr: skipped 3 lines: 1 contains a NUL byte (first at line 3), 1 invalid "
                                      "UTF-8 (first at line 7), 1 empty side (first at line 4)");
}

TEST(CorpusParallel, Utf8ValidatorRejectsMalformedSequences) {
  // Each of these is invalid: truncated, overlong, surrogate, above U+10FFFF, stray continuation.
  const std::vector<std::string> bad = {"a\xE2\x82", "\xC1\xBF", "\xE0\x80\xAF", "\xED\xA0\x80", "\xF4\x90\x80\x80",
                                        "\x80", "\xF8\x88\x80\x80\x80"};
  for (const auto& b : bad) {
    PairFiles f(b + "\n", "ok\n");
    auto r = read_parallel(f.prefix, "en", "fr");
    EXPECT_EQ(r.corpus.size(), 0u);
    EXPECT_EQ(r.report.files[0].of(SkipReason::kInvalidUtf8), 1u);
  }
  // Valid: 2-, 3- and 4-byte sequences at the edges of their ranges.
  PairFiles ok("\xC2\x80 \xEF\xBF\xBF \xF0\x90\x80\x80 \xF4\x8F\xBF\xBF \xE2\x82\xAC\n", "ok\n");
  EXPECT_EQ(read_parallel(ok.prefix, "en", "fr").corpus.size(), 1u);
}

TEST(CorpusParallel, StrictModeThrowsFileAndLine) {
  PairFiles f("one\ntwo\n", "un\n  \n");
  ReadOptions o;
  o.strict = true;
  expect_error<RuntimeError>([&] { read_parallel(f.prefix, "en", "fr", o); }, {f.prefix + ".fr:2: empty side"});
  PairFiles g("one\ntw\xC3(o\n", "un\ndeux\n");
  expect_error<RuntimeError>([&] { read_parallel(g.prefix, "en", "fr", o); }, {g.prefix + ".en:2: invalid UTF-8"});
}

TEST(CorpusParallel, MaxCharsCountsCodePoints) {
  // "é" is 2 bytes but one character: 5 characters fit max_chars 5.
  PairFiles f("ééééé\nabcdef\n", "x\ny\n");
  ReadOptions o;
  o.max_chars = 5;
  auto r = read_parallel(f.prefix, "en", "fr", o);
  EXPECT_EQ(r.corpus.source, (std::vector<std::string>{"ééééé"}));
  EXPECT_EQ(r.report.files[0].of(SkipReason::kTooLong), 1u);
  EXPECT_EQ(r.report.files[0].first(SkipReason::kTooLong), 2u);
  ASSERT_EQ(r.report.warnings.size(), 1u);
  EXPECT_NE(r.report.warnings[0].find("longer than 5 characters (first at line 2)"), std::string::npos);
  o.max_chars = 0;  // unlimited
  EXPECT_EQ(read_parallel(f.prefix, "en", "fr", o).corpus.size(), 2u);
  EXPECT_EQ(ReadOptions{}.max_chars, 1000u);  // documented default
}

TEST(CorpusTsv, ThreeColumnsAndReverse) {
  auto r = read_tsv(fixtures() + "/pairs.tsv");
  ASSERT_EQ(r.corpus.size(), 5u);
  EXPECT_EQ(r.corpus.source[0], "Hello!");
  EXPECT_EQ(r.corpus.target[0], "Bonjour !");  // the attribution column is ignored
  EXPECT_EQ(r.corpus.target[3], "Où est la gare ?");
  EXPECT_TRUE(r.report.warnings.empty());
  ReadOptions o;
  o.reverse = true;
  auto rev = read_tsv(fixtures() + "/pairs.tsv", o);
  EXPECT_EQ(rev.corpus.source, r.corpus.target);
  EXPECT_EQ(rev.corpus.target, r.corpus.source);
}

TEST(CorpusTsv, TwoColumnsCrlfBom) {
  TempDir dir("nmt-tsv");
  write_bytes(dir.file("p.tsv"), "\xEF\xBB\xBFGo.\tVa !\r\nHi.\tSalut !\r\n");
  auto r = read_tsv(dir.file("p.tsv"));
  EXPECT_EQ(r.corpus.source, (std::vector<std::string>{"Go.", "Hi."}));
  EXPECT_EQ(r.corpus.target, (std::vector<std::string>{"Va !", "Salut !"}));
}

TEST(CorpusTsv, BadLinesSkippedWithOneWarning) {
  TempDir dir("nmt-tsv");
  const std::string text = std::string("Go.\tVa !\n") +   // 1 ok
                           "no tab here\n" +              // 2 missing tab
                           "\tVide\n" +                   // 3 empty source
                           "Empty.\t   \tattr\n" +        // 4 empty target
                           "Bad\xFF.\tMauvais.\n" +       // 5 invalid UTF-8
                           std::string("N\0l\tN\n", 6) +  // 6 NUL byte
                           "another one\n" +              // 7 missing tab
                           "Hi.\tSalut !\n";              // 8 ok
  write_bytes(dir.file("p.tsv"), text);
  auto r = read_tsv(dir.file("p.tsv"));
  EXPECT_EQ(r.corpus.source, (std::vector<std::string>{"Go.", "Hi."}));
  EXPECT_EQ(r.report.lines, 8u);
  EXPECT_EQ(r.report.skipped, 6u);
  const auto& s = r.report.files.at(0);
  EXPECT_EQ(s.of(SkipReason::kMissingTab), 2u);
  EXPECT_EQ(s.first(SkipReason::kMissingTab), 2u);
  EXPECT_EQ(s.of(SkipReason::kEmptySide), 2u);
  EXPECT_EQ(s.first(SkipReason::kEmptySide), 3u);
  EXPECT_EQ(s.of(SkipReason::kInvalidUtf8), 1u);
  EXPECT_EQ(s.of(SkipReason::kNulByte), 1u);
  EXPECT_EQ(s.first(SkipReason::kNulByte), 6u);
  ASSERT_EQ(r.report.warnings.size(), 1u);
  EXPECT_EQ(r.report.warnings[0], dir.file("p.tsv") +
                                      ": skipped 6 lines: 1 contains a NUL byte (first at line 6), 1 invalid UTF-8 "
                                      "(first at line 5), 2 no tab between the two sides (first at line 2), 2 empty "
                                      "side (first at line 3)");
}

TEST(CorpusTsv, StrictMissingTab) {
  TempDir dir("nmt-tsv");
  write_bytes(dir.file("p.tsv"), "Go.\tVa !\nno tab\n");
  ReadOptions o;
  o.strict = true;
  expect_error<RuntimeError>([&] { read_tsv(dir.file("p.tsv"), o); },
                             {dir.file("p.tsv") + ":2: no tab between the two sides"});
}

TEST(CorpusTsv, MissingEmptyAndDirectory) {
  TempDir dir("nmt-tsv");
  expect_error<RuntimeError>([&] { read_tsv(dir.file("nope.tsv")); }, {dir.file("nope.tsv"), "no such file"});
  expect_error<RuntimeError>([&] { read_tsv(dir.path()); }, {dir.path(), "is a directory"});
  write_bytes(dir.file("empty.tsv"), "");
  EXPECT_TRUE(read_tsv(dir.file("empty.tsv")).corpus.empty());
}

TEST(CorpusSplit, SizesDisjointCompleteAndOrdered) {
  ParallelCorpus c;
  for (int i = 0; i < 1000; ++i) {
    c.source.push_back("s" + std::to_string(i));
    c.target.push_back("t" + std::to_string(i));
  }
  auto split = nmt::data::split_corpus(c, 100, 50, 7);
  EXPECT_EQ(split.train.size(), 850u);
  EXPECT_EQ(split.valid.size(), 100u);
  EXPECT_EQ(split.test.size(), 50u);
  std::multiset<std::string> all;
  for (const auto* part : {&split.train, &split.valid, &split.test}) {
    ASSERT_EQ(part->source.size(), part->target.size());
    for (size_t i = 0; i < part->size(); ++i) {
      EXPECT_EQ(part->source[i].substr(1), part->target[i].substr(1));  // pairs stay aligned
      all.insert(part->source[i]);
    }
    // Each part keeps the input order.
    std::vector<int> idx;
    for (const auto& s : part->source) idx.push_back(std::stoi(s.substr(1)));
    EXPECT_TRUE(std::is_sorted(idx.begin(), idx.end()));
  }
  EXPECT_EQ(all.size(), 1000u);
  EXPECT_EQ(std::set<std::string>(all.begin(), all.end()).size(), 1000u);  // disjoint and complete
}

TEST(CorpusSplit, DeterministicPerSeed) {
  ParallelCorpus c;
  for (int i = 0; i < 500; ++i) {
    c.source.push_back(std::to_string(i));
    c.target.push_back(std::to_string(i));
  }
  auto a = nmt::data::split_corpus(c, 20, 20, 42);
  auto b = nmt::data::split_corpus(c, 20, 20, 42);
  auto d = nmt::data::split_corpus(c, 20, 20, 43);
  EXPECT_EQ(a.test.source, b.test.source);
  EXPECT_EQ(a.valid.source, b.valid.source);
  EXPECT_NE(a.test.source, d.test.source);
  // Pinned values: the split must be the same on every machine and compiler (our own PRNG).
  const std::vector<std::string> first3(a.test.source.begin(), a.test.source.begin() + 3);
  EXPECT_EQ(first3, (std::vector<std::string>{"52", "97", "98"}));
}

TEST(CorpusSplit, TooManyHeldOutIsUsageError) {
  ParallelCorpus c{{"a", "b"}, {"x", "y"}};
  expect_error<UsageError>([&] { nmt::data::split_corpus(c, 2, 1, 1); }, {"2", "1", "corpus of 2 pairs"});
  auto all_test = nmt::data::split_corpus(c, 0, 2, 1);
  EXPECT_EQ(all_test.test.size(), 2u);
  EXPECT_TRUE(all_test.train.empty());
}

TEST(CorpusWrite, RoundTrip) {
  TempDir dir("nmt-write");
  ParallelCorpus c{{"one", "two é"}, {"un", "deux"}};
  nmt::data::write_parallel(dir.file("sub/out"), "en", "fr", c);
  EXPECT_EQ(nmt::read_file(dir.file("sub/out.en")), "one\ntwo é\n");
  auto r = read_parallel(dir.file("sub/out"), "en", "fr");
  EXPECT_EQ(r.corpus.source, c.source);
  EXPECT_EQ(r.corpus.target, c.target);
}

TEST(CorpusWrite, RejectsLineBreaksAndMisalignment) {
  TempDir dir("nmt-write");
  expect_error<RuntimeError>(
      [&] { nmt::data::write_parallel(dir.file("o"), "en", "fr", ParallelCorpus{{"a\nb"}, {"x"}}); },
      {dir.file("o.en"), "sentence 1", "line break"});
  expect_error<RuntimeError>(
      [&] { nmt::data::write_parallel(dir.file("o"), "en", "fr", ParallelCorpus{{"a", "b"}, {"x"}}); },
      {"2 source", "1 target"});
}

// ---- The mirrored datasets (skipped when absent) ----

TEST(CorpusData, Multi30kSplits) {
  const std::string dir = nmt::test::data_dir() + "/multi30k";
  if (!fs::exists(dir + "/train.en")) GTEST_SKIP() << "Multi30k not found under " << dir << " (set NMT_DATA)";
  const std::pair<const char*, size_t> splits[] = {
      {"train", 29000}, {"val", 1014}, {"test_2016_flickr", 1000}, {"test_2017_flickr", 1000}};
  for (const auto& [name, n] : splits) {
    auto r = read_parallel(dir + "/" + name, "en", "fr");
    EXPECT_EQ(r.corpus.size(), n) << name;
    EXPECT_TRUE(r.report.warnings.empty()) << name << ": " << (r.report.warnings.empty() ? "" : r.report.warnings[0]);
  }
  auto train = read_parallel(dir + "/train", "en", "fr");
  for (const auto* side : {&train.corpus.source, &train.corpus.target})
    for (const auto& s : *side) {
      ASSERT_FALSE(s.empty());
      ASSERT_EQ(s.find("  "), std::string::npos);
      ASSERT_NE(s.front(), ' ');
      ASSERT_NE(s.back(), ' ');
    }
}

TEST(CorpusData, TatoebaFraEng) {
  const std::string path = nmt::test::data_dir() + "/tatoeba-fra-eng/fra.txt";
  if (!fs::exists(path)) GTEST_SKIP() << "Tatoeba fra-eng not found at " << path << " (set NMT_DATA)";
  auto r = read_tsv(path);
  EXPECT_EQ(r.corpus.size(), 76036u);  // the mirror has no malformed lines
  EXPECT_TRUE(r.report.warnings.empty());
  EXPECT_EQ(r.corpus.source[0], "Go.");
  EXPECT_EQ(r.corpus.target[0], "Va !");
  auto split = nmt::data::split_corpus(r.corpus, 1000, 1000, 1);
  EXPECT_EQ(split.train.size(), 74036u);
}

// scripts/get-data.sh --from: copies a local mirror and verifies it (the only mode testable offline).
TEST(CorpusGetData, CopiesFromMirrorIdempotently) {
  const std::string mirror = nmt::test::data_dir();
  if (!fs::exists(mirror + "/multi30k/train.en")) GTEST_SKIP() << "no data mirror under " << mirror;
  TempDir dest("nmt-getdata");
  const std::string cmd = nmt::test::source_dir() + "/scripts/get-data.sh --from " + mirror + " --dest " + dest.path();
  auto first = nmt::test::run_command(cmd);
  ASSERT_EQ(first.exit_code, 0) << first.out << first.err;
  EXPECT_EQ(nmt::read_file(dest.file("multi30k/val.fr")), nmt::read_file(mirror + "/multi30k/val.fr"));
  EXPECT_EQ(read_tsv(dest.file("tatoeba-fra-eng/fra.txt")).corpus.size(), 76036u);
  auto second = nmt::test::run_command(cmd);
  ASSERT_EQ(second.exit_code, 0) << second.out << second.err;
  EXPECT_NE(second.out.find("already present"), std::string::npos) << second.out;

  // A truncated file in the mirror fails the line-count check with a clear message.
  // (Built file by file: the mirror is read-only and fs::copy would carry that over.)
  TempDir bad("nmt-getdata-bad");
  for (const char* sub : {"multi30k", "tatoeba-fra-eng"}) {
    fs::create_directory(bad.file(sub));
    for (const auto& entry : fs::directory_iterator(mirror + "/" + sub))
      write_bytes(bad.file(std::string(sub) + "/" + entry.path().filename().string()),
                  nmt::read_file(entry.path().string()));
  }
  write_bytes(bad.file("multi30k/val.fr"), "only one line\n");
  TempDir dest2("nmt-getdata");
  auto failed = nmt::test::run_command(nmt::test::source_dir() + "/scripts/get-data.sh --from " + bad.path() +
                                       " --dest " + dest2.path());
  EXPECT_NE(failed.exit_code, 0);
  EXPECT_NE(failed.err.find("val.fr"), std::string::npos) << failed.err;
  EXPECT_NE(failed.err.find("1014"), std::string::npos) << failed.err;
}
