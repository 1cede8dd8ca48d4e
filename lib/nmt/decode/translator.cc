#include "nmt/decode/translator.h"

#include <algorithm>

#include <fmt/format.h>

#include "nmt/util/error.h"

namespace nmt::decode {

namespace {
void add_stats(TranslateStats* stats, const TranslateStats& local) {
  if (!stats) return;
  stats->sentences += local.sentences;
  stats->truncated += local.truncated;
  stats->target_tokens += local.target_tokens;
}

// Whether two subword models give every id the same piece (so ids mean the same text).
bool same_vocabulary(const text::SubwordModel& a, const text::SubwordModel& b) {
  if (a.vocab_size() != b.vocab_size()) return false;
  std::vector<int> all(static_cast<size_t>(a.vocab_size()));
  for (size_t i = 0; i < all.size(); ++i) all[i] = static_cast<int>(i);
  return a.pieces(all) == b.pieces(all);
}

// Whether some id is the unknown subword (text the vocabulary cannot write).
bool has_unknown(const text::TokenIds& ids) {
  return std::any_of(ids.begin(), ids.end(), [](int id) { return id == text::kUnkId; });
}

}  // namespace

double mean_log_prob(const Hypothesis& h) {
  return h.token_log_probs.empty() ? 0.0 : h.log_prob / static_cast<double>(h.token_log_probs.size());
}

void check_ensemble(const std::vector<const models::ModelInfo*>& models) {
  if (models.empty()) throw UsageError("no model to translate with");
  const models::ModelInfo& first_model = *models.front();
  for (size_t i = 1; i < models.size(); ++i) {
    const text::SubwordPair &first = first_model.subwords, &other = models[i]->subwords;
    if (!same_vocabulary(other.target, first.target))
      throw UsageError(fmt::format("model {} of the ensemble uses another target subword vocabulary than model 1; "
                                   "ensembles need models trained with the same {}", i + 1, models::kSubwordFile));
    if (!same_vocabulary(other.source, first.source))
      throw UsageError(fmt::format("model {} of the ensemble uses another source subword vocabulary than model 1; "
                                   "ensembles need models with the same source subwords ({} or a joint {})", i + 1,
                                   models::kSourceSubwordFile, models::kSubwordFile));
    if (models[i]->model_config.tgt_vocab != first_model.model_config.tgt_vocab)
      throw UsageError(fmt::format("model {} of the ensemble has {} target words, model 1 has {}", i + 1,
                                   models[i]->model_config.tgt_vocab, first_model.model_config.tgt_vocab));
  }
}

Translator::Translator(std::vector<models::ModelInfo> models, std::unique_ptr<Decoder> decoder)
    : models_(std::move(models)), decoder_(std::move(decoder)) {
  std::vector<const models::ModelInfo*> members;
  for (const auto& m : models_) members.push_back(&m);
  check_ensemble(members);
}

int64_t Translator::max_source_subwords() const {
  int64_t limit = 1 << 30;
  for (const auto& m : models_) limit = std::min<int64_t>(limit, m.model_config.max_positions - 1);  // room for EOS
  return limit;
}

std::vector<text::TokenIds> Translator::encode(const std::vector<std::string>& lines, DecodeOptions& options,
                                    std::vector<size_t>& non_empty, TranslateStats& local) {
  options.max_source_len = std::min<int64_t>(options.max_source_len, max_source_subwords());
  std::vector<text::TokenIds> sources;
  for (size_t i = 0; i < lines.size(); ++i) {
    text::TokenIds ids = subwords().source.encode(lines[i]);
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

text::LineConstraints Translator::encode_constraints(const text::PhraseConstraints& phrases) const {
  text::LineConstraints out;
  // A phrase to include with an unknown subword could only come out as " ⁇ ", never as
  // written; one to avoid could never come out at all, so it is kept (it bans nothing real).
  auto encode_all = [&](const std::vector<std::string>& texts, std::vector<text::TokenIds>& ids, bool include) {
    for (const auto& phrase : texts) {
      ids.push_back(subwords().target.encode(phrase));
      if (ids.back().empty()) throw UsageError(fmt::format("an empty phrase to {}", include ? "include" : "avoid"));
      if (include && has_unknown(ids.back()))
        throw UsageError(fmt::format("the phrase \"{}\" has characters the model's target vocabulary lacks; the "
                                     "translation could never contain it", phrase));
    }
  };
  encode_all(phrases.include, out.include, true);
  encode_all(phrases.avoid, out.avoid, false);
  return out;
}

std::vector<std::vector<Translation>> Translator::translate(const std::vector<std::string>& lines,
                                                            DecodeOptions options, TranslateStats* stats,
                                                            const std::vector<std::string>* prefixes,
                                                            const std::vector<text::PhraseConstraints>* constraints) {
  if (prefixes && prefixes->size() != lines.size())
    throw UsageError(fmt::format("{} prefixes for {} lines", prefixes->size(), lines.size()));
  if (constraints && constraints->size() != lines.size())
    throw UsageError(fmt::format("{} constraint sets for {} lines", constraints->size(), lines.size()));
  std::vector<size_t> non_empty;
  TranslateStats local;
  auto sources = encode(lines, options, non_empty, local);
  std::vector<text::TokenIds> prefix_ids;
  if (prefixes)
    for (size_t i : non_empty) prefix_ids.push_back(subwords().target.encode((*prefixes)[i]));
  std::vector<text::LineConstraints> constraint_ids;
  if (constraints)
    for (size_t i : non_empty) constraint_ids.push_back(encode_constraints((*constraints)[i]));
  auto results = decoder_->search(sources, options, prefixes ? &prefix_ids : nullptr,
                                  constraints ? &constraint_ids : nullptr);
  std::vector<std::vector<Translation>> out(lines.size(), std::vector<Translation>(1));
  for (size_t k = 0; k < results.size(); ++k) {
    auto& dst = out[non_empty[k]];
    dst.clear();
    for (auto& h : results[k]) {
      local.target_tokens += h.tokens.size();
      Translation t{subwords().target.decode(h.tokens), std::move(h), {}, 0, 0};
      if (constraints) note_unmet_constraints(t, (*constraints)[non_empty[k]], constraint_ids[k], sources[k].size(),
                                              prefixes ? prefix_ids[k].size() : 0, options);
      dst.push_back(std::move(t));
    }
    if (dst.empty()) dst.resize(1);
  }
  // An empty line has no translation to hold a phrase: each of its phrases is unmet.
  if (constraints)
    for (size_t i = 0; i < lines.size(); ++i)
      if (out[i].size() == 1 && out[i].front().text.empty() && out[i].front().hypothesis.tokens.empty())
        out[i].front().unmet_constraints = (*constraints)[i].include;
  add_stats(stats, local);
  return out;
}

void Translator::note_unmet_constraints(Translation& t, const text::PhraseConstraints& phrases,
                                        const text::LineConstraints& ids, size_t source_len, size_t prefix_len,
                                        const DecodeOptions& options) const {
  for (size_t q : text::unmet_constraints(t.hypothesis.tokens, ids.include)) t.unmet_constraints.push_back(phrases.include[q]);
  t.constraint_tokens = ids.include_tokens();
  t.length_limit = output_length_limit(static_cast<int64_t>(source_len), static_cast<int64_t>(prefix_len), options,
                                       decoder_->max_target_len());
}

std::vector<std::string> Translator::translate_greedy(const std::vector<std::string>& lines, DecodeOptions options,
                                                      TranslateStats* stats, std::vector<Hypothesis>* hypotheses) {
  options.search.beam = options.search.nbest = 1;
  options.search.sampling.clear();
  options.constrained = false;
  auto results = translate(lines, std::move(options), stats);
  std::vector<std::string> out;
  out.reserve(results.size());
  if (hypotheses) hypotheses->clear();
  for (auto& r : results) {
    out.push_back(std::move(r.front().text));
    if (hypotheses) hypotheses->push_back(std::move(r.front().hypothesis));
  }
  return out;
}

std::vector<Hypothesis> Translator::score(const std::vector<std::string>& sources,
                                          const std::vector<std::string>& targets, DecodeOptions options,
                                          TranslateStats* stats) {
  if (sources.size() != targets.size())
    throw UsageError(fmt::format("{} sources for {} targets", sources.size(), targets.size()));
  TranslateStats local;
  options.max_source_len = std::min<int64_t>(options.max_source_len, max_source_subwords());
  std::vector<text::TokenIds> source_ids, target_ids;
  for (size_t i = 0; i < sources.size(); ++i) {
    text::TokenIds src = subwords().source.encode(sources[i]);
    if (static_cast<int64_t>(src.size()) > options.max_source_len - 1) {
      src.resize(options.max_source_len - 1);
      ++local.truncated;
    }
    text::TokenIds tgt = subwords().target.encode(targets[i]);
    if (static_cast<int64_t>(tgt.size()) > decoder_->max_target_len() - 1)
      throw RuntimeError(fmt::format("target {} has {} subwords; the model scores at most {}", i + 1, tgt.size(),
                                     decoder_->max_target_len() - 1));
    local.target_tokens += tgt.size();
    source_ids.push_back(std::move(src));
    target_ids.push_back(std::move(tgt));
  }
  local.sentences = sources.size();
  auto results = decoder_->score(source_ids, target_ids, options);
  std::vector<Hypothesis> out;
  out.reserve(results.size());
  for (auto& r : results) out.push_back(std::move(r.front()));
  add_stats(stats, local);
  return out;
}

viz::AttentionMap Translator::attention_map(const Hypothesis& h, const std::string& source) const {
  viz::AttentionMap m;
  auto ids = subwords().source.encode(source);
  // A truncated input has fewer attention columns than subwords (one column is the EOS).
  if (!h.attention.empty()) ids.resize(std::min(ids.size(), h.attention.front().size() - 1));
  m.source = subwords().source.pieces(ids);
  if (!ids.empty()) m.source.push_back("</s>");
  m.target = subwords().target.pieces(h.tokens);
  if (h.attention.size() > h.tokens.size()) m.target.push_back("</s>");
  m.weights = h.attention;
  return m;
}

std::vector<text::WordLink> Translator::word_alignment(const Hypothesis& h, const std::string& source) const {
  if (h.attention.empty()) return {};
  const viz::AttentionMap m = attention_map(h, source);
  return text::word_alignment(m.weights, text::word_of_piece(m.source), text::word_of_piece(m.target));
}

}  // namespace nmt::decode
