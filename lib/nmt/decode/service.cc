#include "nmt/decode/service.h"

#include <fmt/format.h>

#include <algorithm>
#include <string_view>

#include "nmt/decode/paragraphs.h"
#include "nmt/models/architecture.h"
#include "nmt/quant/int8_gemm.h"
#include "nmt/text/markup.h"
#include "nmt/text/repetition.h"
#include "nmt/text/sentence_split.h"
#include "nmt/text/word_alignment.h"
#include "nmt/util/error.h"

namespace nmt::decode {

namespace {

// A model's source (or target) language, as config.json says it.
std::string language_of(const nlohmann::json& config, bool source) {
  for (const auto& [section, key] : {std::pair{"languages", source ? "source" : "target"},
                                     std::pair{"train", source ? "src_lang" : "tgt_lang"}}) {
    const auto s = config.find(section);
    if (s == config.end() || !s->is_object()) continue;
    const auto v = s->find(key);
    if (v != s->end() && v->is_string()) return v->get<std::string>();
  }
  return "";
}

}  // namespace

TranslationService::TranslationService(const std::vector<std::string>& model_dirs, const RuntimeOptions& runtime)
    : TranslationService(load_translator(model_dirs, runtime)) {}

TranslationService::TranslationService(Translator translator)
    : translator_(std::move(translator)),
      splitter_(std::make_unique<text::SentenceSplitter>(language_of(translator_.members().front().config, true))),
      target_language_(language_of(translator_.members().front().config, false)) {}

TranslationService::~TranslationService() = default;

const std::string& TranslationService::source_language() const { return splitter_->language(); }

std::vector<Nbest> TranslationService::translate(const std::vector<TranslationRequest>& requests,
                                                 const SearchOptions& search, const ResultOptions& results,
                                                 TranslateStats* stats) {
  if (!results.split_sentences || results.markup) return translate_whole(requests, search, results, stats);
  // The subwords a source may have before the translator truncates it (Translator::encode).
  const int64_t limit = std::min<int64_t>(DecodeOptions{}.max_source_len, translator_.max_source_subwords());
  const size_t max_subwords = static_cast<size_t>(std::max<int64_t>(1, limit - 1));
  // A text of n bytes has at most n + 1 pieces (a leading "▁"): most are not even encoded.
  const FitsModel fits = [&](std::string_view s) {
    return s.size() + 1 <= max_subwords || translator_.subwords().source.encode(std::string(s)).size() <= max_subwords;
  };
  const SentencePlan plan = plan_sentences(requests, *splitter_, fits);
  ResultOptions per_sentence = results;
  if (results.on_batch_done)
    per_sentence.on_batch_done = [&plan, &results](size_t done) { results.on_batch_done(requests_done(plan, done)); };
  return join_sentences(plan, translate_whole(plan.sentences, search, per_sentence, stats));
}

std::vector<Nbest> TranslationService::translate_whole(const std::vector<TranslationRequest>& requests,
                                                       const SearchOptions& search, const ResultOptions& results,
                                                       TranslateStats* stats) {
  std::vector<std::string> sources, prefixes;
  std::vector<text::PhraseConstraints> constraints;
  std::vector<text::MarkedLine> marked;
  bool any_prefix = false, any_constraints = false;
  for (const auto& r : requests) {
    if (results.markup) marked.push_back(text::strip_markup(r.source));
    sources.push_back(results.markup ? marked.back().text : r.source);
    prefixes.push_back(r.prefix);
    constraints.push_back(r.constraints);
    any_prefix |= !r.prefix.empty();
    any_constraints |= !r.constraints.empty();
  }
  DecodeOptions d = decode_options(search);
  d.return_token_log_probs = results.token_log_probs;
  d.record_attention = results.attention || results.alignment || results.markup;  // words are aligned by attention
  d.alignment = results.attention_choice;
  d.on_batch_done = results.on_batch_done;
  d.constrained = results.constrained;
  auto hypotheses = translator_.translate(sources, d, stats, any_prefix ? &prefixes : nullptr,
                                          any_constraints ? &constraints : nullptr);
  std::vector<Nbest> out(hypotheses.size());
  for (size_t i = 0; i < hypotheses.size(); ++i)
    for (auto& t : hypotheses[i])
      out[i].push_back(result_of(std::move(t), sources[i], results, results.markup ? &marked[i] : nullptr));
  return out;
}

// Everything reported of one hypothesis, computed here once for every front end.
TranslationResult TranslationService::result_of(Translation t, const std::string& source, const ResultOptions& options,
                                                const text::MarkedLine* marked) const {
  TranslationResult r;
  const Hypothesis& h = t.hypothesis;
  r.score = h.score;
  r.log_prob = h.log_prob;
  r.confidence = mean_log_prob(h);
  r.tokens = translator_.subwords().target.pieces(h.tokens);
  r.token_ids = h.tokens;
  r.token_log_probs = h.token_log_probs;
  r.unmet_constraints = std::move(t.unmet_constraints);
  r.constraint_tokens = t.constraint_tokens;
  r.length_limit = t.length_limit;
  const auto links = options.alignment || marked ? translator_.word_alignment(h, source) : std::vector<text::WordLink>{};
  if (options.alignment) r.alignment = text::pharaoh(links);
  r.text = marked ? text::restore_markup(*marked, t.text, links) : std::move(t.text);
  if (marked) r.warnings = marked->warnings;
  r.repetition = text::has_repetition_loop(r.text);
  if (options.attention) r.attention = std::move(t.hypothesis.attention);
  return r;
}

std::vector<std::string> TranslationService::translate_text(const std::vector<std::string>& lines,
                                                            const SearchOptions& search, TranslateStats* stats,
                                                            const std::function<void(size_t)>& on_batch_done) {
  DecodeOptions d = decode_options(search);
  d.on_batch_done = on_batch_done;
  std::vector<std::string> out;
  for (auto& n : translator_.translate(lines, d, stats)) out.push_back(std::move(n.front().text));
  return out;
}

std::vector<PairScore> TranslationService::score(const std::vector<std::string>& sources,
                                                 const std::vector<std::string>& targets, const SearchOptions& search,
                                                 TranslateStats* stats) {
  std::vector<PairScore> out;
  for (auto& h : translator_.score(sources, targets, decode_options(search), stats))
    out.push_back({h.log_prob, std::move(h.token_log_probs)});
  return out;
}

models::AlignmentChoice TranslationService::attention_choice(int64_t layer, int64_t head, const std::string& layer_flag,
                                                             const std::string& head_flag) const {
  for (const auto& m : members()) {
    const models::ModelConfig& c = m.model_config;
    const models::Architecture& arch = models::architecture(c.type);
    const int64_t layers = arch.attention_layers(c), heads = arch.attention_heads(c);
    if (!(layer == -1 || (layer >= 0 && layer < layers)))
      throw UsageError(fmt::format("{} is {}: the {} model has {} decoder layer(s) to choose from (-1 for the last)",
                                   layer_flag, layer, c.type, layers));
    if (!(head == -1 || (head >= 0 && head < heads)))
      throw UsageError(fmt::format("{} is {}: the {} model has {} head(s) to choose from (-1 for their mean)", head_flag,
                                   head, c.type, heads));
  }
  return {layer, head};
}

std::string TranslationService::attention_title(const models::AlignmentChoice& choice) const {
  const models::ModelConfig& config = members().front().model_config;
  const models::Architecture& arch = models::architecture(config.type);
  std::string title = arch.attention_name;
  if (arch.attention_layers(config) > 0)
    title = fmt::format("{}, {}, {}", arch.attention_name,
                        choice.layer < 0 ? std::string("last layer") : fmt::format("layer {}", choice.layer),
                        choice.head < 0 ? std::string("mean of heads") : fmt::format("head {}", choice.head));
  return fmt::format("{} ({})", title, config.type);
}

viz::AttentionMap TranslationService::attention_map(const TranslationResult& result, const std::string& source) const {
  Hypothesis h;
  h.tokens = result.token_ids;
  h.attention = result.attention;
  return translator_.attention_map(h, source);
}

std::string TranslationService::model_description() const {
  return members().size() > 1 ? fmt::format("ensemble of {}", members().size()) : members().front().model_config.type;
}

std::string TranslationService::int8_note() const {
  for (const auto& m : members())
    if (m.quantization == "int8") return ", int8 kernel " + quant::kernel_name();
  return "";
}

}  // namespace nmt::decode
