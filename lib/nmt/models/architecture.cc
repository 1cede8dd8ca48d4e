#include "nmt/models/architecture.h"

#include <deque>
#include <mutex>

#include <fmt/format.h>

#include "nmt/util/error.h"

namespace nmt::models {

namespace {

struct Registry {
  std::mutex mutex;
  std::deque<Architecture> architectures;  // a deque: references handed out stay valid as more come
};

Registry& registry() {
  static Registry r{{}, {transformer_architecture(), gru_architecture()}};  // the built-in architectures
  return r;
}

}  // namespace

const Architecture& architecture(const std::string& name) {
  Registry& r = registry();
  std::lock_guard<std::mutex> lock(r.mutex);
  for (const Architecture& a : r.architectures)
    if (a.name == name) return a;
  std::string known;
  for (const Architecture& a : r.architectures) known += (known.empty() ? "" : " or ") + a.name;
  throw RuntimeError(fmt::format("unknown model type '{}' ({})", name, known));
}

std::vector<std::string> architecture_names() {
  Registry& r = registry();
  std::lock_guard<std::mutex> lock(r.mutex);
  std::vector<std::string> names;
  for (const Architecture& a : r.architectures) names.push_back(a.name);
  return names;
}

std::vector<ConfigGroup> config_groups() {
  Registry& r = registry();
  std::lock_guard<std::mutex> lock(r.mutex);
  std::vector<ConfigGroup> groups;
  for (const Architecture& a : r.architectures) groups.push_back(a.config_group);
  return groups;
}

void register_architecture(Architecture architecture) {
  Registry& r = registry();
  std::lock_guard<std::mutex> lock(r.mutex);
  for (const Architecture& a : r.architectures)
    if (a.name == architecture.name)
      throw RuntimeError(fmt::format("model type '{}' is registered already", architecture.name));
  r.architectures.push_back(std::move(architecture));
}

}  // namespace nmt::models
