#include "nmt/util/json_read.h"

#include <cmath>

#include <fmt/format.h>

#include "nmt/util/error.h"

namespace nmt::json_read {

namespace {
const nlohmann::json& at(const nlohmann::json& j, const char* key) {
  if (!j.is_object()) throw RuntimeError(fmt::format("expected a JSON object holding '{}'", key));
  const auto it = j.find(key);
  if (it == j.end()) throw RuntimeError(fmt::format("'{}' is missing", key));
  return *it;
}
}  // namespace

int64_t integer(const nlohmann::json& j, const char* key, int64_t lo, int64_t hi) {
  const nlohmann::json& v = at(j, key);
  auto out_of_range = [&](const std::string& value) {
    return RuntimeError(fmt::format("'{}' is {}, must be between {} and {}", key, value, lo, hi));
  };
  if (v.is_number_unsigned()) {
    const uint64_t u = v.get<uint64_t>();
    if (u > static_cast<uint64_t>(hi)) throw out_of_range(std::to_string(u));
    return static_cast<int64_t>(u);
  }
  if (v.is_number_integer()) {
    const int64_t i = v.get<int64_t>();
    if (i < lo || i > hi) throw out_of_range(std::to_string(i));
    return i;
  }
  if (v.is_number_float()) {
    const double d = v.get<double>();
    // Compared as doubles before any cast: a double outside int64's range has no int value.
    if (!std::isfinite(d) || d != std::floor(d)) throw RuntimeError(fmt::format("'{}' is {}, not an integer", key, d));
    if (d < static_cast<double>(lo) || d > static_cast<double>(hi)) throw out_of_range(fmt::format("{}", d));
    return static_cast<int64_t>(d);
  }
  throw RuntimeError(fmt::format("'{}' is a {}, expected an integer", key, v.type_name()));
}

double number(const nlohmann::json& j, const char* key) {
  const nlohmann::json& v = at(j, key);
  if (!v.is_number()) throw RuntimeError(fmt::format("'{}' is a {}, expected a number", key, v.type_name()));
  const double d = v.get<double>();
  if (!std::isfinite(d)) throw RuntimeError(fmt::format("'{}' is not finite", key));
  return d;
}

std::string string(const nlohmann::json& j, const char* key) {
  const nlohmann::json& v = at(j, key);
  if (!v.is_string()) throw RuntimeError(fmt::format("'{}' is a {}, expected a string", key, v.type_name()));
  return v.get<std::string>();
}

bool boolean(const nlohmann::json& j, const char* key) {
  const nlohmann::json& v = at(j, key);
  if (!v.is_boolean()) throw RuntimeError(fmt::format("'{}' is a {}, expected true or false", key, v.type_name()));
  return v.get<bool>();
}

const nlohmann::json& object(const nlohmann::json& j, const char* key) {
  const nlohmann::json& v = at(j, key);
  if (!v.is_object()) throw RuntimeError(fmt::format("'{}' is a {}, expected an object", key, v.type_name()));
  return v;
}

nlohmann::json parse(const std::string& text, const std::string& where) {
  try {
    return nlohmann::json::parse(text);
  } catch (const nlohmann::json::exception& e) {
    throw RuntimeError(fmt::format("{}: not valid JSON ({})", where, e.what()));
  }
}

}  // namespace nmt::json_read
