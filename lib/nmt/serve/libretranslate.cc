#include "nmt/serve/libretranslate.h"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>

#include "nmt/serve/server.h"
#include "nmt/text/unicode.h"

namespace nmt::serve {

namespace {

bool starts_with(std::string_view s, std::string_view prefix) { return s.substr(0, prefix.size()) == prefix; }

bool is_form(std::string_view content_type) {
  return starts_with(content_type, "application/x-www-form-urlencoded") || starts_with(content_type, "multipart/form-data");
}

// LibreTranslate's fields, from a form (strings) or a JSON object (q may be a list, alternatives
// a number).
struct Fields {
  nlohmann::json object = nlohmann::json::object();
  bool has(const char* name) const { return object.contains(name) && !object[name].is_null(); }
  std::string text(const char* name) const {
    if (!has(name)) return "";
    const auto& v = object[name];
    if (!v.is_string()) throw ApiError(400, fmt::format("Invalid request: {} parameter is not a string", name));
    return v.get<std::string>();
  }
};

Fields read_fields(std::string_view content_type, std::string_view body, const FormFields& form) {
  Fields f;
  try {  // a JSON object, whatever the content type says (curl -d calls JSON a form)
    f.object = nlohmann::json::parse(body.begin(), body.end());
    if (f.object.is_object()) return f;
  } catch (const nlohmann::json::parse_error&) {
  }
  if (!is_form(content_type)) throw ApiError(400, "Invalid JSON format");
  f.object = nlohmann::json::object();
  for (const auto& [name, value] : form) f.object[name] = value;  // a repeated field: its last value
  return f;
}

std::vector<std::string> read_q(const Fields& f, bool& list) {
  std::vector<std::string> q;
  const auto& v = f.object.contains("q") ? f.object["q"] : nlohmann::json();
  list = v.is_array();
  if (list) {
    for (const auto& item : v) {
      if (!item.is_string()) throw ApiError(400, "Invalid request: q must be a string or a list of strings");
      q.push_back(item.get<std::string>());
    }
  } else if (v.is_string()) {
    q.push_back(v.get<std::string>());
  } else if (!v.is_null()) {
    throw ApiError(400, "Invalid request: q must be a string or a list of strings");
  }
  // As LibreTranslate: an empty string or list is a missing q.
  if (q.empty() || (!list && q.front().empty())) throw ApiError(400, "Invalid request: missing q parameter");
  for (const auto& s : q)
    if (!text::is_valid_utf8(s)) throw ApiError(400, "Invalid request: q is not valid UTF-8");
  return q;
}

int read_alternatives(const Fields& f, int max) {
  if (!f.has("alternatives")) return 0;
  const auto& v = f.object["alternatives"];
  int64_t n = 0;
  if (v.is_number_integer()) {
    n = v.get<int64_t>();
  } else {
    const std::string s = v.is_string() ? v.get<std::string>() : "";
    if (s.empty() || s.find_first_not_of("0123456789") != std::string::npos)
      throw ApiError(400, "Invalid request: alternatives parameter is not a number");
    n = s.size() > 9 ? max + 1 : std::stoll(s);
  }
  if (n < 0 || n > max)
    throw ApiError(400, fmt::format("Invalid request: alternatives must be between 0 and {}", max));
  return static_cast<int>(n);
}

nlohmann::json alternatives_of(const Nbest& n) {
  nlohmann::json out = nlohmann::json::array();
  for (size_t k = 1; k < n.size(); ++k) out.push_back(n[k].text);
  return out;
}

}  // namespace

bool is_libretranslate_request(std::string_view content_type, std::string_view body) {
  // By the body first: curl -d sends nmt's own JSON as a form (its default content type).
  try {
    const auto j = nlohmann::json::parse(body.begin(), body.end());
    if (j.is_object()) return j.contains("q");
  } catch (const nlohmann::json::parse_error&) {
  }
  return is_form(content_type);
}

std::string libretranslate_api_key(std::string_view content_type, std::string_view body, const FormFields& form) {
  try {
    const Fields f = read_fields(content_type, body, form);
    return f.has("api_key") && f.object["api_key"].is_string() ? f.object["api_key"].get<std::string>() : "";
  } catch (const ApiError&) {
    return "";
  }
}

LtTranslateRequest parse_libretranslate_request(std::string_view content_type, std::string_view body,
                                                const FormFields& form, const ApiLimits& limits) {
  const Fields f = read_fields(content_type, body, form);
  LtTranslateRequest r;
  r.q = read_q(f, r.list);
  r.source = f.text("source");
  if (r.source.empty()) throw ApiError(400, "Invalid request: missing source parameter");
  r.target = f.text("target");
  if (r.target.empty()) throw ApiError(400, "Invalid request: missing target parameter");
  const std::string format = f.has("format") ? f.text("format") : "text";
  if (format != "text" && format != "html") throw ApiError(400, fmt::format("{} format is not supported", format));
  r.html = format == "html";
  r.alternatives = read_alternatives(f, std::max(0, limits.max_beam - 1));
  r.api_key = f.text("api_key");
  if (r.q.size() > limits.max_sentences)
    throw ApiError(400, fmt::format("Invalid request: request ({}) exceeds text limit ({})", r.q.size(), limits.max_sentences));
  return r;
}

size_t libretranslate_model(const LtTranslateRequest& r, const std::vector<ServedModelInfo>& models) {
  bool source_known = r.source == "auto", target_known = false;
  for (size_t i = 0; i < models.size(); ++i) {
    source_known |= models[i].source_language == r.source;
    target_known |= models[i].target_language == r.target;
    if ((r.source == "auto" || models[i].source_language == r.source) && models[i].target_language == r.target) return i;
  }
  if (!source_known) throw ApiError(400, fmt::format("{} is not supported", r.source));
  if (!target_known) throw ApiError(400, fmt::format("{} is not supported", r.target));
  throw ApiError(400, fmt::format("{} to {} is not supported", r.source, r.target));
}

std::string libretranslate_response(const LtTranslateRequest& r, const std::vector<Nbest>& results,
                                    const std::string& model_source) {
  nlohmann::json texts = nlohmann::json::array(), alternatives = nlohmann::json::array(),
                 detected = nlohmann::json::array();
  for (const auto& n : results) {
    texts.push_back(n.empty() ? std::string() : n.front().text);
    alternatives.push_back(alternatives_of(n));
    detected.push_back({{"confidence", 0}, {"language", model_source}});
  }
  nlohmann::json out = {{"translatedText", r.list ? texts : texts[0]}};
  if (r.alternatives > 0) out["alternatives"] = r.list ? alternatives : alternatives[0];
  if (r.source == "auto") out["detectedLanguage"] = r.list ? detected : detected[0];
  return out.dump();
}

std::string libretranslate_languages(const std::vector<ServedModelInfo>& models) {
  std::vector<std::string> codes;  // in the order models name them
  std::map<std::string, std::vector<std::string>> targets;
  for (const auto& m : models)
    for (const auto* code : {&m.source_language, &m.target_language}) {
      if (code->empty()) continue;
      if (std::find(codes.begin(), codes.end(), *code) == codes.end()) codes.push_back(*code);
      auto& t = targets[m.source_language];
      if (code == &m.target_language && std::find(t.begin(), t.end(), *code) == t.end()) t.push_back(*code);
    }
  nlohmann::json out = nlohmann::json::array();
  for (const auto& c : codes) out.push_back({{"code", c}, {"name", language_name(c)}, {"targets", targets[c]}});
  return out.dump();
}

std::string libretranslate_settings(const std::vector<ServedModelInfo>& models, bool key_required) {
  const ServedModelInfo* first = models.empty() ? nullptr : &models.front();
  auto language = [](const std::string& code) { return nlohmann::json{{"code", code}, {"name", language_name(code)}}; };
  const nlohmann::json out = {
      {"charLimit", -1},
      {"frontendTimeout", 500},
      {"apiKeys", key_required},
      {"keyRequired", key_required},
      {"suggestions", false},
      {"filesTranslation", false},
      {"supportedFilesFormat", nlohmann::json::array()},
      {"language",
       {{"source", language(first ? first->source_language : "")}, {"target", language(first ? first->target_language : "")}}}};
  return out.dump();
}

std::string libretranslate_error(std::string_view message) { return nlohmann::json{{"error", message}}.dump(); }

std::string language_name(const std::string& code) {
  static const std::map<std::string, std::string> names = {
      {"ar", "Arabic"},     {"bg", "Bulgarian"}, {"ca", "Catalan"},   {"cs", "Czech"},      {"da", "Danish"},
      {"de", "German"},     {"el", "Greek"},     {"en", "English"},   {"es", "Spanish"},    {"et", "Estonian"},
      {"fa", "Persian"},    {"fi", "Finnish"},   {"fr", "French"},    {"ga", "Irish"},      {"he", "Hebrew"},
      {"hi", "Hindi"},      {"hu", "Hungarian"}, {"id", "Indonesian"}, {"it", "Italian"},   {"ja", "Japanese"},
      {"ko", "Korean"},     {"lt", "Lithuanian"}, {"lv", "Latvian"},  {"nl", "Dutch"},      {"no", "Norwegian"},
      {"pl", "Polish"},     {"pt", "Portuguese"}, {"ro", "Romanian"}, {"ru", "Russian"},    {"sk", "Slovak"},
      {"sl", "Slovenian"},  {"sv", "Swedish"},   {"th", "Thai"},      {"tr", "Turkish"},    {"uk", "Ukrainian"},
      {"vi", "Vietnamese"}, {"zh", "Chinese"}};
  const auto it = names.find(code);
  return it == names.end() ? code : it->second;
}

}  // namespace nmt::serve
