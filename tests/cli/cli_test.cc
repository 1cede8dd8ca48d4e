// The real `nmt` binary end to end: start-up, train → translate → eval on a tiny corpus.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <vector>

#include <nlohmann/json.hpp>

#include "test_support.h"

using nmt::test::run_command;

namespace {

using nmt::test::fixture;
using nmt::test::slurp;

// Starting the binary must not crash in static initialisation (protobuf link order).
TEST(Cli, BinaryStartsAndPrintsHelp) {
  auto r = run_command(nmt::test::nmt_binary() + " --help");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("train"), std::string::npos);
  EXPECT_NE(r.out.find("translate"), std::string::npos);
}

TEST(Cli, UnknownOptionIsAUsageError) {
  auto r = run_command(nmt::test::nmt_binary() + " train --out /tmp/never-created --no-such-option 1");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("no-such-option"), std::string::npos) << r.err;
}

TEST(Cli, MissingModelDirectoryIsARuntimeError) {
  auto r = run_command("echo hello | " + nmt::test::nmt_binary() + " translate -m /nonexistent/model");
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("/nonexistent/model"), std::string::npos) << r.err;
}

std::string train_tiny(const std::string& out, const std::string& extra = "") {
  return nmt::test::nmt_binary() + " train --preset transformer-tiny --train " + fixture("tiny") + " --valid " +
         fixture("tiny") + " --out " + out + " --max-steps 300 --valid-every 100 --log-every 50 --lr 5e-3 --seed 3 --threads 1 " + extra;
}

// SentencePiece is reached through libnmt_spm.so (lib/CMakeLists.txt); without it training
// stops with exit 1 and one line naming the library and where it was looked for.
TEST(Cli, MissingSentencePieceLibraryIsOneLine) {
  nmt::test::TempDir dir;
  const std::string missing = dir.file("libnmt_spm.so");
  auto r = run_command("NMT_SPM_LIBRARY=" + missing + " " + train_tiny(dir.file("model")));
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_NE(r.err.find("cannot use SentencePiece: libnmt_spm.so not found (looked for " + missing + ")"),
            std::string::npos)
      << r.err;
  size_t error_lines = 0;
  std::istringstream lines(r.err);
  for (std::string line; std::getline(lines, line);) error_lines += line.rfind("nmt: error:", 0) == 0;
  EXPECT_EQ(error_lines, 1u) << r.err;
}

// A tiny model learns a handful of pairs by heart through the CLI, translates them back
// exactly, and `eval` scores them at 100 BLEU.
TEST(Cli, TinyTransformerOverfitsThroughTrainAndTranslate) {
  nmt::test::TempDir dir;
  const std::string out = dir.file("model");
  auto r = run_command(train_tiny(out));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  for (const char* f : {"config.json", "spm.model", "model.pt", "metrics.jsonl", "checkpoints/step-00000300/manifest.json"})
    EXPECT_TRUE(std::filesystem::exists(out + "/" + f)) << f;
  auto t = run_command(nmt::test::nmt_binary() + " translate -m " + out + " --input " + fixture("tiny.en"));
  ASSERT_EQ(t.exit_code, 0) << t.err;
  EXPECT_EQ(t.out, slurp(fixture("tiny.fr")));
  auto e = run_command(nmt::test::nmt_binary() + " eval -m " + out + " --src " + fixture("tiny.en") + " --ref " +
                       fixture("tiny.fr") + " --json");
  ASSERT_EQ(e.exit_code, 0) << e.err;
  auto j = nlohmann::json::parse(e.out);
  EXPECT_GT(j["bleu"]["score"].get<double>(), 99.99);
  EXPECT_GT(j["chrf"]["score"].get<double>(), 99.99);
  // --attention writes, per sentence, tokens and an attention matrix whose rows sum to 1.
  auto att = run_command(nmt::test::nmt_binary() + " translate -m " + out + " --input " + fixture("tiny.en") +
                         " --attention " + dir.file("att.jsonl") + " --attention-head 1");
  ASSERT_EQ(att.exit_code, 0) << att.err;
  std::ifstream att_in(dir.file("att.jsonl"));
  size_t records = 0;
  for (std::string line; std::getline(att_in, line); ++records) {
    auto j = nlohmann::json::parse(line);
    EXPECT_EQ(j["line"], records + 1);
    const auto& rows = j["attention"];
    EXPECT_EQ(rows.size(), j["target"].size());
    EXPECT_EQ(j["target"].back(), "</s>");
    EXPECT_EQ(j["source"].back(), "</s>");
    for (const auto& row : rows) {
      EXPECT_EQ(row.size(), j["source"].size());
      double sum = 0;
      for (double w : row) sum += w;
      EXPECT_NEAR(sum, 1.0, 1e-4);
    }
  }
  EXPECT_EQ(records, 8u);
  // An empty input line gives an empty output line, and order is kept.
  auto empty = run_command("printf 'a man\\n\\nA dog runs.\\n' | " + nmt::test::nmt_binary() + " translate -m " + out);
  ASSERT_EQ(empty.exit_code, 0) << empty.err;
  std::vector<std::string> lines;
  std::stringstream ss(empty.out);
  for (std::string l; std::getline(ss, l);) lines.push_back(l);
  ASSERT_EQ(lines.size(), 3u);
  EXPECT_EQ(lines[1], "");
}

// One field of a run's metrics.jsonl lines of one event ("train" or "valid"), in order.
std::vector<double> metric_values(const std::string& metrics_path, const std::string& event, const std::string& field) {
  std::vector<double> values;
  std::ifstream in(metrics_path);
  for (std::string line; std::getline(in, line);) {
    auto j = nlohmann::json::parse(line);
    if (j["event"] == event) values.push_back(j[field].get<double>());
  }
  return values;
}

std::vector<double> train_losses(const std::string& metrics_path) {
  return metric_values(metrics_path, "train", "train_loss");
}

TEST(Cli, SameSeedGivesIdenticalLosses) {
  nmt::test::TempDir dir;
  const std::string extra = "--max-steps 100 --dropout 0.1 --valid-bleu false";
  ASSERT_EQ(run_command(train_tiny(dir.file("a"), extra)).exit_code, 0);
  ASSERT_EQ(run_command(train_tiny(dir.file("b"), extra)).exit_code, 0);
  auto a = train_losses(dir.file("a/metrics.jsonl")), b = train_losses(dir.file("b/metrics.jsonl"));
  ASSERT_FALSE(a.empty());
  EXPECT_EQ(a, b);
  EXPECT_EQ(slurp(dir.file("a/model.pt")), slurp(dir.file("b/model.pt")));
}

TEST(Cli, RefusesToOverwriteAnotherRun) {
  nmt::test::TempDir dir;
  nmt::test::write_bytes(dir.file("something"), "x");
  auto r = run_command(train_tiny(dir.path(), "--max-steps 1"));
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find(dir.path()), std::string::npos) << r.err;
}

// Options come from a TOML file's [train] section; the command line overrides them.
TEST(Cli, ConfigFileSetsOptionsAndCommandLineWins) {
  nmt::test::TempDir dir;
  nmt::test::write_bytes(dir.file("run.toml"), "[train]\npreset = \"transformer-tiny\"\nmax-steps = 3\nlr = 0.002\nseed = 11\n");
  auto r = run_command(nmt::test::nmt_binary() + " --config " + dir.file("run.toml") + " train --train " + fixture("tiny") +
                       " --valid " + fixture("tiny") + " --out " + dir.file("m") + " --lr 0.004 --valid-bleu false -q");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto config = nlohmann::json::parse(slurp(dir.file("m/config.json")));
  EXPECT_EQ(config["train"]["max_steps"], 3);
  EXPECT_EQ(config["train"]["seed"], 11);
  EXPECT_DOUBLE_EQ(config["train"]["lr"].get<double>(), 0.004);
  EXPECT_EQ(config["model"]["d_model"], 32);  // from the preset named in the file
}

TEST(Cli, ConfigFileWithUnknownKeyIsAUsageError) {
  nmt::test::TempDir dir;
  nmt::test::write_bytes(dir.file("bad.toml"), "[train]\nmax-stepz = 3\n");
  auto r = run_command(nmt::test::nmt_binary() + " --config " + dir.file("bad.toml") + " train --out " + dir.file("m"));
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("max-stepz"), std::string::npos) << r.err;
  EXPECT_FALSE(std::filesystem::exists(dir.file("m")));
}

TEST(Cli, MissingConfigFileIsNamed) {
  auto r = run_command(nmt::test::nmt_binary() + " --config /nonexistent/run.toml train --out /tmp/never");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("/nonexistent/run.toml"), std::string::npos) << r.err;
}

TEST(Cli, BadOptionValuesAreUsageErrors) {
  for (const std::string args : {"train --out /tmp/never --max-time 5parsecs", "train --out /tmp/never --preset nonesuch",
                                 "train --out /tmp/never --max-steps many"}) {
    auto r = run_command(nmt::test::nmt_binary() + " " + args);
    EXPECT_EQ(r.exit_code, 2) << args << ": " << r.err;
    EXPECT_LE(std::count(r.err.begin(), r.err.end(), '\n'), 2) << "one error line (plus the --help hint): " << r.err;
  }
  EXPECT_FALSE(std::filesystem::exists("/tmp/never"));
}

// Validation BLEU can use beam search: with --valid-beam 3 each validation's val_bleu is the BLEU
// of beam search's translations, not of greedy decoding's. The same run validated greedily
// (--valid-beam 1) validates the same weights (the same val_loss each time) to other BLEU scores;
// and the weights the beam run kept for its best val_bleu (model.pt) give that BLEU again under
// `nmt eval --beam 3`, and another under greedy `nmt eval`. From update 40 on, beam search (with
// its length penalty) and greedy decoding translate this tiny model's weights differently.
TEST(Cli, ValidationWithBeamSearchRecordsBleu) {
  nmt::test::TempDir dir;
  const std::string run = "--max-steps 120 --valid-every 20 -q";
  auto beam = run_command(train_tiny(dir.file("beam"), run + " --valid-beam 3"));
  ASSERT_EQ(beam.exit_code, 0) << beam.err;
  auto greedy = run_command(train_tiny(dir.file("greedy"), run + " --valid-beam 1"));
  ASSERT_EQ(greedy.exit_code, 0) << greedy.err;
  // The run records the search it validated with.
  EXPECT_EQ(nlohmann::json::parse(slurp(dir.file("beam/config.json")))["train"]["valid_beam"], 3);
  const auto beam_bleu = metric_values(dir.file("beam/metrics.jsonl"), "valid", "val_bleu");
  const auto greedy_bleu = metric_values(dir.file("greedy/metrics.jsonl"), "valid", "val_bleu");
  ASSERT_EQ(beam_bleu.size(), 6u);
  ASSERT_EQ(greedy_bleu.size(), 6u);
  for (double bleu : beam_bleu) {
    EXPECT_GE(bleu, 0.0);
    EXPECT_LE(bleu, 100.0 + 1e-9);
  }
  EXPECT_EQ(metric_values(dir.file("beam/metrics.jsonl"), "valid", "val_loss"),
            metric_values(dir.file("greedy/metrics.jsonl"), "valid", "val_loss"))
      << "the two runs must validate the same weights for their BLEU to differ by the search alone";
  EXPECT_NE(beam_bleu, greedy_bleu) << "--valid-beam 3 validated as greedy decoding does";
  // model.pt holds the weights of the first validation with the best val_bleu (--best-metric bleu).
  const double best = *std::max_element(beam_bleu.begin(), beam_bleu.end());
  const auto eval_bleu = [&](const std::string& search) {
    auto e = run_command(nmt::test::nmt_binary() + " eval -m " + dir.file("beam") + " --src " + fixture("tiny.en") +
                         " --ref " + fixture("tiny.fr") + " --threads 1 --json" + search);
    EXPECT_EQ(e.exit_code, 0) << e.err;
    return e.exit_code == 0 ? nlohmann::json::parse(e.out)["bleu"]["score"].get<double>() : -1.0;
  };
  const double kept_beam = eval_bleu(" --beam 3"), kept_greedy = eval_bleu("");
  ASSERT_GE(kept_beam, 0.0);
  ASSERT_NE(kept_beam, kept_greedy) << "beam 3 and greedy decoding translate the kept weights alike: "
                                       "this run cannot tell the two searches apart";
  EXPECT_NEAR(best, kept_beam, 1e-6) << "val_bleu is not the BLEU of beam search with beam 3";
}

// The updates a run validated at.
std::vector<double> validated_steps(const std::string& model_dir) {
  return metric_values(model_dir + "/metrics.jsonl", "valid", "step");
}

// --valid-after skips the validations (and their minutes of decoding) before that update; the
// final weights are validated all the same, and --save-every still saves where no validation did.
TEST(Cli, ValidAfterSkipsTheEarlyValidations) {
  nmt::test::TempDir dir;
  auto r = run_command(
      train_tiny(dir.file("m"), "--max-steps 35 --valid-every 10 --valid-after 20 --save-every 10 --keep-last 10 -q"));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(validated_steps(dir.file("m")), (std::vector<double>{20, 30, 35}));
  for (const char* step : {"step-00000010", "step-00000020", "step-00000030", "step-00000035"})
    EXPECT_TRUE(std::filesystem::exists(dir.file("m/checkpoints/") + step)) << step;
}

// A run that ends before --valid-after still validates and keeps its final weights.
TEST(Cli, RunEndingBeforeValidAfterStillKeepsItsWeights) {
  nmt::test::TempDir dir;
  auto r = run_command(train_tiny(dir.file("m"), "--max-steps 15 --valid-every 10 --valid-after 20 -q"));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(validated_steps(dir.file("m")), (std::vector<double>{15}));
  EXPECT_TRUE(std::filesystem::exists(dir.file("m/model.pt")));
}

}  // namespace
