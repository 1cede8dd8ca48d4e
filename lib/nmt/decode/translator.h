#pragma once
// Text in, text out: subword encoding, batched decoding with any search on one model or an
// ensemble, detokenisation. Torch-free: the decoding itself is a Decoder's (decoder.h), on
// LibTorch or on nmt's CPU engine.
#include <memory>
#include <string>
#include <vector>

#include "nmt/decode/decoder.h"
#include "nmt/models/model_dir.h"
#include "nmt/text/word_alignment.h"
#include "nmt/util/runtime_options.h"
#include "nmt/viz/heatmap.h"

namespace nmt::decode {

struct TranslateStats {
  size_t sentences = 0;
  size_t truncated = 0;      // inputs longer than the model's limit, cut to fit
  size_t target_tokens = 0;  // subwords produced (without EOS)
};

// One hypothesis as text.
struct Translation {
  std::string text;
  Hypothesis hypothesis;
  // With positive constraints: the phrases the text lacks (none when all fit and were met),
  // with what explains it: the subwords the phrases need and the line's length limit.
  std::vector<std::string> unmet_constraints;
  int64_t constraint_tokens = 0;
  int64_t length_limit = 0;
};

// The mean log-probability per output token, EOS included: a confidence callers can route
// doubtful translations by (needs DecodeOptions::return_token_log_probs; 0 for no token).
double mean_log_prob(const Hypothesis& hypothesis);

using ScoredHypothesis = Hypothesis;  // the name beam search's results had

class Translator;

// The model in each directory, or their ensemble, as every decoding command loads it: on the
// runtime options' device and engine, quantised to int8 on load with `runtime.int8` (an int8
// copy stays as it is). The one place a command turns -m DIR... into something that
// translates. Defined by the build: with LibTorch in torch_decoder.cc (--engine auto, torch or
// native), without it in cpu_engine.cc's load_engine_translator.
Translator load_translator(const std::vector<std::string>& model_dirs, const RuntimeOptions& runtime);
// UsageError naming the first member of an ensemble whose subword vocabularies (source or
// target) or target size differ from the first's; also for no model at all.
void check_ensemble(const std::vector<const models::ModelInfo*>& models);
// What this build decodes with, for version strings: "LibTorch 2.15.0" or "CPU engine, no LibTorch".
std::string decoder_library();

class Translator {
 public:
  // `models` describe the members of `decoder` (one model, or an ensemble): every model must use
  // the same subword vocabularies, source and target (UsageError naming the first that does
  // not); an ensemble of one is that model, bit for bit.
  Translator(std::vector<models::ModelInfo> models, std::unique_ptr<Decoder> decoder);

  // Per input line, its hypotheses as text, best first, searched as options.search says; an
  // empty (or all-space) line gives one empty hypothesis. `prefixes`, when given (one per line; empty = none),
  // forces each translation to start with that target text; `constraints`, when given (one
  // per line), are phrases it must contain (beam search) and must avoid (any strategy).
  std::vector<std::vector<Translation>> translate(const std::vector<std::string>& lines, DecodeOptions options,
                                                  TranslateStats* stats = nullptr,
                                                  const std::vector<std::string>* prefixes = nullptr,
                                                  const std::vector<text::PhraseConstraints>* constraints = nullptr);

  // A line's constraints in target subwords. UsageError for an empty phrase, and for a phrase
  // to include with characters the target vocabulary lacks (it could never be produced).
  text::LineConstraints encode_constraints(const text::PhraseConstraints& constraints) const;

  // Greedy search (whatever options.search says), one line per line; `hypotheses`, when given, receives the decoder output
  // (tokens, attention) per line.
  std::vector<std::string> translate_greedy(const std::vector<std::string>& lines, DecodeOptions options,
                                            TranslateStats* stats = nullptr,
                                            std::vector<Hypothesis>* hypotheses = nullptr);


  // The log-probability of each target line given its source line (forced decoding through
  // the same steps as the search): per pair, the target's tokens with their log-probabilities
  // (EOS last). An empty source or target is scored as it is (EOS only).
  std::vector<Hypothesis> score(const std::vector<std::string>& sources, const std::vector<std::string>& targets,
                                DecodeOptions options, TranslateStats* stats = nullptr);

  // The subword pieces of `source` and of a hypothesis (each side ending in </s> when it
  // does), with the hypothesis's attention rows, ready to draw.
  viz::AttentionMap attention_map(const Hypothesis& hypothesis, const std::string& source) const;

  // Whole-word links between `source` and the hypothesis's text, from its recorded attention
  // (DecodeOptions::record_attention and alignment choose which): each target subword links its
  // word to the word of the source subword it attends to most.
  std::vector<text::WordLink> word_alignment(const Hypothesis& hypothesis, const std::string& source) const;

  // Whether nmt's CPU engine decodes (decoder.h).
  bool uses_cpu_engine() const { return decoder_->uses_cpu_engine(); }
  const std::vector<models::ModelInfo>& members() const { return models_; }
  const text::SubwordPair& subwords() const { return models_.front().subwords; }
  // The subwords a source may have (one position is its EOS): the smallest of the members'.
  int64_t max_source_subwords() const;

 private:
  // Records which positive phrases the translation lacks, and why they might.
  void note_unmet_constraints(Translation& t, const text::PhraseConstraints& phrases, const text::LineConstraints& ids,
                              size_t source_len, size_t prefix_len, const DecodeOptions& options) const;
  // Encodes the non-empty lines (truncating over-long ones); `non_empty` maps back to lines.
  std::vector<text::TokenIds> encode(const std::vector<std::string>& lines, DecodeOptions& options, std::vector<size_t>& non_empty,
                          TranslateStats& local);
  std::vector<models::ModelInfo> models_;
  std::unique_ptr<Decoder> decoder_;
};

}  // namespace nmt::decode
