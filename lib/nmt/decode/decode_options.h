#pragma once
// The options of one decoding call, torch-free: the search options and what the call records.
#include <cstdint>
#include <cstddef>
#include <functional>

#include "nmt/decode/batch_plan.h"
#include "nmt/decode/beam_options.h"
#include "nmt/decode/search_options.h"
#include "nmt/models/alignment_choice.h"

namespace nmt::decode {

struct DecodeOptions {
  // Sentences per batch (batch_size), the length limit a·src_len + b (after any prefix), and
  // no-repeat: the search options, declared once (search_options.h). The strategy itself
  // comes from them through make_search_strategy (strategy.h).
  SearchOptions search;
  int64_t max_tokens = 0;         // padded source tokens per batch, 0 = no limit
  int64_t max_source_len = 1022;  // longer sources are truncated (counted by the caller)
  bool record_attention = false;  // Hypothesis::attention, from every strategy
  // Which attention is recorded: a Transformer's decoder layer and head, as fairseq's
  // --alignment-layer/--alignment-heads (-1: the last layer, the mean of the heads).
  models::AlignmentChoice alignment;
  bool return_token_log_probs = false;  // Hypothesis::token_log_probs
  // Phrases to include may come: beam search even at a beam of one (make_search_strategy).
  bool constrained = false;
  // Called after each batch with the number of sentences it finished (progress displays).
  std::function<void(size_t)> on_batch_done;
};

// output_length_limit (batch_plan.h) with the call's a and b.
inline int64_t output_length_limit(int64_t source_len, int64_t prefix_len, const DecodeOptions& options,
                                   int64_t longest_output) {
  return output_length_limit(source_len, prefix_len, options.search.max_len_a, options.search.max_len_b, longest_output);
}

// Which search the options ask for: sampling when --sampling is given; greedy search for a beam
// of one with one hypothesis (the same output as beam search, faster) unless phrases must
// appear in the output (`positive_constraints`: only beam search can steer towards them, so a
// beam of one is then beam search); beam search otherwise. UsageError for sampling with
// positive constraints. Both decoders choose by it (strategy.h, cpu_engine.h).
enum class SearchKind { kGreedy, kBeam, kSampling };
SearchKind search_kind(const SearchOptions& options, bool positive_constraints);

// Beam search's own settings out of the options.
BeamOptions beam_options(const SearchOptions& options);

// The batch size and the output length limit as decoding options.
DecodeOptions decode_options(const SearchOptions& options);

}  // namespace nmt::decode
