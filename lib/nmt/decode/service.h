#pragma once
// The translation service: what every front end that translates (`nmt translate`, `eval`,
// `attention`, `score`, `serve`, `bench translate`) calls. It loads model directories with the
// runtime options, translates batches of requests with the search options, and returns one
// result record per hypothesis (decode/translation_result.h), which decode/result_writer.h
// writes in each output format. No front end loads a model or computes a per-sentence figure
// itself.
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "nmt/decode/search_options.h"
#include "nmt/decode/translation_result.h"
#include "nmt/decode/translator.h"
#include "nmt/util/runtime_options.h"
#include "nmt/viz/heatmap.h"

namespace nmt::text {
struct MarkedLine;
class SentenceSplitter;
}

namespace nmt::decode {

// What the results of one call carry beyond text and scores, and how constraints are searched.
struct ResultOptions {
  // The requests may carry phrases to include: beam search (even at beam 1), and each result
  // lists the phrases it lacks.
  bool constrained = false;
  bool token_log_probs = false;  // confidence and each token's log-probability
  bool alignment = false;        // TranslationResult::alignment
  bool attention = false;        // TranslationResult::attention
  // Sources are text with inline tags (text/markup.h): the tags are taken out, the text
  // translated, and the tags put back around the aligned words.
  bool markup = false;
  // Each source may be a paragraph: it is split into sentences (decode/paragraphs.h), they are
  // translated in the same batches as every other request's, and joined. Not with markup
  // (tags may span sentences); attention is then kept only for sources of one sentence.
  bool split_sentences = false;
  models::AlignmentChoice attention_choice;  // which Transformer cross-attention is used
  std::function<void(size_t)> on_batch_done;  // sentences finished, after each batch
};

// A target's log-probability given its source (forced decoding).
struct PairScore {
  double log_prob = 0;
  std::vector<double> token_log_probs;  // each target subword's, EOS last
};

class TranslationService {
 public:
  // The model in each directory, or their ensemble, as load_translator loads them.
  TranslationService(const std::vector<std::string>& model_dirs, const RuntimeOptions& runtime);
  explicit TranslationService(Translator translator);
  ~TranslationService();

  // Per request, its hypotheses, best first; an empty (or all-space) source gives one empty
  // hypothesis. UsageError for a phrase the model cannot write.
  std::vector<Nbest> translate(const std::vector<TranslationRequest>& requests, const SearchOptions& search,
                               const ResultOptions& results = {}, TranslateStats* stats = nullptr);
  // The best translation of each line (what `nmt eval` scores).
  std::vector<std::string> translate_text(const std::vector<std::string>& lines, const SearchOptions& search,
                                          TranslateStats* stats = nullptr,
                                          const std::function<void(size_t)>& on_batch_done = nullptr);
  // Each target line's log-probability given its source line.
  std::vector<PairScore> score(const std::vector<std::string>& sources, const std::vector<std::string>& targets,
                               const SearchOptions& search, TranslateStats* stats = nullptr);

  // UsageError for an empty phrase or one to include with characters the target vocabulary
  // lacks (checked before a request is queued or a file translated).
  void check_phrases(const text::PhraseConstraints& phrases) const { translator_.encode_constraints(phrases); }
  // `layer`/`head` checked against every model (-1: the last layer, the mean of the heads; a
  // GRU has one attention and takes -1 only); UsageError naming the flags.
  models::AlignmentChoice attention_choice(int64_t layer, int64_t head, const std::string& layer_flag,
                                           const std::string& head_flag) const;
  // "cross-attention, last layer, mean of heads (transformer)": a heatmap's title.
  std::string attention_title(const models::AlignmentChoice& choice) const;
  // A result's attention (ResultOptions::attention) with both sides' pieces, ready to draw.
  viz::AttentionMap attention_map(const TranslationResult& result, const std::string& source) const;

  // "transformer" or "ensemble of 3"; ", int8 kernel K" when a model decodes in int8, else "".
  std::string model_description() const;
  std::string int8_note() const;
  const std::vector<models::ModelInfo>& members() const { return translator_.members(); }
  Translator& translator() { return translator_; }

  // The source language whose sentence rules split paragraphs (config.json's
  // languages.source, else train.src_lang; "" when neither says).
  const std::string& source_language() const;
  const text::SentenceSplitter& sentence_splitter() const { return *splitter_; }
  // The target language: languages.target, else train.tgt_lang; "" when neither says.
  const std::string& target_language() const { return target_language_; }

 private:
  std::vector<Nbest> translate_whole(const std::vector<TranslationRequest>& requests, const SearchOptions& search,
                                     const ResultOptions& results, TranslateStats* stats);
  TranslationResult result_of(Translation t, const std::string& source, const ResultOptions& options,
                              const text::MarkedLine* marked) const;
  Translator translator_;
  std::unique_ptr<text::SentenceSplitter> splitter_;
  std::string target_language_;
};

}  // namespace nmt::decode
