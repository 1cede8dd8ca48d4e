#pragma once
// The command line of `nmt train`, generated from the option table (train::train_option_specs):
// one CLI11 option per declared flag, read as text and converted by the table, so the command
// line, --config files and config.json accept and refuse the same values.
#include <deque>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include <CLI/CLI.hpp>

#include "nmt/train/options.h"
#include "nmt/train/presets.h"
#include "nmt/util/error.h"

namespace nmt::cli {

// Runs `f`, turning a library OptionError ('lr' is 0, ...) into the command line's words
// (--lr is 0, ...).
template <class F>
decltype(auto) with_flag_names(F&& f) {
  try {
    return f();
  } catch (const OptionError& e) {
    throw UsageError(e.message(train::flag_of));
  }
}

class TrainOptionBinder {
 public:
  using Spec = OptionSpec<train::TrainOptions>;

  explicit TrainOptionBinder(CLI::App* cmd) {
    std::string names;
    for (const auto& p : train::presets()) names += fmt::format("{}{} ({})", names.empty() ? "" : ", ", p.name, p.summary);
    cmd->add_option("--preset", preset_, "Recipe: " + names)->group("Model");
    const train::TrainOptions defaults;
    for (const Spec& spec : train::train_option_specs()) {
      if (spec.flag.empty()) continue;
      std::string help = spec.help;
      if (!spec.choices.empty()) help += ": " + option_detail::join(spec.choices, " or ");
      CLI::Option* opt = nullptr;
      if (spec.kind == OptionKind::kSwitch) {
        opt = cmd->add_flag(spec.flag, switches_.emplace_back(false), help);
      } else {
        opt = cmd->add_option(spec.flag, texts_.emplace_back(), help)->default_str(spec.text(defaults));
        opt->type_name(type_name(spec));
      }
      if (spec.required) opt->required();
      if (!spec.group.empty()) opt->group(spec.group);
      bound_.push_back({opt, &spec});
    }
  }

  // Defaults, then the preset's values, then every option given (on the command line or in
  // the --config file); checked, with errors naming the flags.
  train::TrainOptions options() const {
    return with_flag_names([&] {
      train::TrainOptions o;
      if (!preset_.empty()) train::apply_preset(preset_, o);
      size_t text_index = 0, switch_index = 0;
      for (const auto& [opt, spec] : bound_) {
        const bool is_switch = spec->kind == OptionKind::kSwitch;
        const std::string value = is_switch ? (switches_[switch_index++] ? "true" : "false") : texts_[text_index++];
        if (opt->count() > 0) spec->parse(o, value);
      }
      train::validate_options(o, train::flag_of);
      return o;
    });
  }

 private:
  static std::string type_name(const Spec& spec) {
    switch (spec.kind) {
      case OptionKind::kBool: return "BOOL";
      case OptionKind::kInteger: return "INT";
      case OptionKind::kReal: return spec.key == "max_time_s" ? "DURATION" : "FLOAT";
      case OptionKind::kChoice: return "{" + option_detail::join(spec.choices, ",") + "}";
      default: return spec.choices.empty() ? "TEXT" : "{" + option_detail::join(spec.choices, ",") + "}";
    }
  }

  std::string preset_;
  std::deque<std::string> texts_;  // stable addresses for CLI11
  std::deque<bool> switches_;
  std::vector<std::pair<CLI::Option*, const Spec*>> bound_;
};

}  // namespace nmt::cli
