#pragma once
// The one place search options become a search strategy (CTranslate2's decoding.h idea): every
// command, the server's workers and the trainer's validation decode through it.
#include <memory>

#include "nmt/decode/beam.h"
#include "nmt/decode/search.h"
#include "nmt/decode/search_options.h"

namespace nmt::decode {

// Sampling when --sampling is given; greedy search for a beam of one with one hypothesis (the
// same output as beam search, faster) unless phrases must appear in the output
// (`positive_constraints`: only beam search can steer towards them, so a beam of one is then
// beam search); beam search otherwise. The options must be valid (validate_search_options);
// UsageError for sampling with positive constraints.
std::unique_ptr<SearchStrategy> make_search_strategy(const SearchOptions& options, bool positive_constraints = false);

// Beam search's own settings out of the options.
BeamOptions beam_options(const SearchOptions& options);

// The batch size and the output length limit as decoding options.
DecodeOptions decode_options(const SearchOptions& options);

}  // namespace nmt::decode
