#include "nmt/util/option_spec.h"

#include <cerrno>
#include <cstdlib>

namespace nmt {

double parse_duration(const std::string& key, const std::string& text) {
  double value = 0;
  size_t used = 0;
  try {
    value = std::stod(text, &used);
  } catch (const std::exception&) {
    throw OptionError(key, fmt::format(": '{}' is not a duration (e.g. 90s, 60m, 1.5h)", text));
  }
  const std::string unit = text.substr(used);
  double scale = 1;
  if (unit == "" || unit == "s") scale = 1;
  else if (unit == "m" || unit == "min") scale = 60;
  else if (unit == "h") scale = 3600;
  else throw OptionError(key, fmt::format(": unknown unit '{}' in '{}' (use s, m or h)", unit, text));
  if (value < 0) throw OptionError(key, " must not be negative");
  return value * scale;
}

namespace option_detail {

std::string join(const std::vector<std::string>& names, const char* separator) {
  std::string out;
  for (size_t i = 0; i < names.size(); ++i) out += (i ? separator : "") + names[i];
  return out;
}

bool parse_bool(const std::string& text, bool& value) {
  // CLI11's spellings, which --config files and existing scripts use.
  for (const char* yes : {"true", "1", "yes", "on", "enable"})
    if (text == yes) return value = true, true;
  for (const char* no : {"false", "0", "no", "off", "disable"})
    if (text == no) return value = false, true;
  return false;
}

bool parse_integer(const std::string& text, long double& value) {
  if (text.empty()) return false;
  errno = 0;
  char* end = nullptr;
  if (text[0] == '-') {
    const long long v = std::strtoll(text.c_str(), &end, 10);
    value = static_cast<long double>(v);
  } else {
    const unsigned long long v = std::strtoull(text.c_str(), &end, 10);
    value = static_cast<long double>(v);
  }
  return errno == 0 && end == text.c_str() + text.size();
}

bool parse_real(const std::string& text, double& value) {
  if (text.empty()) return false;
  errno = 0;
  char* end = nullptr;
  value = std::strtod(text.c_str(), &end);
  return errno != ERANGE && end == text.c_str() + text.size();
}

std::string format_number(long double value) {
  if (std::isfinite(value) && value == std::floor(value) && std::fabs(value) < 1e18L)
    return fmt::format("{}", static_cast<long long>(value));
  return fmt::format("{}", static_cast<double>(value));
}

std::string range_words(long double low, long double high, bool low_open, bool integer) {
  const bool no_upper_bound = high >= 1e15L;  // INT64_MAX, DBL_MAX, ...: the type's limit
  const std::string a = integer ? "" : "a number ";
  if (no_upper_bound)
    return fmt::format("{}{} {}", a, low_open ? "above" : "at least", format_number(low));
  if (low_open) return fmt::format("{}above {} and at most {}", a, format_number(low), format_number(high));
  return fmt::format("{}between {} and {}", a, format_number(low), format_number(high));
}

}  // namespace option_detail
}  // namespace nmt
