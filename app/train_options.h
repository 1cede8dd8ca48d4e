#pragma once
// The command line of `nmt train`, generated from the option table (train::train_option_specs)
// by OptionBinder, with --preset on top.
#include <string>

#include <CLI/CLI.hpp>

#include "option_binder.h"
#include "nmt/train/options.h"
#include "nmt/train/presets.h"
#include "nmt/train/run_directory.h"

namespace nmt::cli {

class TrainOptionBinder {
 public:
  explicit TrainOptionBinder(CLI::App* cmd) : binder_(cmd, add_preset(cmd, preset_), train::TrainOptions{}) {}

  // Defaults, then the preset's values, then (with --init-from DIR) DIR's architecture, then
  // every option given (on the command line or in the --config file); checked, with errors
  // naming the flags.
  train::TrainOptions options() const {
    return with_flag_names([&] {
      train::TrainOptions o;
      if (!preset_.empty()) train::apply_preset(preset_, o);
      train::TrainOptions given = o;
      binder_.apply(given);
      if (!given.init_from.empty()) {
        o.init_from = given.init_from;
        train::adopt_init_architecture(o);
      }
      binder_.apply(o);
      train::validate_options(o, train::flag_of);
      return o;
    });
  }

 private:
  // --preset before the table's options in --help; returns the table.
  static const std::vector<OptionSpec<train::TrainOptions>>& add_preset(CLI::App* cmd, std::string& preset) {
    std::string names;
    for (const auto& p : train::presets()) names += fmt::format("{}{} ({})", names.empty() ? "" : ", ", p.name, p.summary);
    cmd->add_option("--preset", preset, "Recipe: " + names)->group("Model");
    return train::train_option_specs();
  }

  std::string preset_;  // declared before binder_: bound first
  OptionBinder<train::TrainOptions> binder_;
};

}  // namespace nmt::cli
