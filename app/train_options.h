#pragma once
// Binds TrainOptions fields to CLI11 options and lets a --preset fill every option the
// user did not give (on the command line or in the --config file).
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "nmt/train/trainer.h"

namespace nmt::cli {

class TrainOptionBinder {
 public:
  TrainOptionBinder(CLI::App* cmd, train::TrainOptions* options) : cmd_(cmd), options_(options) {}

  // `get` maps a TrainOptions to the field the option sets.
  template <typename Get>
  CLI::Option* add(const std::string& name, Get get, const std::string& description) {
    CLI::Option* opt = cmd_->add_option(name, get(*options_), description)->capture_default_str();
    copiers_.push_back({opt, [get](train::TrainOptions& dst, train::TrainOptions& src) { get(dst) = get(src); }});
    return opt;
  }

  // For every option that was not given, takes the preset's value.
  void apply_preset(train::TrainOptions& preset) {
    for (auto& [opt, copy] : copiers_)
      if (opt->count() == 0) copy(*options_, preset);
  }

 private:
  CLI::App* cmd_;
  train::TrainOptions* options_;
  std::vector<std::pair<CLI::Option*, std::function<void(train::TrainOptions&, train::TrainOptions&)>>> copiers_;
};

}  // namespace nmt::cli
