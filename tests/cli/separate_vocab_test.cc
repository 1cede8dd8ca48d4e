// Separate source and target vocabularies (`nmt train --separate-vocab [--src-vocab-size N]`):
// each side gets its own SentencePiece model (OUT/spm.src.model for the source, OUT/spm.model
// for the target) and the source its own embedding. Everything that reads a model directory
// (translate, eval, score, average, quantize, ensembles, --init-from, resuming) segments the
// source with the source model and the target with the target model.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>

#include <nlohmann/json.hpp>

#include "nmt/models/config.h"
#include "nmt/models/model_io.h"
#include "nmt/text/subword.h"
#include "nmt/util/error.h"
#include "test_support.h"

namespace fs = std::filesystem;
using nmt::test::CommandResult;
using nmt::test::fixture;
using nmt::test::nmt_binary;
using nmt::test::run_command;
using nmt::test::slurp;
using nmt::text::SubwordModel;

namespace {

std::string train_command(const std::string& preset, const std::string& out, const std::string& extra) {
  return nmt_binary() + " train --preset " + preset + " --train " + fixture("tiny") + " --valid " + fixture("tiny") +
         " --out " + out + " --seed 3 --threads 1 -q " + extra;
}

size_t lines(const std::string& text) { return static_cast<size_t>(std::count(text.begin(), text.end(), '\n')); }

// One gru-tiny with separate vocabularies, trained once for the suite: it learns the 8 pairs
// by heart in 300 updates, as the joint-vocabulary GruCli test's does.
class SeparateVocabularies : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new nmt::test::TempDir("nmt-vocab");
    trained_ = nmt::test::run_once_per_ctest(
        [](const std::string& out) {
          return train_command("gru-tiny", out,
                               "--separate-vocab --src-vocab-size 60 --max-steps 300 --valid-every 100 "
                               "--save-every 100 --keep-last 3");
        },
        model());
  }
  static void TearDownTestSuite() { delete dir_; }
  void SetUp() override { ASSERT_EQ(trained_.exit_code, 0) << trained_.err; }
  static std::string model() { return dir_->file("gru"); }
  static std::string file(const std::string& name) { return dir_->file(name); }

  static nmt::test::TempDir* dir_;
  static CommandResult trained_;
};
nmt::test::TempDir* SeparateVocabularies::dir_ = nullptr;
CommandResult SeparateVocabularies::trained_;

bool has_unknown(const std::vector<int>& ids) {
  return std::find(ids.begin(), ids.end(), SubwordModel::kUnkId) != ids.end();
}

TEST_F(SeparateVocabularies, EachSideGetsItsOwnSubwordModelAndEmbedding) {
  const auto source = SubwordModel::load(model() + "/spm.src.model");
  const auto target = SubwordModel::load(model() + "/spm.model");
  // Each model learned its own side's text only: the English fixture has no "é".
  EXPECT_TRUE(has_unknown(source.encode("é"))) << "the source model saw the target text";
  EXPECT_FALSE(has_unknown(target.encode("é")));
  EXPECT_FALSE(has_unknown(source.encode("dog")));

  const auto config = nlohmann::json::parse(slurp(model() + "/config.json"));
  EXPECT_EQ(config["model"]["shared_vocab"], false);
  EXPECT_EQ(config["model"]["src_vocab"], source.vocab_size());
  EXPECT_EQ(config["model"]["tgt_vocab"], target.vocab_size());
  EXPECT_LE(source.vocab_size(), 60);  // --src-vocab-size (an upper bound on a corpus this small)
  EXPECT_EQ(config["train"]["separate_vocab"], true);
  EXPECT_EQ(config["train"]["src_vocab_size"], 60);

  auto loaded = nmt::models::load_model(model());
  EXPECT_NE(loaded.model->named_parameters().find("tgt_embedding.weight"), nullptr) << "the embeddings are tied";
  EXPECT_EQ(loaded.model->named_parameters()["src_embedding.weight"].size(0), source.vocab_size());
}

TEST_F(SeparateVocabularies, TranslateEvalAndScoreSegmentEachSideWithItsModel) {
  // Learned by heart: any mix-up of the two models' ids would garble these.
  auto t = run_command(nmt_binary() + " translate -m " + model() + " --input " + fixture("tiny.en"));
  ASSERT_EQ(t.exit_code, 0) << t.err;
  EXPECT_EQ(t.out, slurp(fixture("tiny.fr")));
  auto e = run_command(nmt_binary() + " eval -m " + model() + " --src " + fixture("tiny.en") + " --ref " +
                       fixture("tiny.fr") + " --json --no-record");
  ASSERT_EQ(e.exit_code, 0) << e.err;
  EXPECT_GT(nlohmann::json::parse(e.out)["bleu"]["score"].get<double>(), 99.99);
  auto s = run_command(nmt_binary() + " score -m " + model() + " --src " + fixture("tiny.en") + " --tgt " +
                       fixture("tiny.fr") + " --normalize");
  ASSERT_EQ(s.exit_code, 0) << s.err;
  ASSERT_EQ(lines(s.out), 8u);
  EXPECT_GT(std::stod(s.out), -0.5) << "a memorised pair scored low: " << s.out;
}

TEST_F(SeparateVocabularies, AveragedAndQuantizedModelsKeepTheSourceModel) {
  auto a = run_command(nmt_binary() + " average " + model() + " --last 3 -o " + file("avg"));
  ASSERT_EQ(a.exit_code, 0) << a.err;
  auto q = run_command(nmt_binary() + " quantize " + model() + " -o " + file("int8"));
  ASSERT_EQ(q.exit_code, 0) << q.err;
  for (const char* copy : {"avg", "int8"}) {
    EXPECT_EQ(slurp(file(copy) + "/spm.src.model"), slurp(model() + "/spm.src.model")) << copy;
    auto t = run_command(nmt_binary() + " translate -m " + file(copy) + " --input " + fixture("tiny.en"));
    ASSERT_EQ(t.exit_code, 0) << copy << ": " << t.err;
    EXPECT_EQ(lines(t.out), 8u) << copy;
  }
}

TEST_F(SeparateVocabularies, AMissingSourceModelIsNamedInOneLine) {
  const std::string broken = file("broken");
  fs::create_directories(broken);
  for (const char* f : {"config.json", "spm.model", "model.pt"}) fs::copy_file(model() + "/" + f, broken + "/" + f);
  auto t = run_command(nmt_binary() + " translate -m " + broken + " --input " + fixture("tiny.en"));
  EXPECT_EQ(t.exit_code, 1) << t.err;
  EXPECT_EQ(lines(t.err), 1u) << t.err;
  EXPECT_NE(t.err.find("spm.src.model"), std::string::npos) << t.err;
  EXPECT_TRUE(t.out.empty());
}

TEST_F(SeparateVocabularies, EnsemblesNeedTheSameSubwordsOnBothSides) {
  // Same target text, options and seed, so the same target model; another source model.
  const std::string other = file("transformer-src40");
  auto r = run_command(train_command("transformer-tiny", other, "--separate-vocab --src-vocab-size 40 --max-steps 3"));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  ASSERT_EQ(slurp(other + "/spm.model"), slurp(model() + "/spm.model"));
  auto mixed = run_command(nmt_binary() + " translate -m " + model() + " -m " + other + " --input " + fixture("tiny.en"));
  EXPECT_EQ(mixed.exit_code, 2) << mixed.err;
  EXPECT_EQ(lines(mixed.err), 1u) << mixed.err;
  EXPECT_NE(mixed.err.find("model 2 of the ensemble uses another source subword vocabulary"), std::string::npos)
      << mixed.err;
  // A joint-vocabulary model differs on the target side already.
  const std::string joint = file("joint");
  ASSERT_EQ(run_command(train_command("gru-tiny", joint, "--max-steps 3")).exit_code, 0);
  auto with_joint = run_command(nmt_binary() + " translate -m " + model() + " -m " + joint + " --input " + fixture("tiny.en"));
  EXPECT_EQ(with_joint.exit_code, 2) << with_joint.err;
  EXPECT_NE(with_joint.err.find("another target subword vocabulary"), std::string::npos) << with_joint.err;
  // Models that share both sides ensemble (the Transformer alone translates too).
  auto same = run_command(nmt_binary() + " translate -m " + model() + " -m " + model() + " --input " + fixture("tiny.en"));
  ASSERT_EQ(same.exit_code, 0) << same.err;
  EXPECT_EQ(same.out, slurp(fixture("tiny.fr")));
  auto alone = run_command(nmt_binary() + " translate -m " + other + " --input " + fixture("tiny.en"));
  ASSERT_EQ(alone.exit_code, 0) << alone.err;
  EXPECT_EQ(lines(alone.out), 8u);
}

// --init-from takes the model's architecture and vocabulary layout; an option given beside it
// that changes the architecture is refused before any work.
TEST_F(SeparateVocabularies, InitFromTakesTheModelsLayoutAndRefusesAnotherArchitecture) {
  const std::string adopted = file("init-adopted");
  auto a = run_command(train_command("gru-tiny", adopted, "--init-from " + model() + " --max-steps 2"));
  ASSERT_EQ(a.exit_code, 0) << a.err;
  for (const char* f : {"spm.src.model", "spm.model"}) EXPECT_EQ(slurp(adopted + "/" + f), slurp(model() + "/" + f)) << f;

  const std::string refused = file("init-other");
  auto r = run_command(train_command("gru-tiny", refused, "--init-from " + model() + " --hidden 40 --max-steps 2"));
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_EQ(lines(r.err), 1u) << r.err;
  EXPECT_NE(r.err.find("--init-from"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("another architecture"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(refused));

  const std::string adapted = file("init-separate");
  auto ok = run_command(train_command("gru-tiny", adapted, "--init-from " + model() + " --separate-vocab --max-steps 2"));
  ASSERT_EQ(ok.exit_code, 0) << ok.err;
  for (const char* f : {"spm.src.model", "spm.model"}) EXPECT_EQ(slurp(adapted + "/" + f), slurp(model() + "/" + f)) << f;
}

TEST_F(SeparateVocabularies, AResumedRunKeepsItsSubwordModels) {
  const std::string out = file("resumed");
  const std::string options = "--separate-vocab --valid-bleu false --save-every 1 --log-every 1 --max-steps ";
  ASSERT_EQ(run_command(train_command("transformer-tiny", out, options + "2")).exit_code, 0);
  const std::string source_model = slurp(out + "/spm.src.model");
  auto r = run_command(train_command("transformer-tiny", out, options + "4"));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(slurp(out + "/spm.src.model"), source_model);
  const std::string metrics = slurp(out + "/metrics.jsonl");
  EXPECT_NE(metrics.find("\"step\":4"), std::string::npos) << metrics;
}

TEST(SeparateVocabularyOptions, BadValuesAreRefusedInOneLineBeforeAnyWork) {
  nmt::test::TempDir dir;
  const std::string out = dir.file("never");
  for (const std::string& bad : std::vector<std::string>{"--src-vocab-size 50", "--separate-vocab --src-vocab-size 3",
                                 "--separate-vocab --src-vocab-size -1", "--separate-vocab --src-vocab-size 2000000"}) {
    auto r = run_command(train_command("transformer-tiny", out, bad));
    EXPECT_EQ(r.exit_code, 2) << bad << ": " << r.err;
    EXPECT_EQ(lines(r.err), 1u) << bad << ": " << r.err;
    EXPECT_NE(r.err.find("--src-vocab-size"), std::string::npos) << bad << ": " << r.err;
    EXPECT_FALSE(fs::exists(out)) << bad;
  }
}

// A config.json that says "one joint vocabulary" with two sizes would quietly untie the
// embeddings; it is refused, naming the keys.
TEST(SeparateVocabularyOptions, AJointVocabularyWithTwoSizesIsRefused) {
  const auto config = nlohmann::json::parse(R"({"type": "gru", "src_vocab": 60, "tgt_vocab": 80, "shared_vocab": true})");
  nmt::test::expect_error<nmt::RuntimeError>([&] { nmt::models::ModelConfig::from_json(config); },
                                             {"'shared_vocab' is true", "'src_vocab' (60)", "'tgt_vocab' (80)"});
  auto separate = config;
  separate["shared_vocab"] = false;
  EXPECT_EQ(nmt::models::ModelConfig::from_json(separate).src_vocab, 60);
}

}  // namespace
