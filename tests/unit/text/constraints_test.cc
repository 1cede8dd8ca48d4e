// Lexical constraints as beam search tracks them, avoided phrases, and the repetition flag.
#include <gtest/gtest.h>

#include <algorithm>

#include "nmt/text/lexical_constraints.h"
#include "nmt/text/repetition.h"

using namespace nmt::text;

namespace {

// The progress after emitting `tokens` from the start.
ConstraintProgress after(const std::vector<TokenIds>& include, const TokenIds& tokens) {
  ConstraintProgress p(&include);
  for (int t : tokens) p = p.advance(t);
  return p;
}

TEST(LexicalConstraints, APhraseIsMetOnlyWhenItsTokensComeInARow) {
  const std::vector<TokenIds> include = {{5, 6, 7}};
  EXPECT_EQ(after(include, {5, 6}).met_tokens(), 2);
  EXPECT_FALSE(after(include, {5, 6}).all_met());
  EXPECT_TRUE(after(include, {9, 5, 6, 7, 9}).all_met());
  EXPECT_EQ(after(include, {5, 6, 9}).met_tokens(), 0);  // given up: its tokens stop counting
  EXPECT_FALSE(after(include, {5, 6, 9, 7}).all_met());
  EXPECT_EQ(after(include, {}).total_tokens(), 3);
}

TEST(LexicalConstraints, AMismatchKeepsTheLongestSuffixThatStartsThePhraseAgain) {
  const std::vector<TokenIds> include = {{4, 4, 8}};
  EXPECT_TRUE(after(include, {4, 4, 4, 8}).all_met());  // "4 4 | 4" keeps "4 4"
  EXPECT_EQ(after(include, {4, 4, 4}).met_tokens(), 2);
}

TEST(LexicalConstraints, PhrasesAreUnorderedAndAPhraseListedTwiceMustAppearTwice) {
  const std::vector<TokenIds> include = {{5}, {9, 10}};
  EXPECT_TRUE(after(include, {9, 10, 1, 5}).all_met());
  EXPECT_TRUE(after(include, {5, 9, 10}).all_met());
  const std::vector<TokenIds> twice = {{5}, {5}};
  EXPECT_FALSE(after(twice, {5}).all_met());
  EXPECT_TRUE(after(twice, {5, 1, 5}).all_met());
}

TEST(LexicalConstraints, ASuffixMayStartAnotherPhraseThanTheOneInProgress) {
  const std::vector<TokenIds> include = {{1, 2}, {1, 3}};
  const auto p = after(include, {1, 3});  // "1" started "1 2", then "1 3" matched
  EXPECT_EQ(p.met_tokens(), 2);
  EXPECT_TRUE(after(include, {1, 3, 1, 2}).all_met());
}

TEST(LexicalConstraints, WantedTokensContinueThePhraseInProgressElseStartAnUnmetOne) {
  const std::vector<TokenIds> include = {{5, 6}, {8}};
  auto wanted = after(include, {}).wanted();
  std::sort(wanted.begin(), wanted.end());
  EXPECT_EQ(wanted, (std::vector<int>{5, 8}));
  EXPECT_EQ(after(include, {5}).wanted(), std::vector<int>{6});
  EXPECT_EQ(after(include, {5, 6}).wanted(), std::vector<int>{8});
  EXPECT_TRUE(after(include, {5, 6, 8}).wanted().empty());
  EXPECT_TRUE(ConstraintProgress().all_met());  // no constraints
}

TEST(LexicalConstraints, AnAvoidedPhraseBansItsLastTokenAfterItsFirstOnes) {
  const std::vector<TokenIds> avoid = {{5, 6, 7}, {9}};
  EXPECT_EQ(avoided_next_tokens({1, 5, 6}, avoid), (std::vector<int64_t>{7, 9}));
  EXPECT_EQ(avoided_next_tokens({5, 6, 1}, avoid), std::vector<int64_t>{9});  // a one-token phrase: always
  EXPECT_EQ(avoided_next_tokens({}, avoid), std::vector<int64_t>{9});
  EXPECT_TRUE(avoided_next_tokens({6}, {{5, 6, 7}}).empty());
}

TEST(LexicalConstraints, UnmetPhrasesAreThoseTheOutputLacksEachOccurrenceUsedOnce) {
  EXPECT_TRUE(unmet_constraints({1, 5, 6, 2}, {{5, 6}, {2}}).empty());
  EXPECT_EQ(unmet_constraints({1, 5, 2}, {{5, 6}, {2}}), std::vector<size_t>{0});
  EXPECT_EQ(unmet_constraints({5}, {{5}, {5}}), std::vector<size_t>{1});  // twice asked, once there
  EXPECT_TRUE(unmet_constraints({5, 3, 5}, {{5}, {5}}).empty());
  // "une" and "dans une boîte" in "dans une boîte une": the short phrase takes the free "une".
  EXPECT_TRUE(unmet_constraints({10, 6, 5, 7, 5}, {{5}, {6, 5, 7}}).empty());
  EXPECT_TRUE(contains_phrase({1, 2, 3}, {2, 3}));
  EXPECT_FALSE(contains_phrase({1, 2, 3}, {3, 2}));
}

TEST(Repetition, LoopsAreFlaggedAndOrdinaryRepeatsAreNot) {
  EXPECT_TRUE(has_repetition_loop("Un homme homme homme en."));
  EXPECT_TRUE(has_repetition_loop("un chien noir un chien noir court"));
  EXPECT_TRUE(has_repetition_loop("le chien le chien"));
  EXPECT_FALSE(has_repetition_loop("bye bye"));  // one word twice is language
  EXPECT_FALSE(has_repetition_loop("Un homme regarde un autre homme."));
  EXPECT_FALSE(has_repetition_loop(""));
  EXPECT_FALSE(has_repetition_loop("a b c d e a b c d e"));  // five words: beyond the flag's reach
}

}  // namespace
