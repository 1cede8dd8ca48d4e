// The option table (lib/nmt/train/options.cc): each training option is declared once, and the
// command line, config.json, the run identity, presets and validation all follow it.
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <functional>
#include <map>
#include <set>
#include <sstream>

#include <nlohmann/json.hpp>

#include "nmt/bench/options.h"
#include "nmt/data/prepare_options.h"
#include "nmt/decode/command_options.h"
#include "nmt/metrics/bleu_options.h"
#include "nmt/models/conversion_options.h"
#include "nmt/train/average_options.h"
#include "nmt/viz/options.h"
#include "nmt/decode/greedy.h"
#include "nmt/decode/sampling.h"
#include "nmt/decode/strategy.h"
#include "nmt/serve/options.h"
#include "nmt/train/options.h"
#include "nmt/util/runtime_options.h"
#include "nmt/train/presets.h"
#include "nmt/train/step.h"
#include "test_support.h"

namespace {

using nmt::test::fixture;
using nmt::test::run_command;
using nmt::test::slurp;
namespace train = nmt::train;

// No option can again be saved (and so part of a run's identity) without a way to set it.
TEST(Options, EverySavedTrainingOptionHasAFlag) {
  const nlohmann::json saved = train::TrainOptions{}.to_json();
  for (const auto& [key, value] : saved.items()) {
    const auto* spec = nmt::find_option(train::train_option_specs(), key);
    ASSERT_NE(spec, nullptr) << key;
    EXPECT_FALSE(spec->flag.empty()) << key << " is saved in config.json but has no flag";
  }
  for (const char* key : {"adam_beta1", "adam_beta2", "adam_eps", "valid_max_len_b"}) EXPECT_TRUE(saved.contains(key)) << key;
}

TEST(Options, FlagsAndKeysAreUnique) {
  std::set<std::string> keys, flags;
  for (const auto& spec : train::train_option_specs()) {
    EXPECT_TRUE(keys.insert(spec.key).second) << spec.key;
    if (!spec.flag.empty()) {
      EXPECT_TRUE(flags.insert(spec.long_flag()).second) << spec.flag;
    }
  }
}

// config.json written by one version is read back field for field, choices as their names.
TEST(Options, ConfigJsonRoundTripsEveryOption) {
  train::TrainOptions o;
  train::apply_preset("gru-tiny", o);
  o.model.src_vocab = o.model.tgt_vocab = 100;  // set from the subword model in a run
  o.adam_eps = 1e-7;
  o.best_metric = train::BestMetric::kLoss;
  o.subword_type = train::SubwordType::kBpe;
  o.max_time_s = 90;
  const nlohmann::json j = o.to_json();
  EXPECT_EQ(j["lr_schedule"], "constant");
  EXPECT_EQ(j["best_metric"], "loss");
  EXPECT_EQ(j["subword_type"], "bpe");
  EXPECT_EQ(train::TrainOptions::from_json(j).to_json(), j);
  EXPECT_EQ(nmt::models::ModelConfig::from_json(o.model.to_json()).to_json(), o.model.to_json());
}

TEST(Options, AnUnknownChoiceInConfigJsonIsRefusedNamingTheKey) {
  nmt::test::expect_error<nmt::RuntimeError>([] { train::TrainOptions::from_json({{"lr_schedule", "exponential"}}); },
                          {"lr_schedule", "exponential", "linear or cosine"});
}

// Stopping limits and logging may change on a resumed run; the optimiser may not silently.
TEST(Options, RunIdentityLeavesOutOnlyOptionsThatContinueARun) {
  const nlohmann::json id = train::run_identity(train::TrainOptions{}.to_json());
  for (const char* key : {"max_steps", "max_epochs", "max_time_s", "patience", "log_every", "threads", "keep_last",
                          "save_every", "max_bad_steps", "device"})
    EXPECT_FALSE(id.contains(key)) << key;
  for (const char* key : {"lr", "adam_eps", "seed", "max_tokens", "valid_max_len_b"}) EXPECT_TRUE(id.contains(key)) << key;
}

// The library names options by key; the command line names them by flag.
TEST(Options, LibraryErrorsNameTheKeyAndTheCommandLineTheFlag) {
  train::TrainOptions o;
  o.lr = 0;
  try {
    train::validate_options(o);
    FAIL() << "lr 0 accepted";
  } catch (const nmt::OptionError& e) {
    EXPECT_NE(std::string(e.what()).find("'lr' is 0"), std::string::npos) << e.what();
    EXPECT_EQ(std::string(e.what()).find("--lr"), std::string::npos) << e.what();
    EXPECT_NE(e.message(train::flag_of).find("--lr is 0"), std::string::npos) << e.message(train::flag_of);
  }
  auto r = run_command(nmt::test::nmt_binary() + " train --train x --valid x --out /tmp/never --lr 0");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("--lr is 0"), std::string::npos) << r.err;
  EXPECT_EQ(r.err.find("'lr'"), std::string::npos) << r.err;
}

TEST(Options, ChoicesAreCheckedOnTheCommandLine) {
  auto r = run_command(nmt::test::nmt_binary() + " train --train x --valid x --out /tmp/never --lr-schedule exponential");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("--lr-schedule"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("linear or cosine"), std::string::npos) << r.err;
  r = run_command(nmt::test::nmt_binary() + " train --train x --valid x --out /tmp/never --preset nonesuch");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("--preset: unknown preset 'nonesuch'"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("gru-tiny"), std::string::npos) << r.err;
}

// Options that used to be saved without a flag can now be set, and are saved.
TEST(Options, AdamSettingsAndValidationLengthAreFlags) {
  nmt::test::TempDir dir;
  auto r = run_command(nmt::test::nmt_binary() + " train --preset transformer-tiny --train " + fixture("tiny") +
                       " --valid " + fixture("tiny") + " --out " + dir.file("m") +
                       " --max-steps 2 --valid-bleu false -q --adam-beta2 0.997 --adam-eps 1e-6 --valid-max-len-b 7"
                       " --lr-schedule constant");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto config = nlohmann::json::parse(slurp(dir.file("m/config.json")));
  EXPECT_DOUBLE_EQ(config["train"]["adam_beta2"].get<double>(), 0.997);
  EXPECT_DOUBLE_EQ(config["train"]["adam_eps"].get<double>(), 1e-6);
  EXPECT_EQ(config["train"]["valid_max_len_b"], 7);
  EXPECT_EQ(config["train"]["lr_schedule"], "constant");
  EXPECT_EQ(config["train"]["vocab_size"], 100);  // the preset's, not overridden
}

TEST(Options, EveryPresetGivesValidOptions) {
  for (const auto& name : train::preset_names()) {
    train::TrainOptions o;
    train::apply_preset(name, o);
    EXPECT_NO_THROW(train::validate_options(o)) << name;
  }
}

}  // namespace

// ---- the decoding commands' tables (decode/search_options.h, util/runtime_options.h,
// serve/options.h) and the one search factory (decode/strategy.h) ---------------------------

namespace decode = nmt::decode;

// A key means one option everywhere: `--seed` or `--threads` in [train] and in [translate] of
// a --config file, and in every error message.
TEST(CommandOptions, AKeyHasOneFlagInEveryTable) {
  std::map<std::string, std::string> flag_of_key;
  const auto record = [&](const auto& specs) {
    std::set<std::string> flags;
    for (const auto& spec : specs) {
      if (spec.flag.empty()) continue;
      EXPECT_TRUE(flags.insert(spec.long_flag()).second) << spec.flag << " twice in one table";
      const auto [it, fresh] = flag_of_key.emplace(spec.key, spec.flag);
      EXPECT_TRUE(fresh || it->second == spec.flag) << spec.key << " is " << it->second << " and " << spec.flag;
    }
  };
  record(train::train_option_specs());
  record(decode::search_option_specs());
  record(nmt::runtime_option_specs());
  record(nmt::serve::serve_option_specs());
  // Each command's own table too: a key names one option everywhere (errors name it by its flag).
  record(decode::translate_io_option_specs());
  record(decode::eval_io_option_specs());
  record(decode::score_io_option_specs());
  record(decode::attention_io_option_specs());
  record(nmt::metrics::bleu_option_specs());
  record(nmt::data::prepare_option_specs());
  record(nmt::viz::report_option_specs());
  record(nmt::viz::plot_option_specs());
  record(nmt::models::import_option_specs());
  record(nmt::models::quantize_option_specs());
  record(nmt::train::average_option_specs());
  record(nmt::bench::model_recipe_option_specs());
  record(nmt::bench::train_bench_option_specs());
  record(nmt::bench::init_bench_option_specs());
  record(nmt::bench::translate_bench_option_specs());
  EXPECT_EQ(flag_of_key.at("threads"), "--threads");
  EXPECT_EQ(flag_of_key.at("seed"), "--seed");
}

TEST(CommandOptions, SearchOptionsAreCheckedTogether) {
  EXPECT_NO_THROW(decode::validate_search_options(decode::SearchOptions{}));
  const auto refused = [](const std::function<void(decode::SearchOptions&)>& set,
                          std::initializer_list<std::string> fragments) {
    decode::SearchOptions o;
    set(o);
    nmt::test::expect_error<nmt::UsageError>([&] { decode::validate_search_options(o); }, fragments);
  };
  refused([](auto& o) { o.beam = 0; }, {"'beam' is 0, must be between 1 and 1000"});
  refused([](auto& o) { o.beam = 2, o.nbest = 3; }, {"'nbest' must not exceed 'beam'"});
  refused([](auto& o) { o.sampling = "top-k:5", o.beam = 3; }, {"'sampling'", "does not combine with 'beam'"});
  refused([](auto& o) { o.temperature = 2; }, {"'temperature' applies to 'sampling' only"});
  refused([](auto& o) { o.sampling = "nucleus"; }, {"--sampling is 'nucleus'"});
  refused([](auto& o) { o.max_len_a = std::nan(""); }, {"'max_len_a' is nan"});
  refused([](auto& o) { o.batch_size = 0; }, {"'batch_size' is 0"});
}

// Sampling when asked for, greedy search for one hypothesis of a beam of one (the same output,
// faster), beam search otherwise, with the length penalty and α of the options.
TEST(CommandOptions, OneFactoryChoosesTheSearch) {
  decode::SearchOptions o;
  EXPECT_NE(dynamic_cast<decode::GreedySearch*>(decode::make_search_strategy(o).get()), nullptr);
  o.nbest = 1, o.beam = 4, o.alpha = 1.5, o.length_penalty = decode::LengthPenalty::kAverage;
  auto beam = decode::make_search_strategy(o);
  auto* b = dynamic_cast<decode::BeamSearch*>(beam.get());
  ASSERT_NE(b, nullptr);
  EXPECT_EQ(b->options().beam, 4);
  EXPECT_EQ(b->options().alpha, 1.5);
  EXPECT_EQ(b->options().length_penalty, decode::LengthPenalty::kAverage);
  o.beam = 1, o.nbest = 1, o.sampling = "top-p:0.9";
  EXPECT_NE(dynamic_cast<decode::SamplingSearch*>(decode::make_search_strategy(o).get()), nullptr);
  o = decode::SearchOptions{};
  o.batch_size = 7, o.max_len_a = 2, o.max_len_b = 3;
  const decode::DecodeOptions d = decode::decode_options(o);
  EXPECT_EQ(d.search.batch_size, 7);
  EXPECT_EQ(d.search.max_len_a, 2);
  EXPECT_EQ(d.search.max_len_b, 3);
}

// The command line and a [translate] / [serve] section of a --config file go through the same
// table: the same value is refused with the same words, before any model is read (the model
// directory here does not exist).
TEST(CommandOptions, CommandLineAndConfigSectionsAreRefusedAlikeBeforeAnyModelIsRead) {
  nmt::test::TempDir dir;
  const std::string model = dir.file("no-such-model");
  struct Case {
    std::string command, flags, section, expected;
  };
  for (const Case& c : std::vector<Case>{
           {"translate", "--beam 0", "[translate]\nbeam = 0\n", "--beam is 0, must be between 1 and 1000"},
           {"eval --src x --ref y", "--length-penalty long", "[eval]\nlength-penalty = \"long\"\n",
            "--length-penalty: unknown value 'long' (gnmt or average or none)"},
           {"translate", "--beam 2 --nbest 3", "[translate]\nbeam = 2\nnbest = 3\n", "--nbest must not exceed --beam"},
           {"serve", "--beam 20 --max-beam 16", "[serve]\nbeam = 20\nmax-beam = 16\n",
            "--beam is 20, larger than --max-beam (16)"},
           {"serve", "--port 70000", "[serve]\nport = 70000\n", "--port is 70000, must be between 0 and 65535"},
           {"serve", "--threads -1", "[serve]\nthreads = -1\n", "--threads is -1, must be between 0 and 4096"},
           {"score --src x --tgt y", "--batch-size 0", "[score]\nbatch-size = 0\n", "--batch-size is 0"},
       }) {
    std::ofstream(dir.file("c.toml")) << c.section;
    for (const std::string& args : {c.flags, "--config " + dir.file("c.toml")}) {
      const std::string line = nmt::test::nmt_binary() + " " + (args.rfind("--config", 0) == 0 ? args + " " : "") +
                               c.command + " -m " + model + (args.rfind("--config", 0) == 0 ? "" : " " + args);
      const auto r = run_command(line + " < /dev/null");
      EXPECT_EQ(r.exit_code, 2) << line << "\n" << r.err;
      EXPECT_NE(r.err.find(c.expected), std::string::npos) << line << "\n" << r.err;
      EXPECT_EQ(r.err.find("no-such-model"), std::string::npos) << line << ": checked after the model\n" << r.err;
    }
  }
}
