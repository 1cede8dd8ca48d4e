#include "nmt/decode/result_writer.h"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

namespace nmt::decode {

nlohmann::json result_json(const TranslationResult& t, const ResultFields& fields) {
  nlohmann::json j = {{"translation", t.text},      {"score", t.score},           {"log_prob", t.log_prob},
                      {"confidence", t.confidence}, {"repetition", t.repetition}, {"tokens", t.tokens},
                      {"token_log_probs", t.token_log_probs}};
  if (fields.constrained) j["unmet_constraints"] = t.unmet_constraints;
  if (fields.alignment) j["alignment"] = t.alignment;
  return j;
}

std::string text_lines(size_t line_index, const Nbest& hypotheses, const ResultFields& fields) {
  auto links = [&](const TranslationResult& t) { return fields.alignment ? " ||| " + t.alignment : std::string(); };
  if (!fields.nbest) return hypotheses.front().text + links(hypotheses.front()) + "\n";
  std::string out;
  for (const auto& t : hypotheses) out += fmt::format("{} ||| {} ||| {:.6f}{}\n", line_index, t.text, t.score, links(t));
  return out;
}

std::string json_line(size_t line_index, const Nbest& hypotheses, const ResultFields& fields) {
  nlohmann::json j = result_json(hypotheses.front(), fields);
  j["line"] = line_index + 1;
  if (fields.nbest) {
    j["nbest"] = nlohmann::json::array();
    for (const auto& t : hypotheses) j["nbest"].push_back(result_json(t, fields));
  }
  return j.dump() + "\n";
}

}  // namespace nmt::decode
