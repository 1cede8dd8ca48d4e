// libFuzzer target: the configuration parsers: TOML config files as read by `nmt --config`
// (CLI11's parser on an app shaped like nmt's) and a model directory's config.json.
#include <cstdint>
#include <sstream>
#include <string>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "config_file.h"
#include "nmt/models/config.h"
#include "nmt/train/options.h"
#include "nmt/util/error.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  {
    CLI::App app{"fuzz"};
    app.config_formatter(std::make_shared<nmt::cli::CheckedTomlConfig>());  // as nmt's main()
    app.option_defaults()->multi_option_policy(CLI::MultiOptionPolicy::TakeLast);
    app.allow_config_extras(CLI::config_extras_mode::error);
    auto* train = app.add_subcommand("train");
    std::string s;
    int64_t i = 0;
    double d = 0;
    bool b = false;
    std::vector<std::string> v;
    train->add_option("--train", s);
    train->add_option("--max-steps", i);
    train->add_option("--lr", d);
    train->add_option("--pre-norm", b);
    train->add_option("--ref", v)->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
    std::istringstream in(text);
    try {
      auto items = nmt::cli::CheckedTomlConfig().from_config(in);
      std::istringstream again(text);
      app.parse_from_stream(again);
      (void)items;
    } catch (const CLI::Error&) {
    } catch (const std::exception&) {
    }
  }
  // config.json as nmt reads it: the "model" section through ModelConfig (typed, bounded) and
  // the "train" section through TrainOptions; only nmt::Error may come out of either once the
  // text parsed as JSON.
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(text);
  } catch (const nlohmann::json::exception&) {
    return 0;
  }
  for (const nlohmann::json* section : {&j, j.is_object() && j.contains("model") ? &j["model"] : &j}) {
    try {
      (void)nmt::models::ModelConfig::from_json(*section);
    } catch (const nmt::Error&) {
    }
  }
  for (const nlohmann::json* section : {&j, j.is_object() && j.contains("train") ? &j["train"] : &j}) {
    try {
      if (section->is_object()) (void)nmt::train::TrainOptions::from_json(*section).to_json().dump();
    } catch (const nmt::Error&) {
    }
  }
  return 0;
}
