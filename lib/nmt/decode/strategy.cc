#include "nmt/decode/strategy.h"

#include "nmt/decode/greedy.h"
#include "nmt/decode/sampling.h"
#include "nmt/util/error.h"

namespace nmt::decode {

std::unique_ptr<SearchStrategy> make_search_strategy(const SearchOptions& o, bool positive_constraints) {
  if (o.use_sampling() && positive_constraints)
    throw UsageError("--sampling cannot force phrases into a translation; use beam search (--beam) with --constraints");
  if (o.use_sampling()) return std::make_unique<SamplingSearch>(o.sampling_options());
  if (!o.use_beam() && !positive_constraints) return std::make_unique<GreedySearch>();
  return std::make_unique<BeamSearch>(beam_options(o));
}

BeamOptions beam_options(const SearchOptions& o) {
  BeamOptions b;
  b.beam = o.beam;
  b.nbest = o.nbest;
  b.length_penalty = o.length_penalty;
  b.alpha = o.alpha;
  b.shrink = o.shrink;
  return b;
}

DecodeOptions decode_options(const SearchOptions& o) {
  DecodeOptions d;
  d.search = o;
  return d;
}

}  // namespace nmt::decode
