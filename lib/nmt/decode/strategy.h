#pragma once
// The one place search options become a search strategy (CTranslate2's decoding.h idea): every
// command, the server's workers and the trainer's validation decode through it.
#include <memory>

#include "nmt/decode/beam.h"
#include "nmt/decode/search.h"
#include "nmt/decode/search_options.h"

namespace nmt::decode {

// The strategy search_kind (decode_options.h) names, with the options' settings; the options
// must be valid (validate_search_options).
std::unique_ptr<SearchStrategy> make_search_strategy(const SearchOptions& options, bool positive_constraints = false);

}  // namespace nmt::decode
