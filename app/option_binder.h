#pragma once
// The command line generated from the option tables (util/option_spec.h): one CLI11 option per
// declared flag, read as text and converted by the table, so the command line, [SECTION]s of
// --config files and config.json accept and refuse the same values with the same words. Every
// command binds its tables here; none declares a flag, a range or a default by hand.
#include <algorithm>
#include <deque>
#include <functional>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include <CLI/CLI.hpp>

#include "nmt/util/error.h"
#include "nmt/util/option_spec.h"

namespace nmt::cli {

// "--beam" for "beam": the flag of a key in any command's table (a key has one flag everywhere).
std::string flag_of(const std::string& key);

// Runs `f`, turning a library OptionError ('beam' is 0, ...) into the command line's words
// (--beam is 0, ...); with `name` (key → flag, e.g. OptionBinder::flag_names), a command's own
// table names the keys flag_of does not know.
template <class F, class Name = std::string (*)(const std::string&)>
decltype(auto) with_flag_names(F&& f, const Name& name = flag_of) {
  try {
    return f();
  } catch (const OptionError& e) {
    throw UsageError(e.message(name));
  }
}

// Which options of a table a command takes, and the help texts it words for itself. A command
// that takes "every row but" (`all_but`) gets a new row without an edit.
struct OptionUse {
  std::vector<std::string> only;              // these rows; empty: every row with a flag ...
  std::vector<std::string> all_but;           // ... except these
  std::map<std::string, std::string> help;    // key → this command's help text

  bool takes(const std::string& key) const {
    const auto has = [&](const std::vector<std::string>& v) { return std::find(v.begin(), v.end(), key) != v.end(); };
    return (only.empty() || has(only)) && !has(all_but);
  }
};

// A row whose flag has no leading '-' ("dir") is a positional argument of that name.
template <class S>
class OptionBinder {
 public:
  using Spec = OptionSpec<S>;

  // Adds the options of `specs` chosen by `use` to `cmd`, showing `defaults` in --help.
  OptionBinder(CLI::App* cmd, const std::vector<Spec>& specs, const S& defaults = S{}, const OptionUse& use = {}) {
    for (const Spec& spec : specs) {
      if (spec.flag.empty() || !use.takes(spec.key)) continue;
      const auto own_help = use.help.find(spec.key);
      bind(cmd, spec, defaults, own_help == use.help.end() ? spec.help : own_help->second);
    }
  }
  OptionBinder(const OptionBinder&) = delete;  // CLI11 holds the addresses of texts_, switches_ and lists_

  // The options given (on the command line or in a --config file) over `s`; each converted by
  // its table, errors naming the flag. Ranges are the caller's to check, with the cross-checks.
  void apply(S& s) const { apply(s, flag_names()); }
  // The same with errors naming options by `name` (key → flag): a binary without flag_of's
  // tables (the launcher's `nmt bleu`) passes its own table's.
  void apply(S& s, const std::function<std::string(const std::string&)>& name) const {
    with_flag_names([&] {
      size_t text_index = 0, switch_index = 0, list_index = 0;
      for (const auto& [opt, spec] : bound_) {
        if (spec->kind == OptionKind::kList) {
          const std::vector<std::string>& values = lists_[list_index++];
          if (opt->count() > 0) spec->parse_list(s, values);
          continue;
        }
        const bool is_switch = spec->kind == OptionKind::kSwitch;
        const std::string value = is_switch ? (switches_[switch_index++] ? "true" : "false") : texts_[text_index++];
        if (opt->count() > 0) spec->parse(s, value);
      }
    }, name);
  }

  // `s` with the options given over it, each within its table's range (UsageError naming the
  // flag); cross-checks are the caller's.
  S checked(S s = S{}) const {
    apply(s);
    with_flag_names([&] { for (const auto& [opt, spec] : bound_) spec->check(s); }, flag_names());
    return s;
  }

  // Key → flag, this table's rows first: a command's own keys are not flag_of's. (For the
  // shared tables both agree: a key has one flag in every table.)
  std::function<std::string(const std::string&)> flag_names() const {
    return [this](const std::string& key) {
      for (const auto& [opt, spec] : bound_)
        if (spec->key == key) return spec->long_flag();
      return flag_of(key);
    };
  }

 private:
  void bind(CLI::App* cmd, const Spec& spec, const S& defaults, const std::string& help_text) {
    std::string help = help_text;
    if (!spec.choices.empty() && !spec.check_on_read) help += ": " + option_detail::join(spec.choices, " or ");
    CLI::Option* opt = nullptr;
    if (spec.kind == OptionKind::kSwitch) {
      opt = cmd->add_flag(spec.flag, switches_.emplace_back(false), help);
    } else if (spec.kind == OptionKind::kList) {  // CLI11's own list: "TEXT ...", no default shown
      opt = cmd->add_option(spec.flag, lists_.emplace_back(), help);
      opt->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
      if (spec.one_per_flag) opt->allow_extra_args(false);
      if (spec.delimiter != 0) opt->delimiter(spec.delimiter);
    } else {
      opt = cmd->add_option(spec.flag, texts_.emplace_back(), help)->default_str(spec.text(defaults));
      opt->type_name(type_name(spec));
    }
    if (spec.check_on_read) add_check(opt, spec);
    if (spec.required) opt->required();
    if (spec.hidden) opt->group("");
    else if (!spec.group.empty()) opt->group(spec.group);
    bound_.push_back({opt, &spec});
  }

  // CLI11's own check of the row's choices or closed range (shown after the type in --help).
  static void add_check(CLI::Option* opt, const Spec& spec) {
    if (!spec.choices.empty()) opt->check(CLI::IsMember(spec.choices));
    else if (spec.has_range && spec.kind == OptionKind::kInteger)
      opt->check(CLI::Range(static_cast<int64_t>(spec.lo), static_cast<int64_t>(spec.hi)));
    else if (spec.has_range) opt->check(CLI::Range(static_cast<double>(spec.lo), static_cast<double>(spec.hi)));
  }

  static std::string type_name(const Spec& spec) {
    if (spec.check_on_read && spec.kind == OptionKind::kText) return "TEXT";  // CLI11 adds ":{a,b}"
    switch (spec.kind) {
      case OptionKind::kBool: return "BOOL";
      case OptionKind::kInteger: return "INT";
      case OptionKind::kReal: return spec.key == "max_time_s" ? "DURATION" : "FLOAT";
      case OptionKind::kChoice: return "{" + option_detail::join(spec.choices, ",") + "}";
      default: return spec.choices.empty() ? "TEXT" : "{" + option_detail::join(spec.choices, ",") + "}";
    }
  }

  std::deque<std::string> texts_;  // stable addresses for CLI11
  std::deque<bool> switches_;
  std::deque<std::vector<std::string>> lists_;
  std::vector<std::pair<CLI::Option*, const Spec*>> bound_;
};

// -m/--model, the one option outside the tables (a list: repeated for an ensemble or for the
// models a server serves).
enum class ModelList { kEnsemble, kServed };
CLI::Option* add_model_option(CLI::App* cmd, std::vector<std::string>& dirs, ModelList list);

}  // namespace nmt::cli
