#pragma once
// Text in, text out: subword encoding, batched decoding, detokenisation.
#include <string>
#include <vector>

#include "nmt/decode/beam.h"
#include "nmt/decode/greedy.h"
#include "nmt/models/model_io.h"
#include "nmt/viz/heatmap.h"

namespace nmt::decode {

struct TranslateStats {
  size_t sentences = 0;
  size_t truncated = 0;      // inputs longer than the model's limit, cut to fit
  size_t target_tokens = 0;  // subwords produced (without EOS)
};

class Translator {
 public:
  explicit Translator(models::LoadedModel model) : model_(std::move(model)) {}

  // One output line per input line; an empty (or all-space) line gives an empty line.
  // `hypotheses`, when given, receives the decoder output (tokens, attention) per line.
  std::vector<std::string> translate(const std::vector<std::string>& lines, DecodeOptions options,
                                     TranslateStats* stats = nullptr, std::vector<Hypothesis>* hypotheses = nullptr);

  // Beam search: per line, up to beam.nbest (text, hypothesis) pairs, best first; an empty
  // line gives one empty hypothesis.
  struct Scored {
    std::string text;
    ScoredHypothesis hypothesis;
  };
  std::vector<std::vector<Scored>> translate_beam(const std::vector<std::string>& lines, DecodeOptions options,
                                                  const BeamOptions& beam, TranslateStats* stats = nullptr);

  // The subword pieces of `source` and of a greedy hypothesis (each side ending in </s> when
  // it does), with the hypothesis's attention rows, ready to draw.
  viz::AttentionMap attention_map(const Hypothesis& hypothesis, const std::string& source) const;

  models::LoadedModel& loaded() { return model_; }
  const text::SubwordModel& subwords() const { return model_.subwords; }

 private:
  // Encodes the non-empty lines (truncating over-long ones); `non_empty` maps back to lines.
  std::vector<Ids> encode(const std::vector<std::string>& lines, DecodeOptions& options, std::vector<size_t>& non_empty,
                          TranslateStats& local);
  models::LoadedModel model_;
};

}  // namespace nmt::decode
