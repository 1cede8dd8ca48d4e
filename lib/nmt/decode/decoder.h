#pragma once
// What turns subword ids into hypotheses for a Translator (translator.h): LibTorch's modules
// (torch_decoder.h) or nmt's CPU engine (cpu_engine.h), behind one interface, as CTranslate2's
// models sit behind its replicas. Torch-free: a build without LibTorch has the engine's alone.
#include <cstdint>
#include <string>
#include <vector>

#include "nmt/decode/decode_options.h"
#include "nmt/decode/hypothesis.h"
#include "nmt/text/lexical_constraints.h"

namespace nmt::decode {

class Decoder {
 public:
  virtual ~Decoder() = default;
  // Per source (subword ids without EOS, at most options.max_source_len - 1 of them), its
  // hypotheses best first, searched as options.search says (search_kind). `prefixes` (one per
  // source, empty for none) force each output's start; `constraints` (one per source) are the
  // phrases each output must contain and must avoid. UsageError for a search it cannot run.
  virtual std::vector<SearchResult> search(const std::vector<text::TokenIds>& sources, const DecodeOptions& options,
                                           const std::vector<text::TokenIds>* prefixes,
                                           const std::vector<text::LineConstraints>* constraints) = 0;
  // Each target's tokens with their log-probabilities (EOS last) given its source: forced
  // decoding through the same steps as the search.
  virtual std::vector<SearchResult> score(const std::vector<text::TokenIds>& sources,
                                          const std::vector<text::TokenIds>& targets, const DecodeOptions& options) = 0;
  // The most target positions the models take (EOS included).
  virtual int64_t max_target_len() const = 0;
  // Whether nmt's CPU engine decodes (some of) the searches, rather than LibTorch alone.
  virtual bool uses_cpu_engine() const = 0;
};

}  // namespace nmt::decode
