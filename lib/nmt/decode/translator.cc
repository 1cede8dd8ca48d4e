#include "nmt/decode/translator.h"

namespace nmt::decode {

namespace {
void add_stats(TranslateStats* stats, const TranslateStats& local) {
  if (!stats) return;
  stats->sentences += local.sentences;
  stats->truncated += local.truncated;
  stats->target_tokens += local.target_tokens;
}
}  // namespace

std::vector<Ids> Translator::encode(const std::vector<std::string>& lines, DecodeOptions& options,
                                    std::vector<size_t>& non_empty, TranslateStats& local) {
  const int64_t limit = model_.model_config.max_positions - 1;  // room for EOS
  options.max_source_len = std::min<int64_t>(options.max_source_len, limit);
  std::vector<Ids> sources;
  for (size_t i = 0; i < lines.size(); ++i) {
    Ids ids = model_.subwords.encode(lines[i]);
    if (ids.empty()) continue;
    if (static_cast<int64_t>(ids.size()) > options.max_source_len - 1) {
      ids.resize(options.max_source_len - 1);
      ++local.truncated;
    }
    sources.push_back(std::move(ids));
    non_empty.push_back(i);
  }
  local.sentences = lines.size();
  return sources;
}

std::vector<std::string> Translator::translate(const std::vector<std::string>& lines, DecodeOptions options,
                                               TranslateStats* stats, std::vector<Hypothesis>* hypotheses) {
  std::vector<size_t> non_empty;
  TranslateStats local;
  auto sources = encode(lines, options, non_empty, local);
  auto hyps = greedy_decode(*model_.model, sources, options);
  std::vector<std::string> out(lines.size());
  if (hypotheses) hypotheses->assign(lines.size(), Hypothesis{});
  for (size_t k = 0; k < hyps.size(); ++k) {
    out[non_empty[k]] = model_.subwords.decode(hyps[k].tokens);
    local.target_tokens += hyps[k].tokens.size();
    if (hypotheses) (*hypotheses)[non_empty[k]] = std::move(hyps[k]);
  }
  add_stats(stats, local);
  return out;
}

std::vector<std::vector<Translator::Scored>> Translator::translate_beam(const std::vector<std::string>& lines,
                                                                      DecodeOptions options, const BeamOptions& beam,
                                                                      TranslateStats* stats) {
  std::vector<size_t> non_empty;
  TranslateStats local;
  auto sources = encode(lines, options, non_empty, local);
  auto results = beam_search(*model_.model, sources, options, beam);
  std::vector<std::vector<Scored>> out(lines.size(), std::vector<Scored>(1));
  for (size_t k = 0; k < results.size(); ++k) {
    auto& dst = out[non_empty[k]];
    dst.clear();
    for (auto& h : results[k]) {
      local.target_tokens += h.tokens.size();
      dst.push_back({model_.subwords.decode(h.tokens), std::move(h)});
    }
    if (dst.empty()) dst.resize(1);
  }
  add_stats(stats, local);
  return out;
}

viz::AttentionMap Translator::attention_map(const Hypothesis& h, const std::string& source) const {
  viz::AttentionMap m;
  auto ids = model_.subwords.encode(source);
  // A truncated input has fewer attention columns than subwords (one column is the EOS).
  if (!h.attention.empty()) ids.resize(std::min(ids.size(), h.attention.front().size() - 1));
  m.source = model_.subwords.pieces(ids);
  if (!ids.empty()) m.source.push_back("</s>");
  m.target = model_.subwords.pieces(h.tokens);
  if (h.attention.size() > h.tokens.size()) m.target.push_back("</s>");
  m.weights = h.attention;
  return m;
}

}  // namespace nmt::decode
