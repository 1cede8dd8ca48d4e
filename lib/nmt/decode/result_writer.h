#pragma once
// The one writer of translations: each output format nmt has, from TranslationResult alone,
// so `nmt translate`, `nmt eval` and the server name the same thing the same way. Torch-free.
#include <cstddef>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "nmt/decode/translation_result.h"

namespace nmt::decode {

// What a writer adds to each translation beyond its text.
struct ResultFields {
  bool constrained = false;  // "unmet_constraints" (the request had phrases to include)
  bool alignment = false;    // the word alignment (" ||| links" in text, "alignment" in JSON)
  bool nbest = false;        // every hypothesis, not only the best
};

// One hypothesis's fields: {"translation", "score", "log_prob", "confidence", "repetition",
// "tokens", "token_log_probs"}, "unmet_constraints" and "alignment" when `fields` asks.
nlohmann::json result_json(const TranslationResult& t, const ResultFields& fields);

// `nmt translate`'s output for input line `line_index` (counted from 0), with its newline(s):
//   plain:   the best translation [" ||| " alignment]
//   n-best:  per hypothesis "LINE ||| translation ||| score" [" ||| " alignment]
//   --json:  one object: the best's result_json, "line" (counted from 1), "nbest" with n-best
std::string text_lines(size_t line_index, const Nbest& hypotheses, const ResultFields& fields);
std::string json_line(size_t line_index, const Nbest& hypotheses, const ResultFields& fields);

}  // namespace nmt::decode
