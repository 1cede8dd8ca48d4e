#pragma once
// Typed reads of JSON that came from a file (config.json, manifest.json, state.json,
// metrics.jsonl): a value of the wrong type or out of range is a RuntimeError naming the key,
// never nlohmann's raw exception, and a float is never cast to an integer it does not fit
// (1e300 → int64 is undefined behaviour).
#include <cstdint>
#include <string>

#include <nlohmann/json.hpp>

namespace nmt::json_read {

// j[key] as an integer in [lo, hi]; floats must be integral. RuntimeError "'KEY' ..." otherwise.
int64_t integer(const nlohmann::json& j, const char* key, int64_t lo, int64_t hi);
// j[key] as a finite number.
double number(const nlohmann::json& j, const char* key);
std::string string(const nlohmann::json& j, const char* key);
bool boolean(const nlohmann::json& j, const char* key);
// The object j[key]; RuntimeError if missing or not an object.
const nlohmann::json& object(const nlohmann::json& j, const char* key);

// Parses text as JSON; RuntimeError "WHERE: not valid JSON (...)" (one line).
nlohmann::json parse(const std::string& text, const std::string& where);

}  // namespace nmt::json_read
