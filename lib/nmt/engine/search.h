#pragma once
// Greedy and beam search on the CPU engine, torch-free: the same algorithms as decode/greedy.cc
// and decode/beam.cc (fairseq's beam search, or Marian's shrinking beams), reading the same
// log-probabilities (decode/row_log_probs.h) and banning the same tokens, so both engines
// choose the same translations; sampling as decode/sampling.cc (the same draws for a seed) and
// forced decoding (scoring a given output) as decode/forced.cc. Phrases a translation must
// contain stay on the LibTorch path for now.
#include <cstdint>
#include <vector>

#include "nmt/decode/beam_options.h"
#include "nmt/decode/hypothesis.h"
#include "nmt/decode/search_options.h"
#include "nmt/text/lexical_constraints.h"

namespace nmt::engine {

// One batch's decoder as a search drives it: a model, or an ensemble of models.
class StepDecoder {
 public:
  virtual ~StepDecoder() = default;
  // Feeds each row's previous token; `scores` [rows][vocab] receives values whose log-softmax
  // is each row's next-token distribution; `attention`, when given, [rows][attention_width()].
  virtual void step(const std::vector<int32_t>& tokens, std::vector<float>& scores, std::vector<float>* attention) = 0;
  // Row i of the next step is row rows[i] of this one.
  virtual void select(const std::vector<int64_t>& rows) = 0;
  virtual int64_t vocab() const = 0;
  virtual int64_t attention_width() const = 0;
};

// Per row of the batch, what the search must respect.
struct SearchRow {
  int64_t source_len = 0;  // source tokens, EOS included (the attention's width)
  int64_t limit = 0;       // most output tokens without EOS, prefix included
  const text::TokenIds* prefix = nullptr;               // never null (may be empty)
  const text::LineConstraints* constraints = nullptr;   // never null
  size_t source_index = 0;  // the sentence's place in the call's input (its sampling generator's seed)
};

struct EngineSearchOptions {
  bool beam_search = false;  // beam search (BeamOptions), else greedy search
  decode::BeamOptions beam;
  int64_t no_repeat_ngram = 0;
  bool token_log_probs = false;
  bool record_attention = false;
  // Sampling (greedy_search only): each next token drawn as decode/sampling.h draws it, from
  // the sentence's own generator seeded by (sample.seed, SearchRow::source_index).
  bool sampling = false;
  decode::SamplingOptions sample;
  // Forced decoding (greedy_search only): each row's prefix is its whole output, then EOS, with
  // every token's log-probability (scoring a translation); no bans, no length limit.
  bool forced = false;
};

std::vector<decode::SearchResult> greedy_search(StepDecoder& decoder, const std::vector<SearchRow>& rows,
                                                const EngineSearchOptions& options);
std::vector<decode::SearchResult> beam_search(StepDecoder& decoder, const std::vector<SearchRow>& rows,
                                              const EngineSearchOptions& options);

}  // namespace nmt::engine
