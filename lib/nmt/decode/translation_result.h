#pragma once
// What a translation is, asked for and as every front end reports it: `nmt translate` (plain, n-best,
// --json), `nmt eval`, the server's answers. The translation service (decode/service.h) fills
// it; one writer (decode/result_writer.h) turns it into each output format. Plain data and
// torch-free, so the server library and the writers need no LibTorch.
#include <cstdint>
#include <string>
#include <vector>

#include "nmt/text/lexical_constraints.h"

namespace nmt::decode {

// One sentence to translate and what its translation must respect.
struct TranslationRequest {
  std::string source;
  std::string prefix;                   // target text the translation starts with ("": none)
  text::PhraseConstraints constraints;  // phrases it must contain (beam search) and avoid
};

// One hypothesis of one sentence.
struct TranslationResult {
  std::string text;
  double score = 0;       // what the search ranked: log_prob / length penalty for beam search
  double log_prob = 0;    // sum of the tokens' log-probabilities (EOS included when emitted)
  double confidence = 0;  // mean log-probability per token, EOS included (0 for no token)
  bool repetition = false;  // a repetition loop such as "un un un" (text/repetition.h)
  std::vector<std::string> tokens;     // its subword pieces (without EOS)
  std::vector<int> token_ids;          // the same subwords as ids
  std::vector<double> token_log_probs;  // each subword's, then the EOS's when it has one
  // With positive constraints: the phrases it had to contain and lacks, with what explains it
  // (the subwords the phrases need against the sentence's length limit).
  std::vector<std::string> unmet_constraints;
  int64_t constraint_tokens = 0;
  int64_t length_limit = 0;
  std::string alignment;  // when asked for: Pharaoh links of whole words ("0-0 1-2 ...")
  // When recorded: for each target token and the final EOS, the attention over the source
  // tokens (EOS included), each row summing to 1.
  std::vector<std::vector<float>> attention;
  std::vector<std::string> warnings;  // about its source (e.g. markup that did not parse)
};

// A sentence's hypotheses, best first (one for greedy search and sampling).
using Nbest = std::vector<TranslationResult>;

}  // namespace nmt::decode
