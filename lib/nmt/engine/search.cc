#include "nmt/engine/search.h"

#include <algorithm>
#include <functional>
#include <limits>
#include <numeric>

#include "nmt/decode/beam_candidates.h"
#include "nmt/decode/ngram_bans.h"
#include "nmt/decode/row_log_probs.h"
#include "nmt/decode/sampling_draw.h"
#include "nmt/text/special_ids.h"
#include "nmt/util/error.h"
#include "nmt/util/rng.h"

namespace nmt::engine {
using decode::Hypothesis;
using decode::SearchResult;
using text::kBosId;
using text::kEosId;

namespace {

constexpr float kBanned = -std::numeric_limits<float>::infinity();

// decode/token_bans.h's rules on one row of scores: repeated n-grams, the last token of each
// avoided phrase the history ends in, and EOS while phrases to include are unmet (`ban_eos`). A
// null history (inside a forced prefix) bans nothing else.
void ban_tokens(float* scores, const text::TokenIds* history, const text::LineConstraints* constraints,
                int64_t no_repeat_ngram, bool ban_eos = false) {
  if (ban_eos) scores[kEosId] = kBanned;
  if (!history) return;
  for (int64_t token : decode::repeated_ngram_bans(*history, no_repeat_ngram)) scores[token] = kBanned;
  if (constraints && !constraints->avoid.empty())
    for (int64_t token : text::avoided_next_tokens(*history, constraints->avoid)) scores[token] = kBanned;
}

bool bans_apply(const std::vector<SearchRow>& rows, int64_t no_repeat_ngram) {
  if (no_repeat_ngram > 0) return true;
  return std::any_of(rows.begin(), rows.end(), [](const SearchRow& r) { return !r.constraints->empty(); });
}

// The first largest value's index (torch.argmax's choice).
int64_t argmax(const float* row, int64_t n) {
  int64_t best = 0;
  for (int64_t i = 1; i < n; ++i)
    if (row[i] > row[best]) best = i;
  return best;
}

std::vector<float> attention_row(const std::vector<float>& attention, int64_t row, int64_t stride, int64_t width) {
  const float* p = attention.data() + row * stride;
  return std::vector<float>(p, p + width);
}

}  // namespace

std::vector<SearchResult> greedy_search(StepDecoder& decoder, const std::vector<SearchRow>& rows,
                                        const EngineSearchOptions& options) {
  const int64_t B = static_cast<int64_t>(rows.size()), V = decoder.vocab();
  std::vector<Hypothesis> hyps(static_cast<size_t>(B));
  int64_t longest = 0;
  for (const auto& r : rows) longest = std::max(longest, r.limit);
  const bool ban = bans_apply(rows, options.no_repeat_ngram);
  std::vector<int64_t> alive(static_cast<size_t>(B));
  std::iota(alive.begin(), alive.end(), 0);
  std::vector<int32_t> tokens(static_cast<size_t>(B), kBosId), next;
  std::vector<float> scores, attention, scratch(static_cast<size_t>(V));
  std::vector<int64_t> keep;
  std::vector<SplitMix64> generators;  // sampling: one per row, as decode/sampling.cc seeds them
  if (options.sampling)
    for (const auto& r : rows) generators.emplace_back(mix_seed(options.sample.seed, r.source_index));
  const bool scored = options.token_log_probs || options.forced || options.sampling;
  for (int64_t t = 0; t < longest + 1 && !alive.empty(); ++t) {
    decoder.step(tokens, scores, options.record_attention ? &attention : nullptr);
    const int64_t width = decoder.attention_width();
    next.resize(alive.size());
    keep.clear();
    for (size_t r = 0; r < alive.size(); ++r) {
      const SearchRow& row = rows[static_cast<size_t>(alive[r])];
      Hypothesis& h = hyps[static_cast<size_t>(alive[r])];
      float* s = scores.data() + static_cast<int64_t>(r) * V;
      const bool in_prefix = t < static_cast<int64_t>(row.prefix->size());
      if (ban && !options.forced) ban_tokens(s, in_prefix ? nullptr : &h.tokens, row.constraints, options.no_repeat_ngram);
      // A sampled row draws inside its prefix too (the draw is then overridden), as on LibTorch.
      const int64_t drawn = options.sampling ? decode::draw_token(decode::sampling_candidates(s, V, options.sample),
                                                                  generators[static_cast<size_t>(alive[r])])
                            : options.forced || in_prefix ? kEosId
                                                          : argmax(s, V);
      const int64_t token = in_prefix ? (*row.prefix)[static_cast<size_t>(t)] : drawn;
      const bool at_limit = !options.forced && static_cast<int64_t>(h.tokens.size()) >= row.limit;
      const bool done = token == kEosId || at_limit;
      // Cut off by the length limit: the last step belongs to a token that is not emitted.
      const bool emitted = !(at_limit && token != kEosId);
      if (emitted && options.record_attention)
        h.attention.push_back(attention_row(attention, static_cast<int64_t>(r), width, row.source_len));
      if (emitted && scored) {
        const double lp = static_cast<double>(s[token]) - decode::row_log_sum_exp(s, V, scratch.data());
        h.token_log_probs.push_back(lp);
        h.log_prob += lp;
        h.score = h.log_prob;
      }
      next[r] = static_cast<int32_t>(token);
      if (!done) {
        h.tokens.push_back(static_cast<int32_t>(token));
        keep.push_back(static_cast<int64_t>(r));
      }
    }
    if (keep.size() != alive.size()) {
      if (keep.empty()) break;
      decoder.select(keep);
      std::vector<int64_t> still;
      std::vector<int32_t> kept_tokens;
      for (int64_t r : keep) {
        still.push_back(alive[static_cast<size_t>(r)]);
        kept_tokens.push_back(next[static_cast<size_t>(r)]);
      }
      alive.swap(still);
      next.swap(kept_tokens);
    }
    tokens.swap(next);
  }
  std::vector<SearchResult> out;
  out.reserve(hyps.size());
  for (auto& h : hyps) {
    if (!options.token_log_probs && !options.forced) h.token_log_probs.clear();  // a sample's log_prob stays
    out.push_back({std::move(h)});
  }
  return out;
}

// ---------------------------------------------------------------------------------------
// Beam search: decode/beam.cc, step for step, phrases to include too.
namespace {

using decode::BeamCandidate;

struct Beam {
  text::TokenIds tokens;
  double log_prob = 0;
  std::vector<double> token_log_probs;
  std::vector<std::vector<float>> attention;
  text::ConstraintProgress constraints;  // where it stands with its phrases to include
};

struct Sentence {
  const SearchRow* row = nullptr;
  std::vector<Hypothesis> finished;
  // Ended by the length limit with phrases to include unmet: returned only after those that
  // hold every phrase.
  std::vector<Hypothesis> finished_unmet;
};

Hypothesis finish(const Beam& beam, const decode::BeamOptions& bo) {
  Hypothesis h;
  h.tokens = beam.tokens;
  h.log_prob = beam.log_prob;
  h.token_log_probs = beam.token_log_probs;
  h.attention = beam.attention;
  h.score = h.log_prob / decode::length_penalty(bo, static_cast<int64_t>(h.tokens.size()) + 1);
  return h;
}

// decode/beam.cc's sentence_done: K finished, or no live beam can beat the N-th best finished.
bool sentence_done(const Sentence& sent, const std::vector<Beam>& kept, const decode::BeamOptions& bo) {
  if (kept.empty() || static_cast<int64_t>(sent.finished.size()) >= bo.beam) return true;
  if (static_cast<int64_t>(sent.finished.size()) < bo.nbest) return false;
  std::vector<double> scores;
  for (const auto& h : sent.finished) scores.push_back(h.score);
  std::nth_element(scores.begin(), scores.begin() + (bo.nbest - 1), scores.end(), std::greater<double>());
  const double best_finished = scores[static_cast<size_t>(bo.nbest - 1)];
  double best_live = -std::numeric_limits<double>::infinity();
  for (const auto& b : kept) best_live = std::max(best_live, b.log_prob);
  const double lp_max = std::max(decode::length_penalty(bo, sent.row->limit + 1), decode::length_penalty(bo, 1));
  const double bound = best_live / (best_live < 0 ? lp_max : decode::length_penalty(bo, 1));
  return bound <= best_finished;
}

// What one step gave every row.
struct StepScores {
  std::vector<double> top_log_probs;  // [rows][per_row]
  std::vector<int64_t> top_tokens;
  int64_t per_row = 0;
  std::vector<double> forced_lp;      // per row, its prefix token's log-probability
  std::vector<int32_t> forced_tokens;
  const std::vector<float>* attention = nullptr;
  int64_t attention_width = 0;
  const std::vector<float>* scores = nullptr;  // [rows][V], after the bans
  int64_t vocab = 0;
  std::vector<float>* scratch = nullptr;        // V floats
};

// Every token that advances a beam's phrases to include, as a candidate (decode/beam.cc's
// add_constraint_candidates, with the same arithmetic as its log_probs_at).
void add_constraint_candidates(const std::vector<Beam>& beams, int64_t row_offset, const StepScores& step,
                               std::vector<BeamCandidate>& candidates) {
  for (size_t r = 0; r < beams.size(); ++r) {
    const text::TokenIds wanted = beams[r].constraints.wanted();
    if (wanted.empty()) continue;
    const float* row = step.scores->data() + (row_offset + static_cast<int64_t>(r)) * step.vocab;
    const double lse = decode::row_log_sum_exp(row, step.vocab, step.scratch->data());
    for (int token : wanted) {
      const double lp = static_cast<double>(row[token]) - lse;
      candidates.push_back({beams[r].log_prob + lp, static_cast<int64_t>(r), token, lp});
    }
  }
}

std::vector<Beam> step_sentence(Sentence& sent, const std::vector<Beam>& beams, int64_t t, int64_t row_offset,
                                const StepScores& step, const EngineSearchOptions& options,
                                std::vector<BeamCandidate>& candidates, std::vector<int64_t>& next_rows,
                                std::vector<int32_t>& next_tokens) {
  const decode::BeamOptions& bo = options.beam;
  const int64_t K = bo.beam;
  const bool in_prefix = t < static_cast<int64_t>(sent.row->prefix->size());
  candidates.clear();
  if (in_prefix) {
    const double lp = step.forced_lp[static_cast<size_t>(row_offset)];
    candidates.push_back({beams[0].log_prob + lp, 0, step.forced_tokens[static_cast<size_t>(row_offset)], lp});
  } else {
    for (int64_t r = 0; r < static_cast<int64_t>(beams.size()); ++r)
      for (int64_t c = 0; c < step.per_row; ++c) {
        const size_t at = static_cast<size_t>((row_offset + r) * step.per_row + c);
        candidates.push_back({beams[static_cast<size_t>(r)].log_prob + step.top_log_probs[at], r, step.top_tokens[at],
                              step.top_log_probs[at]});
      }
  }
  const int64_t width = in_prefix ? 1 : bo.shrink ? K - static_cast<int64_t>(sent.finished.size()) : K;
  const bool constrained = !in_prefix && !sent.row->constraints->include.empty();
  if (constrained) {
    add_constraint_candidates(beams, row_offset, step, candidates);
    candidates = decode::allocate_by_constraints(
        candidates,
        [&](int64_t origin) -> const text::ConstraintProgress& { return beams[static_cast<size_t>(origin)].constraints; },
        width);
  }
  const int64_t pool = std::min<int64_t>(constrained || bo.shrink || in_prefix ? width : 2 * width,
                                         static_cast<int64_t>(candidates.size()));
  if (!constrained) decode::sort_best(candidates, pool);
  if (!beams.empty() && static_cast<int64_t>(beams[0].tokens.size()) >= sent.row->limit) {
    for (const Beam& beam : beams)
      (beam.constraints.all_met() ? sent.finished : sent.finished_unmet).push_back(finish(beam, bo));
    candidates.clear();
  }
  std::vector<Beam> kept;
  for (int64_t c = 0; c < std::min<int64_t>(pool, static_cast<int64_t>(candidates.size())) &&
                      static_cast<int64_t>(kept.size()) < width;
       ++c) {
    const BeamCandidate& cand = candidates[static_cast<size_t>(c)];
    const Beam& parent = beams[static_cast<size_t>(cand.origin)];
    Beam child{parent.tokens, cand.log_prob, parent.token_log_probs, parent.attention, parent.constraints};
    if (options.token_log_probs) child.token_log_probs.push_back(cand.step_log_prob);
    if (options.record_attention)
      child.attention.push_back(attention_row(*step.attention, row_offset + cand.origin, step.attention_width,
                                              sent.row->source_len));
    if (cand.token == kEosId) {
      if (c < width) sent.finished.push_back(finish(child, bo));  // fairseq: an EOS counts among the top K only
      continue;
    }
    child.tokens.push_back(static_cast<int32_t>(cand.token));
    if (!parent.constraints.all_met()) child.constraints = parent.constraints.advance(static_cast<int>(cand.token));
    kept.push_back(std::move(child));
    next_rows.push_back(row_offset + cand.origin);
    next_tokens.push_back(static_cast<int32_t>(cand.token));
  }
  return kept;
}

std::vector<SearchResult> ranked_results(std::vector<Sentence>& sentences, int64_t nbest) {
  std::vector<SearchResult> out(sentences.size());
  for (size_t b = 0; b < sentences.size(); ++b) {
    auto& f = sentences[b].finished;
    auto& unmet = sentences[b].finished_unmet;
    const auto best_first = [](const Hypothesis& x, const Hypothesis& y) { return x.score > y.score; };
    std::stable_sort(f.begin(), f.end(), best_first);
    std::stable_sort(unmet.begin(), unmet.end(), best_first);
    f.insert(f.end(), std::make_move_iterator(unmet.begin()), std::make_move_iterator(unmet.end()));
    if (static_cast<int64_t>(f.size()) > nbest) f.resize(static_cast<size_t>(nbest));
    out[b] = std::move(f);
  }
  return out;
}

}  // namespace

std::vector<SearchResult> beam_search(StepDecoder& decoder, const std::vector<SearchRow>& rows,
                                      const EngineSearchOptions& options) {
  const decode::BeamOptions& bo = options.beam;
  if (bo.beam < 1) throw UsageError("--beam must be at least 1");
  if (bo.nbest < 1 || bo.nbest > bo.beam) throw UsageError("--nbest must be between 1 and --beam");
  const int64_t K = bo.beam, B = static_cast<int64_t>(rows.size()), V = decoder.vocab();
  std::vector<Sentence> sentences(static_cast<size_t>(B));
  for (size_t b = 0; b < sentences.size(); ++b) sentences[b].row = &rows[b];
  std::vector<std::vector<Beam>> beams(static_cast<size_t>(B), std::vector<Beam>(1));
  for (size_t b = 0; b < rows.size(); ++b)
    if (!rows[b].constraints->include.empty()) beams[b][0].constraints = text::ConstraintProgress(&rows[b].constraints->include);
  std::vector<int64_t> alive(static_cast<size_t>(B));
  std::iota(alive.begin(), alive.end(), 0);
  std::vector<int32_t> tokens(static_cast<size_t>(B), kBosId);
  int64_t longest_prefix = 0;
  for (const auto& r : rows) longest_prefix = std::max<int64_t>(longest_prefix, static_cast<int64_t>(r.prefix->size()));
  const bool ban = bans_apply(rows, options.no_repeat_ngram);
  const int64_t per_row = std::min<int64_t>(bo.shrink ? K : 2 * K, V);
  std::vector<float> scores, attention, scratch(static_cast<size_t>(V)), top(static_cast<size_t>(per_row));
  std::vector<BeamCandidate> candidates;
  StepScores step;
  step.per_row = per_row;
  step.attention = &attention;
  step.scores = &scores;
  step.vocab = V;
  step.scratch = &scratch;
  for (int64_t t = 0; !alive.empty(); ++t) {
    decoder.step(tokens, scores, options.record_attention ? &attention : nullptr);
    step.attention_width = decoder.attention_width();
    const int64_t R = static_cast<int64_t>(tokens.size());
    step.top_log_probs.resize(static_cast<size_t>(R * per_row));
    step.top_tokens.resize(static_cast<size_t>(R * per_row));
    step.forced_lp.assign(static_cast<size_t>(R), 0.0);
    step.forced_tokens.assign(static_cast<size_t>(R), 0);
    int64_t row = 0;
    for (const int64_t s : alive) {
      const SearchRow& sr = rows[static_cast<size_t>(s)];
      const bool in_prefix = t < static_cast<int64_t>(sr.prefix->size());
      for (const Beam& beam : beams[static_cast<size_t>(s)]) {
        float* sc = scores.data() + row * V;
        if (ban)
          ban_tokens(sc, in_prefix ? nullptr : &beam.tokens, sr.constraints, options.no_repeat_ngram,
                     !in_prefix && !beam.constraints.all_met());
        decode::row_top_log_probs(sc, V, per_row, step.top_log_probs.data() + row * per_row,
                                  step.top_tokens.data() + row * per_row, scratch.data(), top.data());
        if (in_prefix && t < longest_prefix) {
          const int32_t forced = (*sr.prefix)[static_cast<size_t>(t)];
          step.forced_tokens[static_cast<size_t>(row)] = forced;
          step.forced_lp[static_cast<size_t>(row)] = static_cast<double>(sc[forced]) - decode::row_log_sum_exp(sc, V, scratch.data());
        }
        ++row;
      }
    }
    std::vector<int64_t> next_rows, next_alive;
    std::vector<int32_t> next_tokens;
    std::vector<std::vector<Beam>> next_beams(static_cast<size_t>(B));
    int64_t row_offset = 0;
    for (const int64_t s : alive) {
      Sentence& sent = sentences[static_cast<size_t>(s)];
      const auto& live = beams[static_cast<size_t>(s)];
      std::vector<Beam> kept = step_sentence(sent, live, t, row_offset, step, options, candidates, next_rows, next_tokens);
      row_offset += static_cast<int64_t>(live.size());
      if (sentence_done(sent, kept, bo)) {
        next_rows.resize(next_rows.size() - kept.size());
        next_tokens.resize(next_tokens.size() - kept.size());
      } else {
        next_beams[static_cast<size_t>(s)] = std::move(kept);
        next_alive.push_back(s);
      }
    }
    if (next_alive.empty()) break;
    decoder.select(next_rows);
    tokens.swap(next_tokens);
    alive.swap(next_alive);
    for (int64_t s : alive) beams[static_cast<size_t>(s)] = std::move(next_beams[static_cast<size_t>(s)]);
  }
  return ranked_results(sentences, bo.nbest);
}

}  // namespace nmt::engine
