#pragma once
// What a search strategy finds for a sentence, on either decoding engine (torch-free).
#include <vector>

#include "nmt/text/token_ids.h"

namespace nmt::decode {

struct Hypothesis {
  text::TokenIds tokens;              // without BOS/EOS (a forced prefix included)
  double score = 0;        // what the strategy ranked: log_prob / length penalty for beam search,
                           // log_prob otherwise (0 for greedy search without token log-probs)
  double log_prob = 0;     // sum of the token log-probabilities, EOS included when emitted
  // When asked for: the log-probability of each token, then of the EOS when one was emitted.
  std::vector<double> token_log_probs;
  // When recorded: for each target token (and the final EOS), the attention over the source
  // tokens (including the source EOS), each row summing to 1.
  std::vector<std::vector<float>> attention;
};

// Per source, the strategy's hypotheses, best first (one for greedy search and sampling).
using SearchResult = std::vector<Hypothesis>;

}  // namespace nmt::decode
