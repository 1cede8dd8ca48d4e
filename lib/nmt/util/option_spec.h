#pragma once
// Options declared once (Marian's config_parser idea): an OptionSpec names an option's
// config.json key, command-line flag, group, help, kind, default (the field's initial value),
// whether it is saved in config.json, whether it is part of a run's identity, and its valid
// range or choices. Tables of specs (train/options.cc, models/config.cc) then drive the command
// line, JSON reading and writing, the run-identity check and validation, so adding an option is
// one line in a table plus its use. Torch-free and CLI-free: the command line binds the specs in
// app/train_options.h.
#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <functional>
#include <limits>
#include <optional>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "nmt/util/error.h"
#include "nmt/util/json_read.h"

namespace nmt {

// A bad option value. The message names options neutrally by their keys ('lr' is 0, ...);
// the command line words it with its flags (--lr is 0, ...) through message(flag_of).
class OptionError : public UsageError {
 public:
  // `text` refers to the options as {0}, {1}, ... (keys[0], keys[1], ...).
  OptionError(std::vector<std::string> keys, std::string text)
      : UsageError(format(keys, text, [](const std::string& k) { return "'" + k + "'"; })),
        keys_(std::move(keys)), text_(std::move(text)) {}
  // One option: "{0}" + detail, e.g. OptionError("lr", " is 0, must be ...").
  OptionError(const std::string& key, const std::string& detail) : OptionError(std::vector<std::string>{key}, "{0}" + detail) {}

  std::string message(const std::function<std::string(const std::string&)>& name) const { return format(keys_, text_, name); }

 private:
  static std::string format(const std::vector<std::string>& keys, const std::string& text,
                            const std::function<std::string(const std::string&)>& name) {
    std::string out;
    for (size_t i = 0; i < text.size(); ++i) {
      if (text[i] == '{' && i + 2 < text.size() && text[i + 2] == '}' && text[i + 1] >= '0' &&
          static_cast<size_t>(text[i + 1] - '0') < keys.size()) {
        out += name(keys[static_cast<size_t>(text[i + 1] - '0')]);
        i += 2;
      } else {
        out += text[i];
      }
    }
    return out;
  }

  std::vector<std::string> keys_;
  std::string text_;
};

// Choices are typed enums; each enum E declares its names once with
//   inline constexpr std::array<EnumName<E>, N> enum_names(E) { return {...}; }
// found by argument-dependent lookup.
template <class E>
struct EnumName {
  E value;
  const char* name;
};

template <class E>
std::string enum_to_string(E value) {
  for (const auto& n : enum_names(E{}))
    if (n.value == value) return n.name;
  return "?";
}

template <class E>
std::vector<std::string> enum_choices() {
  std::vector<std::string> names;
  for (const auto& n : enum_names(E{})) names.emplace_back(n.name);
  return names;
}

template <class E>
bool enum_from_string(const std::string& text, E& value) {
  for (const auto& n : enum_names(E{}))
    if (text == n.name) {
      value = n.value;
      return true;
    }
  return false;
}

// "90", "90s", "45m", "1.5h" → seconds; OptionError(key, ...) otherwise.
double parse_duration(const std::string& key, const std::string& text);

namespace option_detail {
std::string join(const std::vector<std::string>& names, const char* separator = ", ");
// Strict text → value conversions (the whole text must be used); false when it does not fit.
bool parse_bool(const std::string& text, bool& value);
bool parse_integer(const std::string& text, long double& value);
bool parse_real(const std::string& text, double& value);
std::string format_number(long double value);
// A range as people write it: "between 1 and 1000", "at least 1", "a number above 0" (a bound
// at the type's limit is no bound a user needs to read).
std::string range_words(long double low, long double high, bool low_open, bool integer);
}  // namespace option_detail

enum class OptionKind { kSwitch, kBool, kInteger, kReal, kText, kChoice, kList };

template <class S>
struct OptionSpec {
  std::string key;    // config.json key ("max_tokens"); also the neutral name in errors
  std::string flag;   // command line ("--max-tokens", "-o,--out"); empty = no flag
  std::string group;  // --help section
  std::string help;
  OptionKind kind = OptionKind::kText;
  bool saved = true;     // written to config.json
  bool identity = true;  // a change makes another run (see train::run_identity)
  bool required = false;
  bool has_range = false, lo_open = false;
  long double lo = 0, hi = 0;
  std::vector<std::string> choices;  // kChoice, and kText options limited to a list
  bool hidden = false;  // taken on the command line, not shown in --help
  // The range or choices are also checked as the command line is read, and --help shows them
  // after the type as CLI11 words its own checks (TEXT:{a,b}, INT:INT in [1 - 9]) instead of
  // the choices after the help text: for commands whose --help and errors other tools' users
  // know (nmt bleu's sacreBLEU options). Closed ranges only.
  bool check_on_read = false;
  // kList: one value per flag (-r A -r B) rather than every value up to the next flag (-i A B);
  // `delimiter` (0: none) also splits each value (-m bleu,chrf).
  bool one_per_flag = false;
  char delimiter = 0;

  // Generated by option<T>() from the field's type.
  std::function<nlohmann::json(const S&)> to_json;
  std::function<void(S&, const nlohmann::json&)> from_json;  // reads section[key] if present
  std::function<void(S&, const std::string&)> parse;         // command-line text → field
  std::function<std::string(const S&)> text;                 // field → text (--help defaults)
  std::function<long double(const S&)> number;               // numeric kinds only
  std::function<bool(const S&)> is_set;  // optional_option(): unset passes every range and choice
  std::function<void(S&, const std::vector<std::string>&)> parse_list;  // kList: command-line values → field

  // Builders: option(...).range(0, 10).not_saved()
  OptionSpec range(long double low, long double high) && {
    has_range = true;
    lo = low;
    hi = high;
    return std::move(*this);
  }
  OptionSpec positive(long double high) && {  // (0, high]
    has_range = lo_open = true;
    lo = 0;
    hi = high;
    return std::move(*this);
  }
  OptionSpec one_of(std::vector<std::string> names) && {
    choices = std::move(names);
    return std::move(*this);
  }
  OptionSpec not_saved() && {  // a property of the launch, not of the run
    saved = identity = false;
    return std::move(*this);
  }
  OptionSpec not_identity() && {  // saved, but changing it continues the same run
    identity = false;
    return std::move(*this);
  }
  OptionSpec is_required() && {
    required = true;
    return std::move(*this);
  }
  OptionSpec as_switch() && {  // a bool given as a bare --flag
    kind = OptionKind::kSwitch;
    return std::move(*this);
  }
  OptionSpec is_hidden() && {
    hidden = true;
    return std::move(*this);
  }
  OptionSpec checked_when_read() && {
    check_on_read = true;
    return std::move(*this);
  }
  OptionSpec one_value_per_flag() && {
    one_per_flag = true;
    return std::move(*this);
  }
  OptionSpec split_on(char separator) && {
    delimiter = separator;
    return std::move(*this);
  }

  // The long flag ("--out" of "-o,--out"), for messages.
  std::string long_flag() const { return flag.substr(flag.rfind(',') + 1); }

  // Range and choices (NaN and infinities are outside every range); throws OptionError.
  void check(const S& s) const {
    if (is_set && !is_set(s)) return;
    if (kind == OptionKind::kText && !choices.empty()) {
      const std::string v = text(s);
      for (const auto& c : choices)
        if (v == c) return;
      throw OptionError(key, fmt::format(": unknown value '{}' ({})", v, option_detail::join(choices, " or ")));
    }
    if (!has_range) return;
    const long double v = number(s);
    const bool integer = kind == OptionKind::kInteger;
    if (integer ? !(v >= lo && v <= hi) : (!std::isfinite(v) || !(v >= lo && v <= hi) || (lo_open && v == lo)))
      throw OptionError(key, fmt::format(" is {}, must be {}", integer ? option_detail::format_number(v) : text(s),
                                         option_detail::range_words(lo, hi, lo_open, integer)));
  }
};

// A spec for field `get(s)` of type T (bool, an integer, double, std::string or an enum with
// enum_names), with its kind, JSON reading/writing and text parsing generated from T.
template <class S, class T>
OptionSpec<S> option(const char* key, const char* flag, const char* group, const char* help, T S::*field) {
  OptionSpec<S> o;
  o.key = key;
  o.flag = flag;
  o.group = group;
  o.help = help;
  o.to_json = [field](const S& s) {
    if constexpr (std::is_enum_v<T>) return nlohmann::json(enum_to_string(s.*field));
    else return nlohmann::json(s.*field);
  };
  const std::string k = key;
  o.from_json = [field, k](S& s, const nlohmann::json& j) {
    if (!j.contains(k)) return;  // config.json files from before the key existed keep the default
    T& f = s.*field;
    if constexpr (std::is_same_v<T, bool>) {
      f = json_read::boolean(j, k.c_str());
    } else if constexpr (std::is_enum_v<T>) {
      const std::string v = json_read::string(j, k.c_str());
      if (!enum_from_string(v, f))
        throw RuntimeError(fmt::format("'{}' is '{}', must be {}", k, v, option_detail::join(enum_choices<T>(), " or ")));
    } else if constexpr (std::is_integral_v<T>) {
      // A float out of an integer's range is refused, never cast (undefined behaviour).
      constexpr int64_t lo = std::is_signed_v<T> ? static_cast<int64_t>(std::numeric_limits<T>::min()) : 0;
      constexpr int64_t hi = sizeof(T) >= sizeof(int64_t) ? std::numeric_limits<int64_t>::max()
                                                          : static_cast<int64_t>(std::numeric_limits<T>::max());
      f = static_cast<T>(json_read::integer(j, k.c_str(), lo, hi));
    } else if constexpr (std::is_floating_point_v<T>) {
      f = json_read::number(j, k.c_str());
    } else {
      f = json_read::string(j, k.c_str());
    }
  };
  o.parse = [field, k](S& s, const std::string& text) {
    T& f = s.*field;
    if constexpr (std::is_same_v<T, bool>) {
      if (!option_detail::parse_bool(text, f)) throw OptionError(k, fmt::format(": '{}' is not true or false", text));
    } else if constexpr (std::is_enum_v<T>) {
      if (!enum_from_string(text, f))
        throw OptionError(k, fmt::format(": unknown value '{}' ({})", text, option_detail::join(enum_choices<T>(), " or ")));
    } else if constexpr (std::is_integral_v<T>) {
      long double v = 0;
      if (!option_detail::parse_integer(text, v) || v < static_cast<long double>(std::numeric_limits<T>::min()) ||
          v > static_cast<long double>(std::numeric_limits<T>::max()))
        throw OptionError(k, fmt::format(": '{}' is not a whole number in range", text));
      f = static_cast<T>(v);
    } else if constexpr (std::is_floating_point_v<T>) {
      if (!option_detail::parse_real(text, f)) throw OptionError(k, fmt::format(": '{}' is not a number", text));
    } else {
      f = text;
    }
  };
  o.text = [field](const S& s) {
    if constexpr (std::is_same_v<T, bool>) return std::string(s.*field ? "true" : "false");
    else if constexpr (std::is_enum_v<T>) return enum_to_string(s.*field);
    else if constexpr (std::is_arithmetic_v<T>) return option_detail::format_number(static_cast<long double>(s.*field));
    else return std::string(s.*field);
  };
  if constexpr (std::is_arithmetic_v<T> && !std::is_same_v<T, bool>)
    o.number = [field](const S& s) { return static_cast<long double>(s.*field); };
  if constexpr (std::is_same_v<T, bool>) o.kind = OptionKind::kBool;
  else if constexpr (std::is_enum_v<T>) o.kind = OptionKind::kChoice, o.choices = enum_choices<T>();
  else if constexpr (std::is_integral_v<T>) o.kind = OptionKind::kInteger;
  else if constexpr (std::is_floating_point_v<T>) o.kind = OptionKind::kReal;
  else o.kind = OptionKind::kText;
  return o;
}

// A number of seconds given on the command line as a duration ("90s", "45m", "1.5h").
template <class S>
OptionSpec<S> duration_option(const char* key, const char* flag, const char* group, const char* help, double S::*field) {
  OptionSpec<S> o = option(key, flag, group, help, field);
  o.parse = [field, k = std::string(key)](S& s, const std::string& text) { s.*field = parse_duration(k, text); };
  return o;
}

// A spec for a std::optional<T> field (T as for option()): unset, it shows no default in --help,
// passes every range and choice and is null in JSON; set, it is read and checked as a T.
template <class S, class T>
OptionSpec<S> optional_option(const char* key, const char* flag, const char* group, const char* help,
                              std::optional<T> S::*field) {
  struct Value {
    T value{};
  };
  const OptionSpec<Value> plain = option(key, flag, group, help, &Value::value);
  OptionSpec<S> o;
  o.key = plain.key, o.flag = plain.flag, o.group = plain.group, o.help = plain.help, o.kind = plain.kind;
  o.choices = plain.choices;
  o.to_json = [f = plain.to_json, field](const S& s) { return s.*field ? f(Value{*(s.*field)}) : nlohmann::json(); };
  o.from_json = [f = plain.from_json, field, k = std::string(key)](S& s, const nlohmann::json& j) {
    if (!j.contains(k)) return;
    if (j.at(k).is_null()) return (s.*field).reset();
    Value v;
    f(v, j);
    s.*field = v.value;
  };
  o.parse = [f = plain.parse, field](S& s, const std::string& text) {
    Value v;
    f(v, text);
    s.*field = v.value;
  };
  o.text = [f = plain.text, field](const S& s) { return s.*field ? f(Value{*(s.*field)}) : std::string(); };
  if (plain.number) o.number = [f = plain.number, field](const S& s) { return f(Value{(s.*field).value_or(T{})}); };
  o.is_set = [field](const S& s) { return (s.*field).has_value(); };
  return o;
}

// A list of texts (kList: files, names): the command line's values replace the default.
template <class S>
OptionSpec<S> list_option(const char* key, const char* flag, const char* group, const char* help,
                          std::vector<std::string> S::*field) {
  OptionSpec<S> o;
  o.key = key, o.flag = flag, o.group = group, o.help = help, o.kind = OptionKind::kList;
  o.to_json = [field](const S& s) { return nlohmann::json(s.*field); };
  o.from_json = [field, k = std::string(key)](S& s, const nlohmann::json& j) {
    if (!j.contains(k)) return;
    const nlohmann::json& v = j.at(k);
    const auto is_text = [](const nlohmann::json& e) { return e.is_string(); };
    if (!v.is_array() || !std::all_of(v.begin(), v.end(), is_text))
      throw RuntimeError(fmt::format("'{}' must be a list of strings", k));
    s.*field = v.get<std::vector<std::string>>();
  };
  o.parse = [field](S& s, const std::string& text) { s.*field = {text}; };
  o.parse_list = [field](S& s, const std::vector<std::string>& values) { s.*field = values; };
  o.text = [field](const S& s) { return option_detail::join(s.*field, " "); };
  return o;
}

// The spec of an option of a nested struct (ModelConfig inside TrainOptions), seen from the
// outer one.
template <class Outer, class Inner>
OptionSpec<Outer> nested(const OptionSpec<Inner>& in, Inner Outer::*member) {
  OptionSpec<Outer> o;
  o.key = in.key, o.flag = in.flag, o.group = in.group, o.help = in.help, o.kind = in.kind;
  o.saved = in.saved, o.identity = in.identity, o.required = in.required;
  o.has_range = in.has_range, o.lo_open = in.lo_open, o.lo = in.lo, o.hi = in.hi, o.choices = in.choices;
  o.hidden = in.hidden, o.check_on_read = in.check_on_read, o.one_per_flag = in.one_per_flag, o.delimiter = in.delimiter;
  o.to_json = [f = in.to_json, member](const Outer& s) { return f(s.*member); };
  o.from_json = [f = in.from_json, member](Outer& s, const nlohmann::json& j) { f(s.*member, j); };
  o.parse = [f = in.parse, member](Outer& s, const std::string& t) { f(s.*member, t); };
  o.text = [f = in.text, member](const Outer& s) { return f(s.*member); };
  if (in.number) o.number = [f = in.number, member](const Outer& s) { return f(s.*member); };
  if (in.is_set) o.is_set = [f = in.is_set, member](const Outer& s) { return f(s.*member); };
  if (in.parse_list)
    o.parse_list = [f = in.parse_list, member](Outer& s, const std::vector<std::string>& v) { f(s.*member, v); };
  return o;
}

// The saved options of `s` as a JSON object.
template <class S>
nlohmann::json options_to_json(const S& s, const std::vector<OptionSpec<S>>& specs) {
  nlohmann::json j = nlohmann::json::object();
  for (const auto& spec : specs)
    if (spec.saved) j[spec.key] = spec.to_json(s);
  return j;
}

// Reads the saved options present in `j` over `s` (typed: RuntimeError naming the key).
template <class S>
void options_from_json(S& s, const nlohmann::json& j, const std::vector<OptionSpec<S>>& specs) {
  for (const auto& spec : specs)
    if (spec.saved) spec.from_json(s, j);
}

// Every option's range and choices (OptionError naming the first one outside).
template <class S>
void check_options(const S& s, const std::vector<OptionSpec<S>>& specs) {
  for (const auto& spec : specs) spec.check(s);
}

template <class S>
const OptionSpec<S>* find_option(const std::vector<OptionSpec<S>>& specs, const std::string& key) {
  for (const auto& spec : specs)
    if (spec.key == key) return &spec;
  return nullptr;
}

}  // namespace nmt
