#pragma once
// Beam search's settings and its length penalty, shared by both decoding engines (torch-free).
#include <algorithm>
#include <cmath>
#include <cstdint>

#include "nmt/decode/search_options.h"

namespace nmt::decode {

struct BeamOptions {
  int64_t beam = 5;
  int64_t nbest = 1;  // hypotheses returned per sentence (<= beam)
  LengthPenalty length_penalty = LengthPenalty::kGnmt;
  double alpha = 0.6;
  // Off (default): fairseq's search, K live beams out of the top 2K candidates until K
  // hypotheses are finished; every sentence keeps K rows, so the model stores each source's
  // keys/values once for its K beams. On: shrinking beams (Marian), each finished hypothesis
  // gives its slot up; fewer rows late, but beams of different widths need per-row copies of
  // the source's keys/values.
  bool shrink = false;
};

// The length penalty applied to a hypothesis of `length` tokens (EOS included).
inline double length_penalty(const BeamOptions& o, int64_t length) {
  switch (o.length_penalty) {
    case LengthPenalty::kGnmt: return std::pow((5.0 + static_cast<double>(length)) / 6.0, o.alpha);
    case LengthPenalty::kAverage: return static_cast<double>(std::max<int64_t>(length, 1));
    case LengthPenalty::kNone: return 1.0;
  }
  return 1.0;
}

}  // namespace nmt::decode
