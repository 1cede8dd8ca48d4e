#include "nmt/engine/engine.h"

#include <algorithm>
#include <cmath>

#include <omp.h>

#include "nmt/decode/batch_plan.h"
#include "nmt/decode/row_log_probs.h"
#include "nmt/engine/linear.h"
#include "nmt/text/special_ids.h"
#include "nmt/util/error.h"

namespace nmt::engine {
namespace {

const text::TokenIds kNoPrefix;
const text::LineConstraints kNoConstraints;

// total[r][i] += x[r][i]'s log-softmax over its row of `width` (what torch::log_softmax
// computes), with decode/row_log_probs.h's vectorised log-sum-exp, the rows shared between the
// engine's OpenMP threads: an ensemble pays this for each member at every step, and a scalar
// loop over every row's vocabulary made a 2-GRU ensemble slower than LibTorch's at batch 64
// (docs/benchmarks.md, "A GRU ensemble, the engine against LibTorch (2026-12-03)"). `scratch`
// holds width floats per thread.
void add_log_softmax_rows(const float* x, int64_t rows, int64_t width, float* total, std::vector<float>& scratch) {
  scratch.resize(static_cast<size_t>(width * omp_get_max_threads()));
#pragma omp parallel for schedule(static) if (rows > 1)
  for (int64_t r = 0; r < rows; ++r) {
    const float* v = x + r * width;
    float* out = total + r * width;
    float* mine = scratch.data() + static_cast<ptrdiff_t>(omp_get_thread_num()) * width;
    const float lse = static_cast<float>(decode::row_log_sum_exp(v, width, mine));
    for (int64_t i = 0; i < width; ++i) out[i] += v[i] - lse;
  }
}

// The members' decoders for one batch: a single model's logits as they are; an ensemble's
// mean of log-probabilities (decode/decoding_model.cc's Ensemble), attention averaged.
class MembersDecoder final : public StepDecoder {
 public:
  MembersDecoder(std::vector<std::unique_ptr<ModelRun>>& runs, int64_t layer, int64_t head)
      : runs_(runs), layer_(layer), head_(head) {}
  void step(const std::vector<int32_t>& tokens, std::vector<float>& scores, std::vector<float>* attention) override {
    if (runs_.size() == 1) return runs_.front()->step(tokens, scores, attention, layer_, head_);
    const int64_t V = vocab(), R = static_cast<int64_t>(tokens.size());
    scores.assign(static_cast<size_t>(R * V), 0.0f);
    if (attention) attention->assign(static_cast<size_t>(R * attention_width()), 0.0f);
    for (auto& run : runs_) {
      run->step(tokens, member_scores_, attention ? &member_attention_ : nullptr, layer_, head_);
      add_log_softmax_rows(member_scores_.data(), R, V, scores.data(), scratch_);
      if (attention)
        for (size_t i = 0; i < attention->size(); ++i) (*attention)[i] += member_attention_[i];
    }
    const float n = static_cast<float>(runs_.size());
    for (float& s : scores) s /= n;
    if (attention)
      for (float& a : *attention) a /= n;
  }
  void select(const std::vector<int64_t>& rows) override {
    for (auto& run : runs_) run->select(rows);
  }
  int64_t vocab() const override { return runs_.front()->vocab(); }
  int64_t attention_width() const override { return runs_.front()->longest_source(); }

 private:
  std::vector<std::unique_ptr<ModelRun>>& runs_;
  int64_t layer_, head_;
  std::vector<float> member_scores_, member_attention_, scratch_;
};

}  // namespace

struct Engine::Workspace {
  std::vector<std::unique_ptr<ModelRun>> runs;  // one per member
  std::vector<text::TokenIds> sources;
  std::vector<const text::TokenIds*> source_ptrs;
};

Engine::Engine(std::vector<std::shared_ptr<const Model>> members) : members_(std::move(members)) {
  if (members_.empty()) throw UsageError("no model to translate with");
  const int64_t vocab = members_.front()->tgt_vocab();
  for (const auto& m : members_)
    if (m->tgt_vocab() != vocab) throw UsageError("the ensemble's models have target vocabularies of different sizes");
}

Engine::~Engine() = default;

int64_t Engine::max_target_len() const {
  int64_t len = members_.front()->max_target_len();
  for (const auto& m : members_) len = std::min(len, m->max_target_len());
  return len;
}

std::unique_ptr<Engine::Workspace> Engine::borrow() const {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (!idle_.empty()) {
      auto w = std::move(idle_.back());
      idle_.pop_back();
      return w;
    }
  }
  auto w = std::make_unique<Workspace>();
  for (const auto& m : members_) w->runs.push_back(m->new_run());
  return w;
}

void Engine::give_back(std::unique_ptr<Workspace> workspace) const {
  std::lock_guard<std::mutex> lock(mutex_);
  idle_.push_back(std::move(workspace));
}

std::vector<decode::SearchResult> Engine::search_batch(Workspace& w, const std::vector<text::TokenIds>& sources,
                                                       const std::vector<size_t>& ids, const EngineDecodeOptions& options,
                                                       const std::vector<text::TokenIds>* prefixes,
                                                       const std::vector<text::LineConstraints>* constraints) const {
  w.sources.resize(ids.size());
  w.source_ptrs.clear();
  std::vector<SearchRow> rows(ids.size());
  const int64_t longest_output = max_target_len();
  for (size_t b = 0; b < ids.size(); ++b) {
    const text::TokenIds& s = sources[ids[b]];
    const size_t kept = std::min<size_t>(s.size(), static_cast<size_t>(std::max<int64_t>(options.max_source_len - 1, 0)));
    w.sources[b].assign(s.begin(), s.begin() + static_cast<std::ptrdiff_t>(kept));
    w.sources[b].push_back(text::kEosId);
    w.source_ptrs.push_back(&w.sources[b]);
    SearchRow& row = rows[b];
    row.source_len = static_cast<int64_t>(kept) + 1;
    row.source_index = ids[b];
    row.prefix = prefixes ? &(*prefixes)[ids[b]] : &kNoPrefix;
    row.constraints = constraints ? &(*constraints)[ids[b]] : &kNoConstraints;
    row.limit = options.search.forced ? static_cast<int64_t>(row.prefix->size())
                                      : decode::output_length_limit(static_cast<int64_t>(kept),
                                                                    static_cast<int64_t>(row.prefix->size()),
                                                                    options.max_len_a, options.max_len_b, longest_output);
  }
  for (auto& run : w.runs) run->start(w.source_ptrs);
  MembersDecoder decoder(w.runs, options.attention_layer, options.attention_head);
  return options.search.beam_search && !options.search.forced && !options.search.sampling
             ? beam_search(decoder, rows, options.search)
                                                              : greedy_search(decoder, rows, options.search);
}

std::vector<decode::SearchResult> Engine::search(const std::vector<text::TokenIds>& sources, const EngineDecodeOptions& options,
                                                 const std::vector<text::TokenIds>* prefixes,
                                                 const std::vector<text::LineConstraints>* constraints) const {
  std::vector<decode::SearchResult> out(sources.size());
  const GemmThreads threads(options.threads);
  std::unique_ptr<Workspace> w = borrow();
  try {
    for (const auto& ids : decode::length_sorted_batches(sources, options.batch_size, options.max_tokens)) {
      auto results = search_batch(*w, sources, ids, options, prefixes, constraints);
      for (size_t b = 0; b < ids.size(); ++b) out[ids[b]] = std::move(results[b]);
      if (options.on_batch_done) options.on_batch_done(ids.size());
    }
  } catch (...) {
    give_back(std::move(w));
    throw;
  }
  give_back(std::move(w));
  return out;
}

}  // namespace nmt::engine
