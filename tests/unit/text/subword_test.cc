// SentencePiece wrapper: training, fixed special ids, round trips, loading errors.
#include <gtest/gtest.h>

#include <dlfcn.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <set>
#include <thread>

#include "nmt/data/corpus.h"
#include "nmt/text/spm_proto.h"
#include "nmt/text/subword.h"
#include "nmt/util/error.h"
#include "nmt/util/io.h"
#include "test_support.h"

namespace fs = std::filesystem;
using nmt::RuntimeError;
using nmt::UsageError;
using nmt::text::SubwordModel;
using nmt::text::SubwordOptions;
using nmt::test::TempDir;
using nmt::test::write_bytes;

namespace {

using nmt::test::expect_error;

// Joint source+target sentences of the tiny fixture (always present).
std::vector<std::string> fixture_sentences() {
  auto r = nmt::data::read_parallel(nmt::test::source_dir() + "/data/fixtures/tiny", "en", "fr");
  std::vector<std::string> all = r.corpus.source;
  all.insert(all.end(), r.corpus.target.begin(), r.corpus.target.end());
  return all;
}

SubwordOptions small_options(int vocab) {
  SubwordOptions o;
  o.vocab_size = vocab;
  o.hard_vocab_limit = false;  // the fixture cannot fill a fixed vocabulary
  return o;
}

// Skips (with the reason) where SentencePiece cannot be loaded, e.g. AddressSanitizer builds.
class SubwordFixture : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string why;
    if (!SubwordModel::available(&why)) GTEST_SKIP() << why;
  }
};

}  // namespace

TEST_F(SubwordFixture, SpecialIdsAndRoundTrip) {
  const auto sentences = fixture_sentences();
  const SubwordModel m = SubwordModel::load_from_serialized(SubwordModel::train_serialized(sentences, small_options(120)));
  EXPECT_GT(m.vocab_size(), 4);
  EXPECT_LE(m.vocab_size(), 120);
  EXPECT_EQ(m.pieces({0, 1, 2, 3}), (std::vector<std::string>{"<pad>", "<unk>", "<s>", "</s>"}));
  EXPECT_EQ(m.piece_to_id("<pad>"), SubwordModel::kPadId);
  EXPECT_EQ(m.piece_to_id("<unk>"), SubwordModel::kUnkId);
  EXPECT_EQ(m.piece_to_id("<s>"), SubwordModel::kBosId);
  EXPECT_EQ(m.piece_to_id("</s>"), SubwordModel::kEosId);
  EXPECT_EQ(SubwordModel::kPadId, 0);
  EXPECT_EQ(SubwordModel::kUnkId, 1);
  EXPECT_EQ(SubwordModel::kBosId, 2);
  EXPECT_EQ(SubwordModel::kEosId, 3);
  for (const auto& s : sentences) {
    const std::vector<int> ids = m.encode(s);
    ASSERT_FALSE(ids.empty());
    for (int id : ids) {
      EXPECT_GT(id, SubwordModel::kUnkId) << s;  // no pad/unk/bos/eos: every character was seen
      EXPECT_LT(id, m.vocab_size());
    }
    EXPECT_EQ(m.decode(ids), s);
  }
}

TEST_F(SubwordFixture, DecodeIgnoresPadBosEos) {
  const SubwordModel m = SubwordModel::load_from_serialized(SubwordModel::train_serialized(fixture_sentences(), small_options(100)));
  std::vector<int> ids = m.encode("A dog sleeps.");
  std::vector<int> framed = {SubwordModel::kBosId};
  framed.insert(framed.end(), ids.begin(), ids.end());
  framed.insert(framed.end(), {SubwordModel::kEosId, SubwordModel::kPadId, SubwordModel::kPadId});
  EXPECT_EQ(m.decode(framed), "A dog sleeps.");
  EXPECT_EQ(m.decode({}), "");
  // Unknown characters map to <unk> and decode to SentencePiece's " ⁇ " surface.
  const std::vector<int> unk = m.encode("Ω");
  EXPECT_NE(std::find(unk.begin(), unk.end(), SubwordModel::kUnkId), unk.end());
  expect_error<RuntimeError>([&] { m.decode({5, m.vocab_size()}); }, {"subword id", "out of range"});
  expect_error<RuntimeError>([&] { m.pieces({-1}); }, {"subword id -1 out of range"});
}

TEST_F(SubwordFixture, NormalisesWhitespaceAndNfkc) {
  const SubwordModel m = SubwordModel::load_from_serialized(SubwordModel::train_serialized(fixture_sentences(), small_options(100)));
  EXPECT_EQ(m.decode(m.encode("  A   dog  ")), "A dog");
  // NFKC maps U+202F (narrow no-break space before French punctuation) to a plain space.
  EXPECT_EQ(m.encode("Un chien\xE2\x80\xAF!"), m.encode("Un chien !"));
}

TEST_F(SubwordFixture, SaveLoadAndSerialized) {
  TempDir dir("nmt-subword");
  const std::string path = dir.file("spm.model");
  SubwordModel::train(fixture_sentences(), small_options(100), path);
  ASSERT_TRUE(fs::exists(path));
  const SubwordModel a = SubwordModel::load(path);
  const SubwordModel b = SubwordModel::load_from_serialized(a.serialized());
  EXPECT_EQ(a.serialized(), nmt::read_file(path));
  EXPECT_EQ(a.encode("Two friends read."), b.encode("Two friends read."));
  SubwordModel c = a;  // copies share the immutable model
  EXPECT_EQ(c.vocab_size(), a.vocab_size());
  SubwordModel empty;
  EXPECT_FALSE(empty.loaded());
  expect_error<RuntimeError>([&] { empty.encode("x"); }, {"before it was loaded"});
}

TEST_F(SubwordFixture, TrainingIsDeterministic) {
  const auto sentences = fixture_sentences();
  SubwordOptions o = small_options(100);
  const std::string a = SubwordModel::train_serialized(sentences, o);
  EXPECT_EQ(a, SubwordModel::train_serialized(sentences, o));
  EXPECT_EQ(a.find("nmt-spm-"), std::string::npos) << "the temporary input path must not be stored";
  o.model_type = "bpe";
  EXPECT_EQ(SubwordModel::train_serialized(sentences, o), SubwordModel::train_serialized(sentences, o));
}

TEST_F(SubwordFixture, LoadErrorsNameTheFile) {
  TempDir dir("nmt-subword");
  expect_error<RuntimeError>([&] { SubwordModel::load(dir.file("missing.model")); },
                             {dir.file("missing.model"), "no such file"});
  expect_error<RuntimeError>([&] { SubwordModel::load(dir.path()); }, {dir.path(), "is a directory"});
  write_bytes(dir.file("garbage.model"), "this is not a sentencepiece model\n\xFF\xFE");
  expect_error<RuntimeError>([&] { SubwordModel::load(dir.file("garbage.model")); }, {dir.file("garbage.model")});
  write_bytes(dir.file("empty.model"), "");
  expect_error<RuntimeError>([&] { SubwordModel::load(dir.file("empty.model")); }, {dir.file("empty.model")});
  // A truncated model.
  const std::string good = SubwordModel::train_serialized(fixture_sentences(), small_options(100));
  write_bytes(dir.file("cut.model"), good.substr(0, good.size() / 2));
  expect_error<RuntimeError>([&] { SubwordModel::load(dir.file("cut.model")); }, {dir.file("cut.model")});
}

TEST_F(SubwordFixture, RejectsForeignSpecialIdLayout) {
  // Swap the names of pieces 0 and 1 (both 5 bytes; the pieces are serialized first), so that
  // "<pad>" is no longer a control piece: SentencePiece then reports pad_id() = -1.
  std::string proto = SubwordModel::train_serialized(fixture_sentences(), small_options(100));
  const size_t pad = proto.find("<pad>"), unk = proto.find("<unk>");
  ASSERT_NE(pad, std::string::npos);
  ASSERT_NE(unk, std::string::npos);
  proto.replace(pad, 5, "<unk>");
  proto.replace(unk, 5, "<pad>");
  TempDir dir("nmt-subword");
  write_bytes(dir.file("foreign.model"), proto);
  expect_error<RuntimeError>([&] { SubwordModel::load(dir.file("foreign.model")); },
                             {dir.file("foreign.model"), "pad=-1", "expected pad=0 unk=1 bos=2 eos=3"});
}

// ---- Sampling for subword regularisation ----

// Several fixture sentences as one: long enough to have very many segmentations.
std::string long_sentence() {
  std::string all;
  for (const auto& s : fixture_sentences()) all += (all.empty() ? "" : " ") + s;
  return all;
}

TEST_F(SubwordFixture, SampleEncodeIsDeterministicForASeed) {
  const SubwordModel m =
      SubwordModel::load_from_serialized(SubwordModel::train_serialized(fixture_sentences(), small_options(100)));
  const std::string text = long_sentence();
  const std::vector<int> first = m.sample_encode(text, -1, 0.1f, 7);
  m.sample_encode(text, -1, 0.1f, 8);  // other calls in between change nothing
  m.sample_encode("A dog sleeps.", 5, 0.5f, 7);
  EXPECT_EQ(m.sample_encode(text, -1, 0.1f, 7), first);
  std::vector<int> on_other_thread;
  std::thread([&] { on_other_thread = m.sample_encode(text, -1, 0.1f, 7); }).join();
  EXPECT_EQ(on_other_thread, first);
  // The same for n-best sampling, and for seeds differing only in their high 32 bits.
  EXPECT_EQ(m.sample_encode(text, 8, 0.5f, 1ULL << 40), m.sample_encode(text, 8, 0.5f, 1ULL << 40));
  EXPECT_NE(m.sample_encode(text, -1, 0.1f, 1ULL << 40), m.sample_encode(text, -1, 0.1f, 2ULL << 40));
}

TEST_F(SubwordFixture, DifferentSeedsSampleDifferentSegmentations) {
  const SubwordModel m =
      SubwordModel::load_from_serialized(SubwordModel::train_serialized(fixture_sentences(), small_options(100)));
  const std::string text = long_sentence();
  for (const int nbest : {-1, 64}) {
    std::set<std::vector<int>> seen;
    for (uint64_t seed = 0; seed < 10; ++seed) seen.insert(m.sample_encode(text, nbest, 0.1f, seed));
    EXPECT_GE(seen.size(), 8u) << "nbest " << nbest << ": 10 seeds gave only " << seen.size() << " segmentations";
  }
  EXPECT_EQ(m.sample_encode("", -1, 0.1f, 3), std::vector<int>{});
  EXPECT_EQ(m.sample_encode("", 8, 0.1f, 3), std::vector<int>{});
  // nbest 1 is no sampling: encode()'s segmentation whatever the seed.
  EXPECT_EQ(m.sample_encode(text, 1, 0.1f, 3), m.encode(text));
  // A large alpha concentrates the lattice on the best segmentation.
  EXPECT_EQ(m.sample_encode("A dog sleeps.", -1, 100.0f, 3), m.encode("A dog sleeps."));
}

TEST_F(SubwordFixture, SampledEncodingsDecodeToTheText) {
  for (const char* type : {"unigram", "bpe"}) {
    SubwordOptions o = small_options(100);
    o.model_type = type;
    const SubwordModel m = SubwordModel::load_from_serialized(SubwordModel::train_serialized(fixture_sentences(), o));
    size_t differing = 0;
    for (const auto& s : fixture_sentences()) {
      for (const int nbest : {-1, 4}) {
        const std::vector<int> ids = m.sample_encode(s, nbest, 0.2f, 11);
        for (int id : ids) EXPECT_GT(id, SubwordModel::kUnkId) << type << ": " << s;
        EXPECT_EQ(m.decode(ids), m.decode(m.encode(s))) << type << ", nbest " << nbest;
        differing += ids != m.encode(s);
      }
    }
    EXPECT_GT(differing, 0u) << type << ": sampling never left encode()'s segmentation";
  }
}

TEST_F(SubwordFixture, SampleEncodeRejectsInvalidNbestAndAlpha) {
  const SubwordModel m =
      SubwordModel::load_from_serialized(SubwordModel::train_serialized(fixture_sentences(), small_options(60)));
  for (const int nbest : {0, -2, SubwordModel::kMaxSampleNbest + 1})
    expect_error<UsageError>([&] { m.sample_encode("A dog.", nbest, 0.1f, 1); },
                             {"subword sampling nbest " + std::to_string(nbest), "-1", "1..512"});
  for (const float alpha : {-0.1f, std::nanf(""), INFINITY})
    expect_error<UsageError>([&] { m.sample_encode("A dog.", -1, alpha, 1); }, {"subword sampling alpha", ">= 0"});
  EXPECT_NO_THROW(m.sample_encode("A dog.", SubwordModel::kMaxSampleNbest, 0.0f, 1));
  SubwordModel empty;
  expect_error<RuntimeError>([&] { empty.sample_encode("x", -1, 0.1f, 1); }, {"before it was loaded"});
}

// SentencePiece must stay out of the global symbol scope (see subword.cc): otherwise its bundled
// protobuf clashes with the system libprotobuf that LibTorch uses.
TEST_F(SubwordFixture, SentencePieceIsNotGloballyVisible) {
  SubwordModel::load_from_serialized(SubwordModel::train_serialized(fixture_sentences(), small_options(60)));
  EXPECT_EQ(dlsym(RTLD_DEFAULT, "_ZN13sentencepiece22SentencePieceProcessorC1Ev"), nullptr)
      << "libsentencepiece is linked into the test binary; link nothing against it directly";
  EXPECT_EQ(dlsym(RTLD_DEFAULT, "nmt_spm_load"), nullptr) << "libnmt_spm.so must be loaded RTLD_LOCAL";
}

// Run by WithoutItsLibrarySentencePieceIsUnavailableWithOneClearLine in a child process whose
// NMT_SPM_LIBRARY names a missing file (the library is loaded once per process).
TEST(SubwordChild, DISABLED_ReportWhyUnavailable) {
  std::string why;
  EXPECT_FALSE(SubwordModel::available(&why));
  std::printf("why: %s\n", why.c_str());
  expect_error<RuntimeError>([] { SubwordModel::load_from_serialized("x"); }, {"libnmt_spm.so not found"});
}

TEST(SubwordLibrary, WithoutItsLibrarySentencePieceIsUnavailableWithOneClearLine) {
  TempDir dir("nmt-subword");
  const std::string missing = dir.file("libnmt_spm.so");
  const auto r =
      nmt::test::run_command("NMT_SPM_LIBRARY=" + missing + " " + fs::read_symlink("/proc/self/exe").string() +
                             " --gtest_also_run_disabled_tests --gtest_filter=SubwordChild.*");
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("why: cannot use SentencePiece: libnmt_spm.so not found (looked for " + missing +
                       "); rebuild nmt, or set NMT_SPM_LIBRARY\n"),
            std::string::npos)
      << r.out;
}

TEST_F(SubwordFixture, InvalidOptions) {
  const auto sentences = fixture_sentences();
  SubwordOptions o;
  o.model_type = "word";
  expect_error<UsageError>([&] { SubwordModel::train_serialized(sentences, o); }, {"'word'", "unigram or bpe"});
  o = SubwordOptions{};
  o.vocab_size = 4;
  expect_error<UsageError>([&] { SubwordModel::train_serialized(sentences, o); }, {"vocab size 4"});
  o = SubwordOptions{};
  o.character_coverage = 0;
  expect_error<UsageError>([&] { SubwordModel::train_serialized(sentences, o); }, {"character coverage"});
  expect_error<RuntimeError>([&] { SubwordModel::train_serialized({"", ""}, SubwordOptions{}); },
                             {"no non-empty training sentences"});
  // A fixed vocabulary larger than the text supports is SentencePiece's error, reported in one line.
  o = SubwordOptions{};
  o.vocab_size = 5000;
  expect_error<RuntimeError>([&] { SubwordModel::train_serialized(sentences, o); },
                             {"subword training failed", "vocab size 5000"});
}

// ---- On Multi30k (skipped without the data mirror) ----

class SubwordMulti30k : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    const std::string prefix = nmt::test::data_dir() + "/multi30k/train";
    if (!fs::exists(prefix + ".en")) return;
    auto r = nmt::data::read_parallel(prefix, "en", "fr");
    corpus_ = new nmt::data::ParallelCorpus(std::move(r.corpus));
    corpus_->source.resize(3000);
    corpus_->target.resize(3000);
    joint_ = new std::vector<std::string>(corpus_->source);
    joint_->insert(joint_->end(), corpus_->target.begin(), corpus_->target.end());
  }
  static void TearDownTestSuite() {
    delete corpus_;
    delete joint_;
    corpus_ = nullptr;
    joint_ = nullptr;
  }
  void SetUp() override {
    std::string why;
    if (!SubwordModel::available(&why)) GTEST_SKIP() << why;
    if (!corpus_) GTEST_SKIP() << "Multi30k not found under " << nmt::test::data_dir() << " (set NMT_DATA)";
  }
  static nmt::data::ParallelCorpus* corpus_;
  static std::vector<std::string>* joint_;
};
nmt::data::ParallelCorpus* SubwordMulti30k::corpus_ = nullptr;
std::vector<std::string>* SubwordMulti30k::joint_ = nullptr;

TEST_F(SubwordMulti30k, UnigramAndBpeRoundTrip) {
  for (const char* type : {"unigram", "bpe"}) {
    SubwordOptions o;
    o.model_type = type;
    o.vocab_size = 400;
    const SubwordModel m = SubwordModel::load_from_serialized(SubwordModel::train_serialized(*joint_, o));
    EXPECT_EQ(m.vocab_size(), 400) << type;
    size_t pieces = 0, chars = 0;
    for (const auto& s : *joint_) {
      const auto ids = m.encode(s);
      ASSERT_EQ(m.decode(ids), s) << type;
      pieces += ids.size();
      chars += s.size();
    }
    // A 400-piece vocabulary should still compress well beyond characters.
    EXPECT_LT(static_cast<double>(pieces) / static_cast<double>(chars), 0.5) << type;
  }
}

TEST_F(SubwordMulti30k, SampleCapIsSeeded) {
  SubwordOptions o;
  o.vocab_size = 300;
  o.input_sentence_size = 1000;  // sample 1000 of the 6000 sentences
  const std::string a = SubwordModel::train_serialized(*joint_, o);
  EXPECT_EQ(a, SubwordModel::train_serialized(*joint_, o));
  o.seed = 2;
  EXPECT_NE(a, SubwordModel::train_serialized(*joint_, o));
}

// nmt import renumbers an imported model's SentencePiece pieces to the imported vocabulary's
// order (nmt/text/spm_proto.h): the text must segment exactly as before, into the new ids.
TEST_F(SubwordFixture, ARenumberedModelSegmentsAsTheOriginalIntoTheNewIds) {
  const std::string bytes = SubwordModel::train_serialized(fixture_sentences(), small_options(100));
  const SubwordModel original = SubwordModel::load_from_serialized(bytes);
  const nmt::text::SpmProto proto = nmt::text::parse_spm_proto(bytes, "fixture");
  ASSERT_EQ(static_cast<int>(proto.pieces.size()), original.vocab_size());
  // The text pieces reversed, with two pieces the model lacks in between (an imported shared
  // vocabulary holds the other side's pieces too).
  std::vector<std::string> vocabulary{"<pad>", "<unk>", "<s>", "</s>", "▁zzqx"};
  for (int id = original.vocab_size() - 1; id >= 4; --id) vocabulary.push_back(original.pieces({id}).front());
  vocabulary.push_back("qqz");
  const SubwordModel renumbered =
      SubwordModel::load_from_serialized(nmt::text::spm_proto_for_vocabulary(proto, vocabulary), "renumbered");
  ASSERT_EQ(renumbered.vocab_size(), static_cast<int>(vocabulary.size()));
  for (const std::string& s : fixture_sentences()) {
    const auto ids = renumbered.encode(s);
    EXPECT_EQ(renumbered.pieces(ids), original.pieces(original.encode(s))) << s;
    EXPECT_EQ(renumbered.decode(ids), original.decode(original.encode(s)));
    for (int id : ids) EXPECT_NE(vocabulary[static_cast<size_t>(id)], "qqz");  // absent pieces are never produced
  }
  EXPECT_EQ(renumbered.encode("zzqx qqz").size(), original.encode("zzqx qqz").size());
  EXPECT_EQ(renumbered.piece_to_id("qqz"), static_cast<int>(vocabulary.size()) - 1);
}

TEST(SpmProto, MalformedBytesAreRefusedNamingTheFile) {
  expect_error<RuntimeError>([] { nmt::text::parse_spm_proto("\x0a\x05" "ab", "m.spm"); },
                             {"m.spm: not a SentencePiece model (truncated)"});
  expect_error<RuntimeError>([] { nmt::text::parse_spm_proto("", "m.spm"); }, {"m.spm: not a SentencePiece model (no pieces)"});
  expect_error<RuntimeError>([] { nmt::text::parse_spm_proto(std::string(12, '\xff'), "m.spm"); }, {"m.spm: not a"});
}
