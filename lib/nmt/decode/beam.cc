#include "nmt/decode/beam.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <numeric>

#include "nmt/decode/beam_candidates.h"
#include "nmt/decode/greedy.h"
#include "nmt/decode/token_bans.h"
#include "nmt/decode/top_log_probs.h"
#include "nmt/util/error.h"

namespace nmt::decode {
using models::kBosId;
using models::kEosId;

void BeamSearch::validate() const {
  if (options_.beam < 1) throw UsageError("--beam must be at least 1");
  if (options_.nbest < 1 || options_.nbest > options_.beam) throw UsageError("--nbest must be between 1 and --beam");
}

namespace {

struct Beam {
  text::TokenIds tokens;
  double log_prob = 0;
  text::ConstraintProgress constraints;          // where it stands with its positive constraints
  std::vector<double> token_log_probs;           // when asked for
  std::vector<std::vector<float>> attention;     // when recorded
};

struct Sentence {
  int64_t limit = 0;     // maximum output length (without EOS), prefix included
  const text::TokenIds* prefix = nullptr;
  const text::LineConstraints* constraints = nullptr;  // never null
  int64_t source_len = 0;
  std::vector<Hypothesis> finished;
  // Ended by the length limit with positive constraints unmet: returned only when too few
  // hypotheses hold every phrase.
  std::vector<Hypothesis> finished_unmet;
};

Hypothesis finish(const Beam& beam, const BeamOptions& bo) {
  Hypothesis h;
  h.tokens = beam.tokens;
  h.log_prob = beam.log_prob;
  h.token_log_probs = beam.token_log_probs;
  h.attention = beam.attention;
  h.score = h.log_prob / length_penalty(bo, static_cast<int64_t>(h.tokens.size()) + 1);
  return h;
}

using Candidate = BeamCandidate;

// Every live beam's `per_row` best next tokens (rows row_offset.. of `top`) as candidates.
void collect_candidates(const std::vector<Beam>& beams, const TopLogProbs& top, int64_t row_offset, int64_t per_row,
                        std::vector<Candidate>& candidates) {
  const double* lp = top.log_probs.data_ptr<double>();
  const int64_t* ix = top.tokens.data_ptr<int64_t>();
  for (int64_t r = 0; r < static_cast<int64_t>(beams.size()); ++r)
    for (int64_t c = 0; c < per_row; ++c) {
      const int64_t at = (row_offset + r) * per_row + c;
      candidates.push_back({beams[r].log_prob + lp[at], r, ix[at], lp[at]});
    }
}

// Done when K hypotheses are finished, or no live beam can still beat the best finished
// one: a live beam's log-probability only falls, and its penalty is at most that of the
// longest allowed output, so raw / lp(limit + 1) bounds its final normalised score.
// With --nbest N the bound must hold against the N-th best finished hypothesis, not the
// best: a live beam may still beat the others and belong in the list.
bool sentence_done(const Sentence& sent, const std::vector<Beam>& kept, const BeamOptions& bo) {
  if (kept.empty() || static_cast<int64_t>(sent.finished.size()) >= bo.beam) return true;
  if (static_cast<int64_t>(sent.finished.size()) < bo.nbest) return false;
  std::vector<double> scores;
  for (const auto& h : sent.finished) scores.push_back(h.score);
  std::nth_element(scores.begin(), scores.begin() + (bo.nbest - 1), scores.end(), std::greater<double>());
  const double best_finished = scores[static_cast<size_t>(bo.nbest - 1)];
  double best_live = -std::numeric_limits<double>::infinity();
  for (const auto& b : kept) best_live = std::max(best_live, b.log_prob);
  const double lp_max = std::max(length_penalty(bo, sent.limit + 1), length_penalty(bo, 1));
  const double bound = best_live / (best_live < 0 ? lp_max : length_penalty(bo, 1));
  return bound <= best_finished;
}

// Where the rows of the next step come from. The per-row entries (the target prefix) follow
// the surviving rows. The per-source entries keep one row per sentence while every sentence has
// the same number of beams (the model folds the beams into its cross-attention), and one row
// per beam otherwise (shrinking beams of different widths, forced prefixes); they are copied
// only when that layout changes. Row r of the per-row entries reads row source_of_row[r] of
// the per-source entries, which have source_rows rows.
struct RowLayout {
  std::vector<int64_t> source_of_row;
  int64_t source_rows = 0;
};

void follow_surviving_rows(models::DecoderState& state, const std::vector<int64_t>& next_rows,
                           const std::vector<int64_t>& next_alive, const std::vector<std::vector<Beam>>& next_beams,
                           RowLayout& layout, const torch::Device& device) {
  const int64_t width0 = static_cast<int64_t>(next_beams[next_alive.front()].size());
  const bool uniform = std::all_of(next_alive.begin(), next_alive.end(), [&](int64_t s) {
    return static_cast<int64_t>(next_beams[s].size()) == width0;
  });
  std::vector<int64_t> sources, next_source_of_row;
  if (uniform) {
    for (size_t r = 0; r < next_rows.size(); r += static_cast<size_t>(width0))
      sources.push_back(layout.source_of_row[static_cast<size_t>(next_rows[r])]);
    for (size_t a = 0; a < next_alive.size(); ++a)
      next_source_of_row.insert(next_source_of_row.end(), static_cast<size_t>(width0), static_cast<int64_t>(a));
  } else {
    for (int64_t r : next_rows) sources.push_back(layout.source_of_row[static_cast<size_t>(r)]);
    next_source_of_row.resize(next_rows.size());
    std::iota(next_source_of_row.begin(), next_source_of_row.end(), 0);
  }
  bool sources_unchanged = static_cast<int64_t>(sources.size()) == layout.source_rows;
  for (size_t i = 0; sources_unchanged && i < sources.size(); ++i) sources_unchanged = sources[i] == static_cast<int64_t>(i);
  state.select(torch::tensor(next_rows, torch::kLong).to(device),
               sources_unchanged ? torch::Tensor() : torch::tensor(sources, torch::kLong).to(device));
  layout.source_rows = static_cast<int64_t>(sources.size());
  layout.source_of_row.swap(next_source_of_row);
}

// Each sentence's finished hypotheses, best first, at most N.
// Each sentence's finished hypotheses, best first, at most N; those holding every phrase they
// must contain before any that lack one.
std::vector<SearchResult> ranked_results(std::vector<Sentence>& sentences, int64_t nbest) {
  std::vector<SearchResult> out(sentences.size());
  const auto best_first = [](const auto& x, const auto& y) { return x.score > y.score; };
  for (size_t b = 0; b < sentences.size(); ++b) {
    auto& f = sentences[b].finished;
    auto& unmet = sentences[b].finished_unmet;
    std::stable_sort(f.begin(), f.end(), best_first);
    std::stable_sort(unmet.begin(), unmet.end(), best_first);
    f.insert(f.end(), std::make_move_iterator(unmet.begin()), std::make_move_iterator(unmet.end()));
    if (static_cast<int64_t>(f.size()) > nbest) f.resize(static_cast<size_t>(nbest));
    out[b] = std::move(f);
  }
  return out;
}

// Each model row as the bans see it at step t (decode/token_bans.h): the live beams of the
// alive sentences, in row order. A sentence inside its forced prefix bans nothing (its next
// token is given); a beam with positive constraints unmet may not end.
std::vector<RowBans> bans_of(const std::vector<int64_t>& alive, const std::vector<std::vector<Beam>>& beams,
                             const std::vector<Sentence>& sentences, int64_t t) {
  std::vector<RowBans> rows;
  for (const int64_t s : alive) {
    const Sentence& sent = sentences[static_cast<size_t>(s)];
    const bool in_prefix = t < static_cast<int64_t>(sent.prefix->size());
    for (const Beam& beam : beams[static_cast<size_t>(s)])
      rows.push_back({in_prefix ? nullptr : &beam.tokens, sent.constraints, !in_prefix && !beam.constraints.all_met()});
  }
  return rows;
}

// Constrained search (beam_candidates.h): besides each beam's best next tokens, every token that
// advances a beam's positive constraints is a candidate.
void add_constraint_candidates(const std::vector<Beam>& beams, const torch::Tensor& logits, int64_t row_offset,
                               std::vector<Candidate>& candidates) {
  std::vector<int64_t> rows, tokens;
  for (size_t r = 0; r < beams.size(); ++r)
    for (int token : beams[r].constraints.wanted()) {
      rows.push_back(row_offset + static_cast<int64_t>(r));
      tokens.push_back(token);
    }
  const std::vector<double> lp = log_probs_at(logits, rows, tokens);
  for (size_t i = 0; i < rows.size(); ++i) {
    const int64_t origin = rows[i] - row_offset;
    candidates.push_back({beams[static_cast<size_t>(origin)].log_prob + lp[i], origin, tokens[i], lp[i]});
  }
}

}  // namespace

namespace {

// What one step gives every row: the model's scores and what was read off them.
struct StepScores {
  const torch::Tensor& logits;
  const TopLogProbs& top;
  int64_t per_row = 0;
  const torch::Tensor& forced_lp;          // per row, the log-probability of its prefix token
  const std::vector<int64_t>& forced_tokens;
  const torch::Tensor& attention;          // float CPU [rows, S] when recorded
};

// One sentence's step: its candidates, the beams it keeps (their rows appended to next_rows
// and next_tokens) and the hypotheses it finishes. `row_offset` is its first row.
std::vector<Beam> step_sentence(Sentence& sent, const std::vector<Beam>& beams, int64_t t, int64_t row_offset,
                                const StepScores& step, const BeamOptions& bo, const DecodeOptions& options,
                                std::vector<Candidate>& candidates, std::vector<int64_t>& next_rows,
                                std::vector<int64_t>& next_tokens) {
  const int64_t K = bo.beam;
  const bool in_prefix = t < static_cast<int64_t>(sent.prefix->size());
  candidates.clear();
  if (in_prefix) {
    const double step_lp = step.forced_lp.data_ptr<double>()[row_offset];
    candidates.push_back({beams[0].log_prob + step_lp, 0, step.forced_tokens[static_cast<size_t>(row_offset)], step_lp});
  } else {
    collect_candidates(beams, step.top, row_offset, step.per_row, candidates);
  }
  // Width: shrinking (Marian) keeps K minus the finished hypotheses live and takes the
  // best `width` candidates, finished or not; fairseq keeps K live out of the best 2K.
  const int64_t width = in_prefix ? 1 : bo.shrink ? K - static_cast<int64_t>(sent.finished.size()) : K;
  const bool constrained = !in_prefix && !sent.constraints->include.empty();
  if (constrained) {
    add_constraint_candidates(beams, step.logits, row_offset, candidates);
    candidates = allocate_by_constraints(
        candidates, [&](int64_t origin) -> const text::ConstraintProgress& { return beams[static_cast<size_t>(origin)].constraints; },
        width);
  }
  const int64_t pool = std::min<int64_t>(constrained || bo.shrink || in_prefix ? width : 2 * width,
                                         static_cast<int64_t>(candidates.size()));
  if (!constrained) sort_best(candidates, pool);
  // All live beams of a sentence have the same length, so they reach the length limit
  // together. Each then ends as it is, once, scored by its prefix alone (the limit ends
  // it, not an EOS): finishing every candidate of one parent, as before, put the same
  // hypothesis into the n-best list several times.
  if (!beams.empty() && static_cast<int64_t>(beams[0].tokens.size()) >= sent.limit) {
    for (const Beam& beam : beams) (beam.constraints.all_met() ? sent.finished : sent.finished_unmet).push_back(finish(beam, bo));
    candidates.clear();
  }
  std::vector<Beam> kept;
  for (int64_t c = 0; c < std::min<int64_t>(pool, static_cast<int64_t>(candidates.size())) &&
                      static_cast<int64_t>(kept.size()) < width;
       ++c) {
    const Candidate& cand = candidates[static_cast<size_t>(c)];
    const Beam& parent = beams[static_cast<size_t>(cand.origin)];
    Beam child{parent.tokens, cand.log_prob, parent.constraints, parent.token_log_probs, parent.attention};
    if (options.return_token_log_probs) child.token_log_probs.push_back(cand.step_log_prob);
    if (options.record_attention)
      child.attention.push_back(attention_row(step.attention, row_offset + cand.origin, sent.source_len));
    if (cand.token == kEosId) {
      // fairseq's rule: an EOS counts only when it ranks among the top K candidates.
      if (c < width) sent.finished.push_back(finish(child, bo));
      continue;
    }
    child.tokens.push_back(static_cast<int>(cand.token));
    if (!parent.constraints.all_met()) child.constraints = parent.constraints.advance(static_cast<int>(cand.token));
    kept.push_back(std::move(child));
    next_rows.push_back(row_offset + cand.origin);
    next_tokens.push_back(cand.token);
  }
  return kept;
}

}  // namespace

std::vector<SearchResult> BeamSearch::search(SearchBatch& batch, const DecodeOptions& options) const {
  const BeamOptions& bo = options_;
  const int64_t K = bo.beam;
  const int64_t B = batch.rows();
  const torch::Device device = batch.device;
  models::DecoderState& state = batch.state;
  std::vector<Sentence> sentences(static_cast<size_t>(B));
  // At the first step every sentence has one live beam (BOS); afterwards up to K.
  std::vector<std::vector<Beam>> beams(static_cast<size_t>(B), std::vector<Beam>(1));
  for (size_t b = 0; b < static_cast<size_t>(B); ++b) {
    sentences[b].limit = batch.limit[b];
    sentences[b].prefix = batch.prefix[b];
    sentences[b].constraints = batch.constraints[b];
    sentences[b].source_len = batch.source_len[b];
    if (!batch.constraints[b]->include.empty()) beams[b][0].constraints = text::ConstraintProgress(&batch.constraints[b]->include);
  }
  std::vector<int64_t> alive(static_cast<size_t>(B));  // alive sentence → index in `sentences`
  std::iota(alive.begin(), alive.end(), 0);
  auto tokens = torch::full({B}, kBosId, torch::TensorOptions().dtype(torch::kLong).device(device));
  // Forced-prefix bookkeeping runs only during the first `longest_prefix` steps (none without prefixes).
  int64_t longest_prefix = 0;
  for (const text::TokenIds* p : batch.prefix) longest_prefix = std::max<int64_t>(longest_prefix, static_cast<int64_t>(p->size()));
  RowLayout layout;
  layout.source_of_row.resize(static_cast<size_t>(B));
  std::iota(layout.source_of_row.begin(), layout.source_of_row.end(), 0);
  layout.source_rows = B;
  std::vector<Candidate> candidates;
  for (int64_t t = 0; !alive.empty(); ++t) {
    auto logits = batch.model.step(tokens, state);
    if (options.search.no_repeat_ngram > 0 || batch.any_constraints)
      ban_next_tokens(logits, bans_of(alive, beams, sentences, t), options.search.no_repeat_ngram);
    // Two-stage top-k: the best `per_row` tokens of each row (on the model's device), then a
    // merge of each sentence's few candidates here. A sentence's best w (beam, token) pairs
    // are always among its rows' top w tokens, whatever the number of live beams per
    // sentence, which varies when beams shrink.
    const int64_t per_row = std::min<int64_t>(bo.shrink ? K : 2 * K, logits.size(1));
    const TopLogProbs top = top_log_probs(logits, per_row);
    // Sentences inside their forced prefix (one beam each) take the prefix's next token.
    std::vector<int64_t> forced_tokens;
    bool any_forced = false;
    for (size_t a = 0; t < longest_prefix && a < alive.size(); ++a) {
      const text::TokenIds& prefix = *sentences[static_cast<size_t>(alive[a])].prefix;
      const bool in_prefix = t < static_cast<int64_t>(prefix.size());
      any_forced |= in_prefix;
      forced_tokens.insert(forced_tokens.end(), beams[static_cast<size_t>(alive[a])].size(),
                           in_prefix ? prefix[static_cast<size_t>(t)] : 0);
    }
    torch::Tensor forced_lp, attention;
    if (any_forced) forced_lp = token_log_probs(logits, torch::tensor(forced_tokens, torch::kLong));
    if (options.record_attention) attention = state.attention.to(torch::kCPU, torch::kFloat).contiguous();
    const StepScores step{logits, top, per_row, forced_lp, forced_tokens, attention};

    std::vector<int64_t> next_rows, next_tokens, next_alive;
    std::vector<std::vector<Beam>> next_beams(static_cast<size_t>(B));
    int64_t row_offset = 0;
    for (const int64_t s : alive) {
      Sentence& sent = sentences[static_cast<size_t>(s)];
      const auto& live = beams[static_cast<size_t>(s)];
      std::vector<Beam> kept = step_sentence(sent, live, t, row_offset, step, bo, options, candidates, next_rows, next_tokens);
      row_offset += static_cast<int64_t>(live.size());
      if (sentence_done(sent, kept, bo)) {
        // Drop this sentence's rows from the batch.
        next_rows.resize(next_rows.size() - kept.size());
        next_tokens.resize(next_tokens.size() - kept.size());
      } else {
        next_beams[static_cast<size_t>(s)] = std::move(kept);
        next_alive.push_back(s);
      }
    }
    if (next_alive.empty()) break;
    follow_surviving_rows(state, next_rows, next_alive, next_beams, layout, device);
    tokens = torch::tensor(next_tokens, torch::kLong).to(device);
    alive.swap(next_alive);
    for (int64_t s : alive) beams[static_cast<size_t>(s)] = std::move(next_beams[static_cast<size_t>(s)]);
  }

  return ranked_results(sentences, bo.nbest);
}

}  // namespace nmt::decode
