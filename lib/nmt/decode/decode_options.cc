#include "nmt/decode/decode_options.h"

#include "nmt/util/error.h"

namespace nmt::decode {

SearchKind search_kind(const SearchOptions& o, bool positive_constraints) {
  if (o.use_sampling() && positive_constraints)
    throw UsageError("--sampling cannot force phrases into a translation; use beam search (--beam) with --constraints");
  if (o.use_sampling()) return SearchKind::kSampling;
  if (!o.use_beam() && !positive_constraints) return SearchKind::kGreedy;
  return SearchKind::kBeam;
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
