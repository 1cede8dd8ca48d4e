// NgramMatcher, the clipped n-gram matching under BLEU and chrF: its counts must be
// sacreBLEU's Counter arithmetic exactly, whatever the lengths, orders and references.
#include <algorithm>
#include <cstdint>
#include <map>
#include <random>
#include <vector>

#include <gtest/gtest.h>

#include "nmt/metrics/ngram_match.h"

namespace nmt::metrics {
namespace {

using Symbols = std::vector<uint32_t>;

std::vector<int64_t> matches_of(NgramMatcher& m, const std::vector<Symbols>& refs, const Symbols& hyp, int max_order) {
  std::vector<int64_t> matches(static_cast<size_t>(max_order), 0);
  m.start();
  for (const Symbols& ref : refs) m.add_reference(ref.data(), ref.size(), max_order);
  m.match(hyp.data(), hyp.size(), max_order, matches.data());
  return matches;
}

// The definition: per order, sum over the hypothesis's n-grams of min(its count, its highest
// count in one reference).
std::vector<int64_t> counted_matches(const std::vector<Symbols>& refs, const Symbols& hyp, int max_order) {
  const auto counts = [](const Symbols& s, size_t n) {
    std::map<Symbols, int64_t> c;
    for (size_t i = 0; i + n <= s.size(); ++i) ++c[Symbols(s.begin() + i, s.begin() + i + n)];
    return c;
  };
  std::vector<int64_t> out;
  for (size_t n = 1; n <= static_cast<size_t>(max_order); ++n) {
    std::map<Symbols, int64_t> best;
    for (const Symbols& ref : refs)
      for (const auto& [gram, c] : counts(ref, n)) best[gram] = std::max(best[gram], c);
    int64_t total = 0;
    for (const auto& [gram, c] : counts(hyp, n)) {
      auto it = best.find(gram);
      if (it != best.end()) total += std::min(c, it->second);
    }
    out.push_back(total);
  }
  return out;
}

TEST(NgramMatcher, MatchesAreClippedByTheReferenceCount) {
  NgramMatcher m;
  // "a a a" against "a b a": two of the three a's match, no bigram does.
  EXPECT_EQ(matches_of(m, {{1, 2, 1}}, {1, 1, 1}, 2), (std::vector<int64_t>{2, 0}));
  // The other way round every a of the hypothesis finds one.
  EXPECT_EQ(matches_of(m, {{1, 1, 1}}, {1, 2, 1}, 2), (std::vector<int64_t>{2, 0}));
}

TEST(NgramMatcher, SeveralReferencesCountTheMostInAnyOne) {
  NgramMatcher m;
  // "a a" and "a b": a counts twice (first reference), "a a" once, "a b" once.
  EXPECT_EQ(matches_of(m, {{1, 1}, {1, 2}}, {1, 1, 1, 2}, 2), (std::vector<int64_t>{3, 2}));
}

TEST(NgramMatcher, StartForgetsThePreviousReferences) {
  NgramMatcher m;
  EXPECT_EQ(matches_of(m, {{1, 2, 3}}, {1, 2, 3}, 3), (std::vector<int64_t>{3, 2, 1}));
  EXPECT_EQ(matches_of(m, {{4, 5}}, {1, 2, 3}, 3), (std::vector<int64_t>{0, 0, 0}));
  EXPECT_EQ(matches_of(m, {}, {1, 2, 3}, 3), (std::vector<int64_t>{0, 0, 0}));
}

TEST(NgramMatcher, OrdersLongerThanTheSegmentsMatchNothing) {
  NgramMatcher m;
  EXPECT_EQ(matches_of(m, {{7, 8}}, {7, 8}, 4), (std::vector<int64_t>{2, 1, 0, 0}));
  EXPECT_EQ(matches_of(m, {Symbols{}}, {}, 2), (std::vector<int64_t>{0, 0}));
}

TEST(NgramMatcher, AgreesWithCountingEveryNgram) {
  // Random segments over small alphabets (many repeats), up to 3,000 symbols (the table grows
  // several times), orders up to 9, one to three references, one matcher reused throughout.
  std::mt19937 rng(20261123);
  NgramMatcher m;
  for (int trial = 0; trial < 200; ++trial) {
    const uint32_t alphabet = 1 + rng() % 6;
    const int max_order = 1 + static_cast<int>(rng() % 9);
    const size_t longest = trial % 20 == 0 ? 3000 : 40;
    const auto segment = [&] {
      Symbols s(rng() % (longest + 1));
      for (uint32_t& x : s) x = rng() % alphabet;
      return s;
    };
    std::vector<Symbols> refs(1 + rng() % 3);
    for (Symbols& r : refs) r = segment();
    const Symbols hyp = segment();
    ASSERT_EQ(matches_of(m, refs, hyp, max_order), counted_matches(refs, hyp, max_order)) << "trial " << trial;
  }
}

}  // namespace
}  // namespace nmt::metrics
