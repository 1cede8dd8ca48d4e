#pragma once
// Runs a parsed-and-dispatched CLI11 app with nmt's error conventions, shared by both binaries
// (nmt-torch's main.cc and the launcher's): one line on stderr for every error, "nmt: error: ",
// exit 2 for usage errors, the error's own code (1 by default) otherwise, and stdout checked at
// the end. CLI11's parse errors are put in nmt's words: a misspelt subcommand, option or
// --config key is named with the nearest one that exists.
#include <algorithm>
#include <cstdio>
#include <exception>
#include <fstream>
#include <new>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "commands.h"
#include "nmt/util/error.h"
#include "nmt/util/io.h"
#include "nmt/util/suggest.h"

namespace nmt::cli {

namespace usage_detail {

// "; did you mean 'translate'?" (with `open`/`close` around the name), or "".
inline std::string did_you_mean(const std::string& typed, const std::vector<std::string>& names,
                                const std::string& open = "'", const std::string& close = "'") {
  const std::string near = nearest_name(typed, names);
  return near.empty() ? std::string() : "; did you mean " + open + near + close + "?";
}

inline std::vector<std::string> subcommand_names(CLI::App& app) {
  std::vector<std::string> names;
  for (const CLI::App* sub : app.get_subcommands([](CLI::App*) { return true; })) names.push_back(sub->get_name());
  return names;
}

// "--beam" and "-m" of every option of `cmd`.
inline std::vector<std::string> flag_names(CLI::App& cmd) {
  std::vector<std::string> names;
  for (const CLI::Option* opt : cmd.get_options()) {
    for (const auto& l : opt->get_lnames()) names.push_back("--" + l);
    for (const auto& s : opt->get_snames()) names.push_back("-" + s);
  }
  return names;
}

// The value of --config in the command line, or "".
inline std::string config_path(const std::vector<std::string>& args) {
  for (size_t i = 0; i < args.size(); ++i) {
    if (args[i] == "--config" && i + 1 < args.size()) return args[i + 1];
    if (args[i].rfind("--config=", 0) == 0) return args[i].substr(9);
  }
  return "";
}

// The first argument that is neither an option nor --config's value: the subcommand meant.
inline std::string first_word(const std::vector<std::string>& args) {
  for (size_t i = 0; i < args.size(); ++i) {
    if (args[i] == "--config") ++i;
    else if (args[i].empty() || args[i][0] != '-') return args[i];
  }
  return "";
}

// Where `key` of [section] is in the TOML file at `path` ("run.toml:3"), or the path alone.
inline std::string config_place(const std::string& path, const std::string& section, const std::string& key) {
  std::ifstream in(path);
  std::string line, current;
  for (size_t n = 1; std::getline(in, line); ++n) {
    const auto start = line.find_first_not_of(" \t");
    if (start == std::string::npos || line[start] == '#') continue;
    if (line[start] == '[') {
      const auto end = line.find(']', start);
      current = line.substr(start + 1, end == std::string::npos ? std::string::npos : end - start - 1);
      continue;
    }
    std::string name = line.substr(start, line.find('=', start) - start);
    name.erase(name.find_last_not_of(" \t\"'") + 1);
    name.erase(0, name.find_first_not_of("\"'"));
    if (current == section && name == key) return path + ":" + std::to_string(n);
  }
  return path;
}

// CLI11's "INI was not able to parse train.learning_rate" in nmt's words: the file and line,
// the key and its section, and the nearest key that section takes.
inline std::string config_key_message(CLI::App& app, const std::vector<std::string>& args, const std::string& item) {
  const auto dot = item.rfind('.');
  const std::string section = dot == std::string::npos ? "" : item.substr(0, dot);
  const std::string key = item.substr(dot == std::string::npos ? 0 : dot + 1);
  const std::string where = config_place(config_path(args), section, key);
  CLI::App* sub = nullptr;
  for (CLI::App* s : app.get_subcommands([](CLI::App*) { return true; }))
    if (s->get_name() == section) sub = s;
  if (sub == nullptr && !section.empty())
    return where + ": unknown section [" + section + "]" + did_you_mean(section, subcommand_names(app), "[", "]");
  std::vector<std::string> keys;
  for (const std::string& f : flag_names(sub ? *sub : app))
    if (f.rfind("--", 0) == 0 && f != "--help") keys.push_back(f.substr(2));
  std::string typed = key;
  std::replace(typed.begin(), typed.end(), '_', '-');  // options are spelt with dashes
  return where + ": unknown key '" + key + "'" + (section.empty() ? "" : " in [" + section + "]") +
         did_you_mean(typed, keys);
}

// The arguments CLI11 found no use for, as the user gave them: the unknown option first.
inline std::string extras_message(CLI::App& cmd) {
  const std::vector<std::string> extras = cmd.remaining();
  const std::string where = cmd.get_parent() ? "nmt " + cmd.get_name() : "nmt";
  for (const std::string& e : extras) {
    if (e.size() < 2 || e[0] != '-') continue;
    const std::string flag = e.substr(0, e.find('='));
    return "unknown option " + flag + " for " + where + did_you_mean(flag, flag_names(cmd)) +
           " (nmt " + (cmd.get_parent() ? cmd.get_name() + " " : "") + "--help lists them)";
  }
  std::string words;
  for (const std::string& e : extras) words += (words.empty() ? "'" : " '") + e + "'";
  return "unexpected argument" + std::string(extras.size() > 1 ? "s " : " ") + words + " for " + where;
}

// A CLI11 parse error in nmt's words.
inline std::string usage_message(CLI::App& app, const std::vector<std::string>& args, const CLI::ParseError& e) {
  const std::string what = first_line(e.what());
  const std::string config_prefix = "INI was not able to parse ";
  if (what.rfind(config_prefix, 0) == 0) return config_key_message(app, args, what.substr(config_prefix.size()));
  const std::vector<CLI::App*> parsed = app.get_subcommands();
  if (parsed.empty()) {
    const std::vector<std::string> own = flag_names(app);
    for (size_t i = 0; i < args.size() && (args[i].empty() || args[i][0] == '-'); ++i) {
      const std::string flag = args[i].substr(0, args[i].find('='));
      if (flag == "--config") ++i;
      else if (std::find(own.begin(), own.end(), flag) == own.end())
        return "unknown option " + flag + " for nmt; a subcommand's options go after it (nmt SUBCOMMAND --help)";
    }
    const std::string word = first_word(args);
    if (!word.empty())
      return "unknown subcommand '" + word + "'" + did_you_mean(word, subcommand_names(app)) + " (nmt --help lists them)";
    if (dynamic_cast<const CLI::RequiredError*>(&e) != nullptr)
      return "a subcommand is required (nmt --help lists them)";
  }
  if (dynamic_cast<const CLI::ExtrasError*>(&e) != nullptr) return extras_message(parsed.empty() ? app : *parsed.back());
  return what;
}

}  // namespace usage_detail

inline int run_app(CLI::App& app, int argc, char** argv) {
  const std::vector<std::string> given(argv + 1, argv + argc);
  try {
    // sacreBLEU's several-letter short options spelled out; CLI11 takes the arguments last first.
    std::vector<std::string> args = expand_sacrebleu_options(given);
    std::reverse(args.begin(), args.end());
    app.parse(std::move(args));
    check_stdout();  // a full disk behind stdout is an error, not a silent exit 0
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    // One line, as every other error (`nmt CMD --help` is where the options are).
    std::fprintf(stderr, "nmt: error: %s\n", usage_detail::usage_message(app, given, e).c_str());
    return 2;
  } catch (const Error& e) {
    std::fflush(stdout);
    std::fprintf(stderr, "nmt: error: %s\n", first_line(e.what()).c_str());
    return e.exit_code();
  } catch (const std::bad_alloc&) {
    std::fflush(stdout);
    std::fprintf(stderr, "nmt: error: out of memory\n");
    return 1;
  } catch (const std::exception& e) {
    // Not one of ours (LibTorch's c10::Error carries a many-line backtrace): its first line.
    std::fflush(stdout);
    std::fprintf(stderr, "nmt: error: %s\n", first_line(e.what()).c_str());
    return 1;
  }
  return 0;
}

}  // namespace nmt::cli
