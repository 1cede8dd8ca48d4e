#include "nmt/models/architecture.h"

#include <deque>
#include <mutex>

#include <fmt/format.h>

#include "nmt/util/error.h"

namespace nmt::models {

void ConfigChecks::in_range(const char* key, int64_t value, int64_t lo, int64_t hi) const {
  if (value < lo || value > hi)
    throw RuntimeError(fmt::format("{} is {}, must be between {} and {}", name_(key), value, lo, hi));
}

void ConfigChecks::probability(const char* key, double value) const {
  if (!(value >= 0 && value < 1)) throw RuntimeError(fmt::format("{} is {}, must be in [0, 1)", name_(key), value));
}

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

void register_architecture(Architecture architecture) {
  Registry& r = registry();
  std::lock_guard<std::mutex> lock(r.mutex);
  for (const Architecture& a : r.architectures)
    if (a.name == architecture.name)
      throw RuntimeError(fmt::format("model type '{}' is registered already", architecture.name));
  r.architectures.push_back(std::move(architecture));
}

}  // namespace nmt::models
