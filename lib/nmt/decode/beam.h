#pragma once
// Batched beam search on the shared model interface: all sentences of a batch and all their
// beams are one batch of rows for the model; the cache is reordered by beam origin each step.
#include <vector>

#include "nmt/decode/greedy.h"

namespace nmt::decode {

struct BeamOptions {
  int64_t beam = 5;
  int64_t nbest = 1;  // hypotheses returned per sentence (<= beam)
  // Length penalty: "gnmt" ((5+len)/6)^alpha (Wu et al., 2016), "average" (divide by length),
  // or "none" (raw log-probability).
  std::string length_penalty = "gnmt";
  double alpha = 0.6;
  // Off (default): fairseq's search, K live beams out of the top 2K candidates until K
  // hypotheses are finished; every sentence keeps K rows, so the model stores each source's
  // keys/values once for its K beams. On: shrinking beams (Marian), each finished hypothesis
  // gives its slot up; fewer rows late, but beams of different widths need per-row copies of
  // the source's keys/values.
  bool shrink = false;
};

struct ScoredHypothesis {
  Ids tokens;             // without BOS/EOS
  double score = 0;       // normalised by the length penalty (what is ranked)
  double log_prob = 0;    // raw sum of token log-probabilities, EOS included
};

// The length penalty applied to a hypothesis of `length` tokens (EOS included).
double length_penalty(const BeamOptions& options, int64_t length);

// Returns, per source (in input order), up to `nbest` hypotheses sorted best first.
std::vector<std::vector<ScoredHypothesis>> beam_search(models::Seq2SeqModelImpl& model, const std::vector<Ids>& sources,
                                                       const DecodeOptions& options, const BeamOptions& beam);

}  // namespace nmt::decode
