#include "nmt/decode/strategy.h"

#include "nmt/decode/greedy.h"
#include "nmt/decode/sampling.h"

namespace nmt::decode {

std::unique_ptr<SearchStrategy> make_search_strategy(const SearchOptions& o, bool positive_constraints) {
  switch (search_kind(o, positive_constraints)) {
    case SearchKind::kSampling: return std::make_unique<SamplingSearch>(o.sampling_options());
    case SearchKind::kGreedy: return std::make_unique<GreedySearch>();
    case SearchKind::kBeam: break;
  }
  return std::make_unique<BeamSearch>(beam_options(o));
}

}  // namespace nmt::decode
