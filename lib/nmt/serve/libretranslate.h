#pragma once
// LibreTranslate's HTTP API beside nmt's own, so that the clients written for it (its Python
// client libretranslatepy, browser extensions, editors' plugins) use `nmt serve` unchanged:
// POST /translate (a form or a JSON object with "q"), GET /languages, GET /frontend/settings.
// The request fields, answers and error messages are LibreTranslate's (its tests,
// libretranslate/tests/test_api/); docs/serving.md says what differs. Torch-free, without
// sockets: server.cc routes the requests here.
#include <cstddef>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "nmt/serve/api.h"

namespace nmt::serve {

struct ServedModelInfo;

// A form's fields as the HTTP library parsed them (urlencoded or multipart), name → value.
using FormFields = std::multimap<std::string, std::string>;

struct LtTranslateRequest {
  std::vector<std::string> q;
  bool list = false;  // "q" was a list: so is "translatedText"
  std::string source, target;  // ISO 639 codes as given; source may be "auto"
  bool html = false;           // format "html": tags kept (nmt's inline-markup path)
  int alternatives = 0;        // translations besides the best, per text
  std::string api_key;         // "" when not given
};

// Whether a POST /translate is LibreTranslate's: a JSON object with "q" (nmt's own requests
// are JSON objects with "text", whatever their content type says), or a form.
bool is_libretranslate_request(std::string_view content_type, std::string_view body);

// The request's "api_key" field, "" when it has none (or is not a form or JSON object).
std::string libretranslate_api_key(std::string_view content_type, std::string_view body, const FormFields& form);

// Reads a LibreTranslate /translate request from its form fields or its JSON body. ApiError(400)
// with LibreTranslate's messages ("Invalid request: missing q parameter", "xml format is not
// supported", ...); over `limits.max_sentences` texts, 400 naming the limit.
LtTranslateRequest parse_libretranslate_request(std::string_view content_type, std::string_view body,
                                                const FormFields& form, const ApiLimits& limits);

// The served model (an index into `models`) that translates the request's source into its
// target; "auto" takes the first model into the target. ApiError(400, "xx is not supported").
size_t libretranslate_model(const LtTranslateRequest& request, const std::vector<ServedModelInfo>& models);

// {"translatedText": ...} (a string, or a list for a list), with "alternatives" when asked for
// and "detectedLanguage" for source "auto" (the model's source language: nmt detects nothing,
// so its confidence is 0).
std::string libretranslate_response(const LtTranslateRequest& request, const std::vector<Nbest>& results,
                                    const std::string& model_source);

// GET /languages: each language served, with the languages it translates into.
std::string libretranslate_languages(const std::vector<ServedModelInfo>& models);

// GET /frontend/settings, what LibreTranslate's web page and clients read first.
std::string libretranslate_settings(const std::vector<ServedModelInfo>& models, bool key_required);

// {"error": message}, LibreTranslate's error body.
std::string libretranslate_error(std::string_view message);

// "English" for "en"; the code itself for a language nmt has no name for.
std::string language_name(const std::string& code);

}  // namespace nmt::serve
