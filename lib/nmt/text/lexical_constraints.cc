#include "nmt/text/lexical_constraints.h"

#include <algorithm>

namespace nmt::text {

int64_t LineConstraints::include_tokens() const {
  int64_t n = 0;
  for (const auto& p : include) n += static_cast<int64_t>(p.size());
  return n;
}

ConstraintProgress::ConstraintProgress(const std::vector<TokenIds>* include)
    : include_(include), met_(include->size(), false) {
  for (size_t q = 0; q < include->size(); ++q) {
    total_tokens_ += static_cast<int64_t>((*include)[q].size());
    if ((*include)[q].empty()) met_[q] = true;  // nothing to produce
  }
}

void ConstraintProgress::start(size_t p, int64_t length) {
  const int64_t size = static_cast<int64_t>((*include_)[p].size());
  if (length == size) {
    met_[p] = true;
    met_tokens_ += size;
    in_progress_ = -1;
    progress_ = 0;
  } else {
    in_progress_ = static_cast<int64_t>(p);
    progress_ = length;
  }
}

namespace {
// The longest k <= max_k with the last k tokens of `run` equal to the first k of `phrase`.
int64_t overlap(const TokenIds& run, const TokenIds& phrase, int64_t max_k) {
  const int64_t n = static_cast<int64_t>(run.size());
  for (int64_t k = std::min<int64_t>(max_k, n); k > 0; --k)
    if (std::equal(run.end() - k, run.end(), phrase.begin())) return k;
  return 0;
}
}  // namespace

ConstraintProgress ConstraintProgress::advance(TokenId token) const {
  ConstraintProgress next = *this;
  if (!include_ || all_met()) return next;
  // What the hypothesis has produced towards a phrase: the phrase in progress so far, then the
  // token. The phrase continued, or any unmet phrase that a suffix of this run starts, wins
  // by the longest match (the phrase in progress first on ties, then the listed order).
  TokenIds run;
  if (in_progress_ >= 0) {
    const TokenIds& p = (*include_)[static_cast<size_t>(in_progress_)];
    run.assign(p.begin(), p.begin() + progress_);
  }
  run.push_back(token);
  next.in_progress_ = -1;
  next.progress_ = 0;
  int64_t best_length = 0;
  size_t best = 0;
  auto consider = [&](size_t q) {
    const TokenIds& phrase = (*include_)[q];
    const int64_t k = overlap(run, phrase, static_cast<int64_t>(phrase.size()));
    if (k > best_length) best_length = k, best = q;
  };
  if (in_progress_ >= 0) consider(static_cast<size_t>(in_progress_));
  for (size_t q = 0; q < include_->size(); ++q)
    if (!met_[q] && static_cast<int64_t>(q) != in_progress_) consider(q);
  if (best_length > 0) next.start(best, best_length);
  return next;
}

TokenIds ConstraintProgress::wanted() const {
  TokenIds out;
  if (!include_ || all_met()) return out;
  if (in_progress_ >= 0) {
    out.push_back((*include_)[static_cast<size_t>(in_progress_)][static_cast<size_t>(progress_)]);
    return out;
  }
  for (size_t q = 0; q < include_->size(); ++q)
    if (!met_[q]) out.push_back((*include_)[q].front());
  return out;
}

std::vector<int64_t> avoided_next_tokens(const TokenIds& history, const std::vector<TokenIds>& avoid) {
  std::vector<int64_t> bans;
  for (const auto& phrase : avoid) {
    if (phrase.empty() || phrase.size() - 1 > history.size()) continue;
    if (std::equal(phrase.begin(), phrase.end() - 1, history.end() - static_cast<std::ptrdiff_t>(phrase.size() - 1)))
      bans.push_back(phrase.back());
  }
  std::sort(bans.begin(), bans.end());
  bans.erase(std::unique(bans.begin(), bans.end()), bans.end());
  return bans;
}

bool contains_phrase(const TokenIds& tokens, const TokenIds& phrase) {
  return std::search(tokens.begin(), tokens.end(), phrase.begin(), phrase.end()) != tokens.end();
}

std::vector<size_t> unmet_constraints(const TokenIds& output, const std::vector<TokenIds>& include) {
  // Each phrase takes the first occurrence no other phrase took, the longest phrases first: a
  // short phrase inside a longer one ("une" in "dans une boîte") would otherwise take the
  // longer one's occurrence and leave it unmet although the output holds both.
  std::vector<size_t> order(include.size());
  for (size_t q = 0; q < order.size(); ++q) order[q] = q;
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return include[a].size() > include[b].size(); });
  std::vector<bool> used(output.size(), false);
  std::vector<size_t> unmet;
  for (size_t q : order) {
    const TokenIds& phrase = include[q];
    if (phrase.empty()) continue;
    bool found = false;
    for (size_t at = 0; !found && at + phrase.size() <= output.size(); ++at) {
      const auto first = output.begin() + static_cast<std::ptrdiff_t>(at);
      const auto taken = used.begin() + static_cast<std::ptrdiff_t>(at);
      if (!std::equal(phrase.begin(), phrase.end(), first)) continue;
      if (std::any_of(taken, taken + static_cast<std::ptrdiff_t>(phrase.size()), [](bool u) { return u; })) continue;
      std::fill(taken, taken + static_cast<std::ptrdiff_t>(phrase.size()), true);
      found = true;
    }
    if (!found) unmet.push_back(q);
  }
  std::sort(unmet.begin(), unmet.end());
  return unmet;
}

}  // namespace nmt::text
