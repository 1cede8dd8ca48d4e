#include "nmt/decode/translator.h"

namespace nmt::decode {

std::vector<std::string> Translator::translate(const std::vector<std::string>& lines, DecodeOptions options,
                                               TranslateStats* stats, std::vector<Hypothesis>* hypotheses) {
  const int64_t limit = model_.model_config.max_positions - 1;  // room for EOS
  options.max_source_len = std::min<int64_t>(options.max_source_len, limit);
  std::vector<Ids> sources;
  std::vector<size_t> non_empty;
  TranslateStats local;
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
  auto hyps = greedy_decode(*model_.model, sources, options);
  std::vector<std::string> out(lines.size());
  if (hypotheses) hypotheses->assign(lines.size(), Hypothesis{});
  for (size_t k = 0; k < hyps.size(); ++k) {
    out[non_empty[k]] = model_.subwords.decode(hyps[k].tokens);
    local.target_tokens += hyps[k].tokens.size();
    if (hypotheses) (*hypotheses)[non_empty[k]] = std::move(hyps[k]);
  }
  local.sentences = lines.size();
  if (stats) {
    stats->sentences += local.sentences;
    stats->truncated += local.truncated;
    stats->target_tokens += local.target_tokens;
  }
  return out;
}

}  // namespace nmt::decode
