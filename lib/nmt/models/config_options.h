#pragma once
// The model's rows of the option table (see util/option_spec.h): config.json's "model" section
// and the model flags of `nmt train` come from them. Apart from config.h so that the many files
// including config.h do not see the option machinery.
#include <any>
#include <functional>
#include <string>
#include <vector>

#include "nmt/models/config.h"
#include "nmt/util/option_spec.h"

namespace nmt::models {

// Every key of config.json's "model" object: the shared fields', then each registered
// architecture's group's, in registration order; the vocabulary sizes have no flag (they come
// from the subword model). Ranges are checked by ModelConfig::validate(): which sizes matter
// depends on the architecture. Architectures registered after its first use add no rows.
const std::vector<OptionSpec<ModelConfig>>& model_option_specs();

// An architecture's own group of keys, type-erased for the registry (Architecture::config_group):
// a fresh group at its defaults and its rows of the model's table.
struct ConfigGroup {
  std::function<std::any()> make_defaults;  // empty: the architecture reads only the shared fields
  std::function<std::vector<OptionSpec<ModelConfig>>()> rows;
};

// A row of group G's own table as a row of the model's, reading and writing config.get<G>()
// (what nested() in util/option_spec.h does for a struct member; keep the two in step).
template <class G>
OptionSpec<ModelConfig> group_row(const OptionSpec<G>& in) {
  using M = ModelConfig;
  OptionSpec<M> o;
  o.key = in.key, o.flag = in.flag, o.group = in.group, o.help = in.help, o.kind = in.kind;
  o.saved = in.saved, o.identity = in.identity, o.required = in.required;
  o.has_range = in.has_range, o.lo_open = in.lo_open, o.lo = in.lo, o.hi = in.hi, o.choices = in.choices;
  o.hidden = in.hidden, o.check_on_read = in.check_on_read;
  o.one_per_flag = in.one_per_flag, o.delimiter = in.delimiter;
  o.to_json = [f = in.to_json](const M& c) { return f(c.get<G>()); };
  o.from_json = [f = in.from_json](M& c, const nlohmann::json& j) { f(c.get<G>(), j); };
  o.parse = [f = in.parse](M& c, const std::string& t) { f(c.get<G>(), t); };
  o.text = [f = in.text](const M& c) { return f(c.get<G>()); };
  if (in.number) o.number = [f = in.number](const M& c) { return f(c.get<G>()); };
  if (in.is_set) o.is_set = [f = in.is_set](const M& c) { return f(c.get<G>()); };
  if (in.parse_list)
    o.parse_list = [f = in.parse_list](M& c, const std::vector<std::string>& v) { f(c.get<G>(), v); };
  return o;
}

// The registry's entry for group G, whose own table `rows` gives (its config.json keys, in
// --help's order).
template <class G>
ConfigGroup config_group(std::vector<OptionSpec<G>> (*rows)()) {
  ConfigGroup group;
  group.make_defaults = [] { return std::any(G{}); };
  group.rows = [rows] {
    std::vector<OptionSpec<ModelConfig>> out;
    for (const OptionSpec<G>& row : rows()) out.push_back(group_row(row));
    return out;
  };
  return group;
}

}  // namespace nmt::models
