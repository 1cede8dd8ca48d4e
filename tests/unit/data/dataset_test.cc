// Prepared datasets (`nmt prepare`, data/dataset.h): what goes in comes back id for id, in any
// compression; a damaged, truncated or foreign dataset is refused naming the file; a failed
// prepare leaves nothing behind; epochs over a dataset visit every pair once.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <set>
#include <string>
#include <vector>

#include "nmt/data/batching.h"
#include "nmt/data/corpus.h"
#include "nmt/data/dataset.h"
#include "nmt/data/line_reader.h"
#include "nmt/data/prepare.h"
#include "nmt/text/subword.h"
#include "nmt/util/error.h"
#include "test_support.h"

namespace fs = std::filesystem;
using nmt::RuntimeError;
using nmt::UsageError;
using nmt::data::MappedDataset;
using nmt::data::PrepareOptions;
using nmt::test::expect_error;
using nmt::test::TempDir;

namespace {

// 300 pairs recombined from the tiny fixture, one bad line (no tab) and one empty side.
std::string write_tsv(const TempDir& dir) {
  auto r = nmt::data::read_parallel(nmt::test::source_dir() + "/data/fixtures/tiny", "en", "fr");
  std::ofstream out(dir.file("corpus.tsv"));
  for (size_t k = 0; k < 300; ++k) {
    const size_t a = k % r.corpus.size(), b = (k / 7) % r.corpus.size();
    out << "Number " << k << ": " << r.corpus.source[a] << " " << r.corpus.source[b] << "\t"
        << "Numéro " << k << " : " << r.corpus.target[a] << " " << r.corpus.target[b] << "\n";
    if (k == 10) out << "a line without a tab\n";
    if (k == 20) out << "an empty target\t \n";
  }
  return dir.file("corpus.tsv");
}

class DatasetTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string why;
    if (!nmt::text::SubwordModel::available(&why)) GTEST_SKIP() << why;
    tsv = write_tsv(dir);
  }
  PrepareOptions options(const std::string& out) const {
    PrepareOptions o;
    o.train_tsv = tsv;
    o.out_dir = dir.file(out);
    o.subword.vocab_size = 200;
    o.subword.hard_vocab_limit = false;
    o.shard_pairs = 64;
    o.quiet = true;
    return o;
  }
  TempDir dir;
  std::string tsv;
};

std::string shard_path(const std::string& dataset, int k) {
  char name[32];
  std::snprintf(name, sizeof name, "shard-%05d.nmtds", k);
  return dataset + "/" + name;
}

}  // namespace

TEST_F(DatasetTest, EveryGoodPairComesBackAsItsSubwordIdsInOrder) {
  const auto report = nmt::data::prepare_dataset(options("d"));
  EXPECT_EQ(report.lines, 302u);
  EXPECT_EQ(report.skipped, 2u);
  EXPECT_EQ(report.pairs, 300u);
  EXPECT_EQ(report.shards, 5u);  // 64 pairs each, the last 44
  const auto dataset = MappedDataset::open(dir.file("d"));
  ASSERT_EQ(dataset->size(), 300u);
  const auto sp = nmt::text::SubwordModel::load(dir.file("d/spm.model"));
  auto corpus = nmt::data::read_tsv(tsv).corpus;
  ASSERT_EQ(corpus.size(), 300u);
  std::vector<int> src, tgt;
  for (size_t i = 0; i < corpus.size(); ++i) {
    dataset->pair(i, src, tgt);
    ASSERT_EQ(src, sp.encode(corpus.source[i])) << i;
    ASSERT_EQ(tgt, sp.encode(corpus.target[i])) << i;
    EXPECT_EQ(dataset->length(i).src, src.size());
    EXPECT_EQ(dataset->length(i).tgt, tgt.size());
  }
  EXPECT_NO_THROW(dataset->verify());
}

TEST_F(DatasetTest, CompressedCorporaGiveTheSameDataset) {
  nmt::data::prepare_dataset(options("plain"));
  for (const char* tool : {"gzip", "xz"}) {
    const std::string ext = std::string(tool) == "gzip" ? ".gz" : ".xz";
    if (nmt::test::run_command(std::string(tool) + " -c " + tsv + " > " + tsv + ext).exit_code != 0) continue;
    PrepareOptions o = options(std::string("from-") + tool);
    o.train_tsv = tsv + ext;
    o.subword_model = dir.file("plain/spm.model");
    nmt::data::prepare_dataset(o);
    const auto a = nmt::data::DatasetManifest::read(dir.file("plain"));
    const auto b = nmt::data::DatasetManifest::read(o.out_dir);
    ASSERT_EQ(a.shards.size(), b.shards.size()) << tool;
    for (size_t k = 0; k < a.shards.size(); ++k) EXPECT_EQ(a.shards[k].checksum, b.shards[k].checksum) << tool;
  }
}

TEST_F(DatasetTest, ATruncatedArchiveIsAnErrorNotAShorterCorpus) {
  ASSERT_EQ(nmt::test::run_command("gzip -c " + tsv + " | head -c 2000 > " + tsv + ".gz").exit_code, 0);
  PrepareOptions o = options("d");
  o.train_tsv = tsv + ".gz";
  expect_error<RuntimeError>([&] { nmt::data::prepare_dataset(o); }, {"corpus.tsv.gz", "gzip", "truncated"});
  EXPECT_FALSE(fs::exists(o.out_dir));
}

TEST_F(DatasetTest, AnExistingOutputDirectoryIsNeverOverwritten) {
  fs::create_directory(dir.file("d"));
  std::ofstream(dir.file("d/keep.txt")) << "mine";
  expect_error<UsageError>([&] { nmt::data::prepare_dataset(options("d")); }, {"exists"});
  EXPECT_EQ(nmt::test::slurp(dir.file("d/keep.txt")), "mine");
}

TEST_F(DatasetTest, AFailedPrepareLeavesNoDirectoryBehind) {
  std::ofstream(dir.file("p.en")) << "one\ntwo\nthree\n";
  std::ofstream(dir.file("p.fr")) << "un\ndeux\n";
  PrepareOptions o = options("d");
  o.train_tsv.clear();
  o.train_prefix = dir.file("p");
  expect_error<UsageError>([&] { nmt::data::prepare_dataset(o); }, {"p.fr", "ends after 2 lines", "p.en"});
  for (const auto& entry : fs::directory_iterator(dir.path()))
    EXPECT_EQ(entry.path().filename().string().find("partial"), std::string::npos) << entry.path();
  EXPECT_FALSE(fs::exists(o.out_dir));
}

TEST_F(DatasetTest, ATruncatedShardIsRefusedNamingIt) {
  nmt::data::prepare_dataset(options("d"));
  fs::resize_file(shard_path(dir.file("d"), 2), fs::file_size(shard_path(dir.file("d"), 2)) - 10);
  expect_error<RuntimeError>([&] { MappedDataset::open(dir.file("d")); }, {"shard-00002.nmtds", "truncated"});
}

TEST_F(DatasetTest, AMissingShardIsRefusedNamingIt) {
  nmt::data::prepare_dataset(options("d"));
  fs::remove(shard_path(dir.file("d"), 4));
  expect_error<RuntimeError>([&] { MappedDataset::open(dir.file("d")); }, {"shard-00004.nmtds", "No such file"});
}

TEST_F(DatasetTest, AFlippedByteIsFoundByVerifyAndABadIdWhenRead) {
  nmt::data::prepare_dataset(options("d"));
  const std::string shard = shard_path(dir.file("d"), 1);
  {
    std::fstream f(shard, std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(-3, std::ios::end);  // the high byte of the shard's last id: now far outside the vocabulary
    f.put('\x7f');
  }
  const auto dataset = MappedDataset::open(dir.file("d"));
  expect_error<RuntimeError>([&] { dataset->verify(); }, {"shard-00001.nmtds", "checksum"});
  std::vector<int> src, tgt;
  expect_error<RuntimeError>([&] { dataset->pair(127, src, tgt); }, {"shard-00001.nmtds", "outside the vocabulary"});
}

TEST_F(DatasetTest, AManifestFromAnotherDatasetIsRefused) {
  nmt::data::prepare_dataset(options("a"));
  PrepareOptions o = options("b");
  o.shard_pairs = 100;
  nmt::data::prepare_dataset(o);
  fs::copy_file(dir.file("b/manifest.json"), dir.file("a/manifest.json"), fs::copy_options::overwrite_existing);
  expect_error<RuntimeError>([&] { MappedDataset::open(dir.file("a")); }, {"shard-00000.nmtds"});
}

TEST(EpochPermutation, IsABijectionOfEverySizeAndDiffersBetweenEpochs) {
  for (uint64_t n : {1u, 2u, 3u, 5u, 17u, 1000u, 4097u}) {
    const nmt::data::EpochPermutation e1(n, 7, 1), e2(n, 7, 2), again(n, 7, 1);
    std::set<uint64_t> seen;
    bool differs = false;
    for (uint64_t p = 0; p < n; ++p) {
      const uint64_t x = e1(p);
      ASSERT_LT(x, n);
      seen.insert(x);
      EXPECT_EQ(x, again(p));
      differs = differs || x != e2(p);
    }
    EXPECT_EQ(seen.size(), n);
    if (n >= 17) {
      EXPECT_TRUE(differs) << n;
    }
  }
}

TEST(EpochPermutation, PoolsCoverTheEpochOnceAndAreShuffledAcrossTheWholeDataset) {
  const uint64_t n = 10'000, pool = 3'000;
  const nmt::data::EpochPermutation order(n, 1, 1);
  ASSERT_EQ(nmt::data::pool_count(n, pool), 4u);
  std::vector<uint64_t> all;
  for (uint64_t p = 0; p < 4; ++p) {
    const auto members = nmt::data::pool_members(order, p, pool);
    EXPECT_EQ(members.size(), p < 3 ? pool : n - 3 * pool);
    // A pool is a sample of the whole dataset, not a run of neighbours: its members span it.
    EXPECT_LT(*std::min_element(members.begin(), members.end()), n / 10);
    EXPECT_GT(*std::max_element(members.begin(), members.end()), n - n / 10);
    all.insert(all.end(), members.begin(), members.end());
  }
  std::sort(all.begin(), all.end());
  for (uint64_t i = 0; i < n; ++i) ASSERT_EQ(all[i], i);
}
