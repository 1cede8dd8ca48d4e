#pragma once
// The JSON side of `nmt serve`'s HTTP API, without sockets or a model: reading a /translate
// request (every field checked, each error an HTTP status and one line) and writing answers.
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "nmt/decode/search_options.h"
#include "nmt/serve/batcher.h"

namespace nmt::serve {

// A request the server refuses: the HTTP status and a one-line reason for the client.
class ApiError : public std::runtime_error {
 public:
  ApiError(int status, const std::string& what) : std::runtime_error(what), status_(status) {}
  int status() const { return status_; }

 private:
  int status_;
};

struct ApiLimits {
  size_t max_sentences = 1000;  // per request (413 above)
  int max_beam = 16;            // a request's "beam" (400 above)
  size_t max_phrases = 64;      // "constraints" per sentence and "avoid" per request (400 above)
};

// What the server decodes when a request does not say.
struct ApiDefaults {
  std::vector<std::string> models;  // the names served; the first is the default
  int beam = 1;
  decode::SearchOptions search = {};  // the server's (beam above); a request's own options go over them
};

struct TranslateRequest {
  std::vector<Sentence> sentences;
  bool list = false;  // "text" was a list: the answer's "translation" is one too
  bool constrained = false;  // "constraints" given: the answer says which phrases each lacks
  bool stream = false;       // "stream": the answer is Server-Sent Events, one per sentence
  DecodeKey key;
};

// Reads a POST /translate body: {"text": "..." | ["...", ...], "beam"?: N, "nbest"?: N,
// "model"?: NAME, "constraints"?: phrases the translation must contain (["...", ...] for one
// text, one such list per sentence for a list), "avoid"?: ["...", ...] phrases no translation
// of the request may contain, "prefix"?: the target text a translation starts with (a list for
// a list), "alignment"?: bool, "markup"?: bool, "stream"?: bool (one text only), and the search options of `nmt translate` by
// their config keys (kRequestSearchKeys: "alpha", "length_penalty", "sampling", "seed", ...)}.
// Throws ApiError (400, or 413 over the sentence limit).
// The search options a request may set, by the keys of decode::search_option_specs() (beam and
// nbest are read on their own, within --max-beam; batch_size is the server's).
inline constexpr const char* kRequestSearchKeys[] = {"length_penalty", "alpha",     "shrink",    "sampling",       "temperature",
                                                     "seed",           "max_len_a", "max_len_b", "no_repeat_ngram"};

TranslateRequest parse_translate_request(std::string_view body, const ApiDefaults& defaults, const ApiLimits& limits);

// The fields of decode::result_json (decode/result_writer.h) for each sentence, each field in the shape of "text" (a value
// for one text, a list for a list); with nbest > 1 "nbest": per sentence a list of
// result_json objects, best first; and "model", "sentences", "ms".
std::string translate_response(const TranslateRequest& request, const std::vector<Nbest>& results, double ms);

// One Server-Sent Event of a streamed translation: "event: sentence" with {"index", "before"
// (the source's text before the sentence: spacing, line breaks), "source", and the fields of
// result_json}; the last is "event: done" with {"sentences", "after"}; a failure "event: error"
// with error_body's fields. Concatenating each "before" and "translation", then "after", gives
// the non-streamed answer's translation.
std::string sentence_event(size_t index, const std::string& before, const std::string& source,
                           const TranslationResult& result, bool alignment);
std::string done_event(size_t sentences, const std::string& after);
std::string error_event(int status, std::string_view message);

// {"error": message, "status": status}
std::string error_body(int status, std::string_view message);

// Whether `given` equals `secret`, in a time that depends on the length of `given` only, never
// on how much of the secret it matches (a timing attack learns nothing byte by byte).
bool equal_in_constant_time(std::string_view given, std::string_view secret);

}  // namespace nmt::serve
