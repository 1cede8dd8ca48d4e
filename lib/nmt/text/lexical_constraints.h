#pragma once
// Lexical constraints on a translation, in target subword ids: phrases that must appear in it
// (terminology: "this term is translated as X") and phrases that must not. Torch-free: beam
// search (decode/beam.cc) asks ConstraintProgress which tokens advance a hypothesis and how far
// it is; every strategy asks avoided_next_tokens what it may not emit next.
//
// A hypothesis tracks its positive constraints as Post & Vilar (2018) and Sockeye's
// lexical_constraints.py do: each phrase is met once its tokens were produced in a row; a
// phrase in progress that meets another token is given up (its tokens stop counting), unless a
// suffix of what was produced starts it again ("A A B" after "A A A": progress 2, not 0).
// Phrases are unordered; a phrase listed twice must appear twice.
#include <cstdint>
#include <string>
#include <vector>

#include "nmt/text/token_ids.h"

namespace nmt::text {

// One input line's constraints as text, before subword encoding.
struct PhraseConstraints {
  std::vector<std::string> include;  // phrases the translation must contain
  std::vector<std::string> avoid;    // phrases it must not
  bool empty() const { return include.empty() && avoid.empty(); }
};

struct LineConstraints {
  std::vector<TokenIds> include;  // each must appear in the output (positive constraints)
  std::vector<TokenIds> avoid;    // none may appear (negative constraints)
  bool empty() const { return include.empty() && avoid.empty(); }
  // Subwords the positive phrases need in all.
  int64_t include_tokens() const;
};

class ConstraintProgress {
 public:
  ConstraintProgress() = default;  // no constraints: always met
  explicit ConstraintProgress(const std::vector<TokenIds>* include);

  // The state after the hypothesis emits `token`.
  ConstraintProgress advance(TokenId token) const;
  // Constraint subwords produced so far: whole phrases met plus the phrase in progress
  // (Post & Vilar's bank index: hypotheses are grouped by it).
  int64_t met_tokens() const { return met_tokens_ + progress_; }
  int64_t total_tokens() const { return total_tokens_; }
  bool all_met() const { return met_tokens_ == total_tokens_; }
  // Tokens that make progress: the next token of the phrase in progress, else the first
  // token of every unmet phrase. Unsorted, may repeat.
  TokenIds wanted() const;

 private:
  // Starts unmet phrase number `p` with its first `length` tokens already produced.
  void start(size_t p, int64_t length);
  const std::vector<TokenIds>* include_ = nullptr;
  std::vector<bool> met_;       // per phrase
  int64_t met_tokens_ = 0;      // tokens of the phrases met
  int64_t total_tokens_ = 0;
  int64_t in_progress_ = -1;    // phrase being produced, -1 none
  int64_t progress_ = 0;        // its tokens produced so far
};

// The tokens that may not follow `history`: for each avoided phrase whose first n-1 tokens end
// the history, its last token (a one-token phrase is never allowed). Sorted, unique.
std::vector<int64_t> avoided_next_tokens(const TokenIds& history, const std::vector<TokenIds>& avoid);

// Whether `phrase` occurs in `tokens` as a contiguous run (an empty phrase always does).
bool contains_phrase(const TokenIds& tokens, const TokenIds& phrase);

// The indices of the positive phrases the output does not contain (ascending), each occurrence
// counted once ("A" listed twice needs two non-overlapping occurrences); longer phrases are
// placed first, so a phrase inside another does not take its occurrence.
std::vector<size_t> unmet_constraints(const TokenIds& output, const std::vector<TokenIds>& include);

}  // namespace nmt::text
