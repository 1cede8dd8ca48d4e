#pragma once
// The CPU decoding engine: one model or an ensemble of them, decoding batches of sentences
// without LibTorch (docs/design.md, "The CPU engine"). Read-only once built: threads share one
// Engine, and each call borrows a workspace (the decoders' buffers and compiled products) from
// a pool, so a server's workers neither allocate per step nor recompile per request.
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <vector>

#include "nmt/engine/model.h"
#include "nmt/engine/search.h"
#include "nmt/text/lexical_constraints.h"

namespace nmt::engine {

struct EngineDecodeOptions {
  EngineSearchOptions search;
  int64_t batch_size = 64;        // sentences per batch
  int64_t max_tokens = 0;         // padded source tokens per batch, 0 = no limit
  int64_t max_source_len = 1022;  // longer sources are cut to it (EOS included)
  double max_len_a = 1.5;         // an output has at most a·source length + b subwords
  int64_t max_len_b = 10;
  int64_t attention_layer = -1, attention_head = -1;  // which cross-attention is recorded
  int threads = 0;                                    // OpenMP threads of this call, 0 = as they are
  std::function<void(size_t)> on_batch_done;
};

class Engine {
 public:
  explicit Engine(std::vector<std::shared_ptr<const Model>> members);
  ~Engine();

  // Per source (subword ids without EOS), its hypotheses best first. `prefixes` (one per
  // source, empty for none) force each output's start; `constraints` (one per source) may only
  // hold phrases to avoid.
  std::vector<decode::SearchResult> search(const std::vector<text::TokenIds>& sources, const EngineDecodeOptions& options,
                                           const std::vector<text::TokenIds>* prefixes = nullptr,
                                           const std::vector<text::LineConstraints>* constraints = nullptr) const;
  int64_t max_target_len() const;
  const std::vector<std::shared_ptr<const Model>>& members() const { return members_; }

 private:
  struct Workspace;
  std::unique_ptr<Workspace> borrow() const;
  void give_back(std::unique_ptr<Workspace> workspace) const;
  std::vector<decode::SearchResult> search_batch(Workspace& workspace, const std::vector<text::TokenIds>& sources,
                                                 const std::vector<size_t>& ids, const EngineDecodeOptions& options,
                                                 const std::vector<text::TokenIds>* prefixes,
                                                 const std::vector<text::LineConstraints>* constraints) const;

  std::vector<std::shared_ptr<const Model>> members_;
  mutable std::mutex mutex_;
  mutable std::vector<std::unique_ptr<Workspace>> idle_;
};

}  // namespace nmt::engine
