#include "nmt/serve/api.h"

#include <algorithm>
#include <atomic>
#include <cmath>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "nmt/decode/result_writer.h"
#include "nmt/text/unicode.h"

namespace nmt::serve {

namespace {

// A small positive integer field, or `fallback` when absent.
int read_count(const nlohmann::json& body, const char* field, int fallback, int max) {
  auto it = body.find(field);
  if (it == body.end() || it->is_null()) return fallback;
  if (!it->is_number_integer() && !it->is_number_unsigned())
    throw ApiError(400, fmt::format("\"{}\" must be an integer", field));
  const auto v = it->get<int64_t>();
  if (v < 1 || v > max) throw ApiError(400, fmt::format("\"{}\" is {}, must be between 1 and {}", field, v, max));
  return static_cast<int>(v);
}

// A string field of valid UTF-8; `where` names it.
std::string read_sentence_field(const nlohmann::json& v, const std::string& where) {
  if (!v.is_string()) throw ApiError(400, fmt::format("{} must be a string", where));
  std::string s = v.get<std::string>();
  if (!text::is_valid_utf8(s)) throw ApiError(400, fmt::format("{} is not valid UTF-8", where));
  return s;
}

std::string read_sentence(const nlohmann::json& v, size_t index, bool list) {
  if (!v.is_string())
    throw ApiError(400, list ? fmt::format("\"text\"[{}] must be a string", index) : std::string("\"text\" must be a string or a list of strings"));
  std::string s = v.get<std::string>();
  // nlohmann's parser already refuses ill-formed UTF-8; this keeps the promise whatever parsed it.
  if (!text::is_valid_utf8(s)) throw ApiError(400, "\"text\" is not valid UTF-8");
  return s;
}

// A list of phrases: non-empty strings of valid UTF-8, at most `max`. `where` names it.
std::vector<std::string> read_phrases(const nlohmann::json& v, const std::string& where, size_t max) {
  if (!v.is_array()) throw ApiError(400, fmt::format("{} must be a list of strings", where));
  if (v.size() > max) throw ApiError(400, fmt::format("{} has {} phrases; the limit is {}", where, v.size(), max));
  std::vector<std::string> out;
  for (size_t i = 0; i < v.size(); ++i) {
    if (!v[i].is_string()) throw ApiError(400, fmt::format("{}[{}] must be a string", where, i));
    std::string s = v[i].get<std::string>();
    if (!text::is_valid_utf8(s)) throw ApiError(400, fmt::format("{}[{}] is not valid UTF-8", where, i));
    if (text::python_strip(std::string_view(s)).empty()) throw ApiError(400, fmt::format("{}[{}] is an empty phrase", where, i));
    out.push_back(std::move(s));
  }
  return out;
}

// "constraints" and "avoid" onto the request's sentences.
void read_constraints(const nlohmann::json& j, TranslateRequest& r, const ApiLimits& limits) {
  if (auto c = j.find("constraints"); c != j.end() && !c->is_null()) {
    r.constrained = true;
    if (!r.list) {
      r.sentences[0].constraints.include = read_phrases(*c, "\"constraints\"", limits.max_phrases);
    } else {
      if (!c->is_array() || c->size() != r.sentences.size())
        throw ApiError(400, fmt::format("\"constraints\" must be a list of {} lists of phrases, one per sentence of \"text\"",
                                        r.sentences.size()));
      for (size_t i = 0; i < r.sentences.size(); ++i)
        r.sentences[i].constraints.include = read_phrases((*c)[i], fmt::format("\"constraints\"[{}]", i), limits.max_phrases);
    }
    for (const auto& s : r.sentences) r.key.constrained |= !s.constraints.include.empty();
  }
  if (auto a = j.find("avoid"); a != j.end() && !a->is_null()) {
    const auto avoid = read_phrases(*a, "\"avoid\"", limits.max_phrases);
    for (auto& s : r.sentences) s.constraints.avoid = avoid;
  }
}

constexpr const char* kOwnFields[] = {"text",   "beam",      "nbest",  "model", "constraints",
                                      "avoid",  "prefix",    "alignment", "markup", "stream"};

bool known_field(const std::string& name) {
  for (const char* f : kOwnFields)
    if (name == f) return true;
  for (const char* f : kRequestSearchKeys)
    if (name == f) return true;
  return false;
}

std::string known_fields() {
  std::string s;
  for (const char* f : kOwnFields) s += (s.empty() ? "" : ", ") + std::string(f);
  for (const char* f : kRequestSearchKeys) s += ", " + std::string(f);
  return s;
}

bool read_switch(const nlohmann::json& j, const char* field) {
  auto it = j.find(field);
  if (it == j.end() || it->is_null()) return false;
  if (!it->is_boolean()) throw ApiError(400, fmt::format("\"{}\" must be true or false", field));
  return it->get<bool>();
}

// "prefix": a string for one text, a list of strings (one per sentence, "" for none) for a list.
void read_prefixes(const nlohmann::json& j, TranslateRequest& r) {
  auto p = j.find("prefix");
  if (p == j.end() || p->is_null()) return;
  if (!r.list) {
    r.sentences[0].prefix = read_sentence_field(*p, "\"prefix\"");
    return;
  }
  if (!p->is_array() || p->size() != r.sentences.size())
    throw ApiError(400, fmt::format("\"prefix\" must be a list of {} strings, one per sentence of \"text\"", r.sentences.size()));
  for (size_t i = 0; i < r.sentences.size(); ++i)
    r.sentences[i].prefix = read_sentence_field((*p)[i], fmt::format("\"prefix\"[{}]", i));
}

// The request's own search options over the server's, checked as `nmt translate` checks its
// flags; the key then carries the ones it set.
void read_search(const nlohmann::json& j, TranslateRequest& r, const ApiDefaults& defaults) {
  nlohmann::json given = nlohmann::json::object();
  for (const char* k : kRequestSearchKeys)
    if (auto it = j.find(k); it != j.end() && !it->is_null()) given[k] = *it;
  decode::SearchOptions search = defaults.search;
  search.beam = r.key.beam;
  search.nbest = r.key.nbest;
  for (const auto& spec : decode::search_option_specs()) {
    if (!given.contains(spec.key)) continue;
    try {
      spec.from_json(search, given);
    } catch (const std::exception& e) {
      throw ApiError(400, fmt::format("\"{}\": {}", spec.key, e.what()));
    }
  }
  // Sampling draws one translation: a request that samples and names no beam gets none.
  if (search.use_sampling() && !j.contains("beam") && !j.contains("nbest")) search.beam = search.nbest = r.key.beam = r.key.nbest = 1;
  try {
    decode::validate_search_options(search, [](const std::string& key) { return "\"" + key + "\""; });
  } catch (const std::exception& e) {
    std::string message = e.what();
    if (const auto at = message.find("--sampling"); at != std::string::npos) message.replace(at, 10, "\"sampling\"");
    throw ApiError(400, message);
  }
  if (search.use_sampling() && r.key.constrained)
    throw ApiError(400, "\"sampling\" does not combine with \"constraints\" (phrases to include need beam search)");
  r.key.search = given.empty() ? std::string() : given.dump();
  static std::atomic<uint64_t> next_alone{0};
  if (search.use_sampling()) r.key.alone = ++next_alone;
}

}  // namespace

TranslateRequest parse_translate_request(std::string_view body, const ApiDefaults& defaults, const ApiLimits& limits) {
  if (body.empty()) throw ApiError(400, "empty body: expected a JSON object such as {\"text\": \"Hello.\"}");
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(body.begin(), body.end());
  } catch (const nlohmann::json::parse_error& e) {
    // nlohmann's own text names its internals ("[json.exception.parse_error.101] ... last read"):
    // the client gets where and, for the usual case, why.
    const bool utf8 = std::string_view(e.what()).find("UTF-8") != std::string_view::npos;
    throw ApiError(400, fmt::format("the body is not {} (at byte {}); expected a JSON object such as {{\"text\": \"Hello.\"}}",
                                    utf8 ? "valid UTF-8" : "valid JSON", e.byte));
  }
  if (!j.is_object()) throw ApiError(400, "the body must be a JSON object such as {\"text\": \"Hello.\"}");
  for (const auto& item : j.items())
    if (!known_field(item.key()))
      throw ApiError(400, fmt::format("unknown field \"{}\" (known: {})", item.key(), known_fields()));
  auto text = j.find("text");
  if (text == j.end()) throw ApiError(400, "missing field \"text\"");
  TranslateRequest r;
  r.list = text->is_array();
  if (r.list) {
    if (text->size() > limits.max_sentences)
      throw ApiError(413, fmt::format("{} sentences in one request; the limit is {}", text->size(), limits.max_sentences));
    r.sentences.reserve(text->size());
    for (size_t i = 0; i < text->size(); ++i) r.sentences.push_back(read_sentence((*text)[i], i, true));
  } else {
    r.sentences.push_back(read_sentence(*text, 0, false));
  }
  r.key.model = defaults.models.empty() ? std::string() : defaults.models.front();
  if (auto m = j.find("model"); m != j.end() && !m->is_null()) {
    if (!m->is_string()) throw ApiError(400, "\"model\" must be a string");
    r.key.model = m->get<std::string>();
    if (std::find(defaults.models.begin(), defaults.models.end(), r.key.model) == defaults.models.end())
      throw ApiError(404, fmt::format("no model named \"{}\" (GET /models lists them)", r.key.model));
  }
  r.key.beam = read_count(j, "beam", defaults.beam, limits.max_beam);
  r.key.nbest = read_count(j, "nbest", 1, limits.max_beam);
  if (r.key.nbest > r.key.beam)
    throw ApiError(400, fmt::format("\"nbest\" is {} but the beam is {}; nbest must not exceed it", r.key.nbest, r.key.beam));
  read_constraints(j, r, limits);
  read_prefixes(j, r);
  r.key.alignment = read_switch(j, "alignment");
  r.key.markup = read_switch(j, "markup");
  r.stream = read_switch(j, "stream");
  if (r.stream && r.list) throw ApiError(400, "\"stream\" takes one text (a string), not a list");
  read_search(j, r, defaults);
  return r;
}

std::string translate_response(const TranslateRequest& request, const std::vector<Nbest>& results, double ms) {
  // Per sentence, result_json of its best hypothesis; then each of its fields as a list over
  // the sentences (or the one value for one text). The field names are result_json's.
  const decode::ResultFields shown{request.constrained, request.key.alignment, false};
  nlohmann::json fields = decode::result_json(TranslationResult{}, shown), nbest = nlohmann::json::array();
  for (auto& [key, value] : fields.items()) value = nlohmann::json::array();
  for (const auto& n : results) {
    const nlohmann::json best = decode::result_json(n.empty() ? TranslationResult{} : n.front(), shown);
    for (auto& [key, values] : fields.items()) values.push_back(best.at(key));
    nlohmann::json list = nlohmann::json::array();
    for (const auto& h : n) list.push_back(decode::result_json(h, shown));
    nbest.push_back(std::move(list));
  }
  auto shaped = [&](nlohmann::json& per_sentence) { return request.list ? per_sentence : per_sentence.at(0); };
  nlohmann::json j;
  if (request.list || !results.empty()) {
    for (auto& [key, values] : fields.items()) j[key] = shaped(values);
    if (request.key.nbest > 1) j["nbest"] = shaped(nbest);
  }
  j["model"] = request.key.model;
  j["sentences"] = results.size();
  j["ms"] = std::round(ms * 100) / 100;
  // Strings from the model are valid UTF-8; "replace" keeps the server answering should one not be.
  return j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

namespace {
std::string event(const char* name, const nlohmann::json& data) {
  return fmt::format("event: {}\ndata: {}\n\n", name, data.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
}
}  // namespace

std::string sentence_event(size_t index, const std::string& before, const std::string& source,
                           const TranslationResult& result, bool alignment) {
  nlohmann::json j = decode::result_json(result, decode::ResultFields{false, alignment, false});
  j["index"] = index;
  j["before"] = before;
  j["source"] = source;
  return event("sentence", j);
}

std::string done_event(size_t sentences, const std::string& after) {
  return event("done", {{"sentences", sentences}, {"after", after}});
}

std::string error_event(int status, std::string_view message) {
  return event("error", {{"error", message}, {"status", status}});
}

std::string error_body(int status, std::string_view message) {
  return nlohmann::json{{"error", message}, {"status", status}}.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

bool equal_in_constant_time(std::string_view given, std::string_view secret) {
  if (secret.empty()) return false;
  unsigned char diff = given.size() != secret.size();
  for (size_t i = 0; i < given.size(); ++i)
    diff |= static_cast<unsigned char>(given[i] ^ secret[i % secret.size()]);
  return diff == 0;
}

}  // namespace nmt::serve
