#pragma once
// Beam search's candidates, and how they are ranked and shared out when a translation must
// contain phrases: one definition for LibTorch's beam search (decode/beam.cc) and the CPU
// engine's (engine/search.cc), so both keep the same hypotheses. Torch-free.
#include <cstdint>
#include <functional>
#include <vector>

#include "nmt/text/lexical_constraints.h"

namespace nmt::decode {

struct BeamCandidate {
  double log_prob;       // the hypothesis's log-probability once the token is taken
  int64_t origin;        // beam index within the sentence
  int64_t token;
  double step_log_prob;  // the token's own log-probability
  int64_t met = 0;       // constraint subwords produced once it is taken (constrained search)
};

// The best `pool` candidates first, ties broken by beam then token (reproducible).
void sort_best(std::vector<BeamCandidate>& candidates, int64_t pool);

// Constrained search (Post & Vilar, 2018, "dynamic beam allocation", with Hu et al.'s 2019
// candidates and bank order, as fairseq): `candidates` holds every beam's best next tokens and
// every token that advances a beam's positive constraints (progress_of(origin)); the `width`
// kept are shared between banks of candidates that met 0, 1, ... C constraint subwords, so
// hypotheses that took a constraint early survive beside the fluent ones that have not yet.
// Each (beam, token) pair counts once, a banned (-inf) one not at all. Returned best first.
std::vector<BeamCandidate> allocate_by_constraints(
    std::vector<BeamCandidate>& candidates,
    const std::function<const text::ConstraintProgress&(int64_t origin)>& progress_of, int64_t width);

}  // namespace nmt::decode
