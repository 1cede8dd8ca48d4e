// Paragraphs in, paragraphs out (decode/paragraphs.h): how a request of several sentences is
// cut, and how its sentences' translations come back as one, with the source's spacing.
#include <gtest/gtest.h>

#include "nmt/decode/paragraphs.h"
#include "nmt/text/sentence_split.h"

namespace {

using nmt::decode::join_sentences;
using nmt::decode::Nbest;
using nmt::decode::plan_sentences;
using nmt::decode::SentencePlan;
using nmt::decode::TranslationRequest;
using nmt::decode::TranslationResult;

const nmt::text::SentenceSplitter& english() {
  static const nmt::text::SentenceSplitter splitter("en");
  return splitter;
}

std::vector<std::string> sources(const SentencePlan& plan) {
  std::vector<std::string> out;
  for (const auto& s : plan.sentences) out.push_back(s.source);
  return out;
}

// A translation of a sentence: its text upper-cased, one token per word, each token -1 and
// the EOS -0.5, and each word aligned to itself.
TranslationResult fake(const std::string& source, double extra = 0) {
  TranslationResult r;
  std::string alignment;
  int word = 0;
  for (char c : source) r.text += static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  for (size_t i = 0; i <= source.size(); ++i)
    if (i == source.size() || source[i] == ' ') {
      r.tokens.push_back("w");
      r.token_ids.push_back(7);
      r.token_log_probs.push_back(-1);
      alignment += (alignment.empty() ? "" : " ") + std::to_string(word) + "-" + std::to_string(word);
      ++word;
    }
  r.token_log_probs.push_back(-0.5);
  r.log_prob = -1.0 * word - 0.5 + extra;
  r.score = r.log_prob / 2;
  r.confidence = r.log_prob / static_cast<double>(r.token_log_probs.size());
  r.alignment = alignment;
  r.length_limit = 10 + word;
  return r;
}

std::vector<Nbest> fake_translations(const SentencePlan& plan) {
  std::vector<Nbest> out;
  for (const auto& s : plan.sentences) out.push_back({fake(s.source)});
  return out;
}

TEST(Paragraphs, EachRequestIsCutIntoItsSentencesAllTranslatedTogether) {
  const auto plan = plan_sentences({{"  One dog.  Two cats.\n\nThree birds. ", {}, {}}, {"Alone.", {}, {}}}, english());
  EXPECT_EQ(sources(plan), (std::vector<std::string>{"One dog.", "Two cats.", "Three birds.", "Alone."}));
  ASSERT_EQ(plan.paragraphs.size(), 2u);
  EXPECT_EQ(plan.paragraphs[0].gaps, (std::vector<std::string>{"  ", "  ", "\n\n", " "}));
  EXPECT_EQ(plan.paragraphs[1].first, 3u);
  EXPECT_EQ(plan.paragraphs[1].count, 1u);
}

TEST(Paragraphs, PrefixesConstraintsAndBlankSourcesStayWhole) {
  nmt::text::PhraseConstraints include;
  include.include = {"chien"};
  const auto plan = plan_sentences(
      {{"One. Two.", "Un.", {}}, {"Three. Four.", {}, include}, {"   ", {}, {}}, {"", {}, {}}}, english());
  EXPECT_EQ(sources(plan), (std::vector<std::string>{"One. Two.", "Three. Four.", "   ", ""}));
  EXPECT_EQ(plan.sentences[0].prefix, "Un.");
  EXPECT_EQ(plan.sentences[1].constraints.include, include.include);
}

TEST(Paragraphs, TranslationsComeBackWithTheSourcesSpacing) {
  const auto plan = plan_sentences({{"  One dog.  Two cats.\n\nThree birds. ", {}, {}}, {"Alone.", {}, {}}}, english());
  const auto joined = join_sentences(plan, fake_translations(plan));
  ASSERT_EQ(joined.size(), 2u);
  EXPECT_EQ(joined[0].front().text, "  ONE DOG.  TWO CATS.\n\nTHREE BIRDS. ");
  EXPECT_EQ(joined[1].front().text, "ALONE.");
}

TEST(Paragraphs, SentencesWrittenWithoutSpacesAreJoinedWithOne) {
  const auto plan = plan_sentences({{"他来了。她走了。", {}, {}}}, english());
  ASSERT_EQ(plan.sentences.size(), 2u);
  std::vector<Nbest> translated = {{fake("he came.")}, {fake("she left.")}};
  EXPECT_EQ(join_sentences(plan, translated)[0].front().text, "HE CAME. SHE LEFT.");
}

TEST(Paragraphs, ScoresTokensConfidenceAndAlignmentAreThoseOfTheWholeParagraph) {
  const auto plan = plan_sentences({{"One dog. Two small cats.", {}, {}}}, english());
  const TranslationResult a = fake("One dog."), b = fake("Two small cats.");
  const TranslationResult r = join_sentences(plan, fake_translations(plan))[0].front();
  EXPECT_DOUBLE_EQ(r.log_prob, a.log_prob + b.log_prob);
  EXPECT_DOUBLE_EQ(r.score, a.score + b.score);
  EXPECT_EQ(r.tokens.size(), a.tokens.size() + b.tokens.size());
  EXPECT_EQ(r.token_log_probs.size(), a.token_log_probs.size() + b.token_log_probs.size());
  EXPECT_DOUBLE_EQ(r.confidence, r.log_prob / static_cast<double>(r.token_log_probs.size()));
  EXPECT_EQ(r.length_limit, b.length_limit);
  // Word i of the paragraph is word i of its whitespace split, on both sides.
  EXPECT_EQ(r.alignment, "0-0 1-1 2-2 3-3 4-4");
  EXPECT_TRUE(r.attention.empty());  // rows of one sentence's tokens: not joined
}

TEST(Paragraphs, TheKthHypothesisJoinsEachSentencesKthOrItsLast) {
  const auto plan = plan_sentences({{"One. Two.", {}, {}}}, english());
  std::vector<Nbest> translated = {{fake("un."), fake("une.", -1)}, {fake("deux.")}};
  const Nbest n = join_sentences(plan, translated)[0];
  ASSERT_EQ(n.size(), 2u);
  EXPECT_EQ(n[0].text, "UN. DEUX.");
  EXPECT_EQ(n[1].text, "UNE. DEUX.");
  EXPECT_GE(n[0].score, n[1].score);
}

TEST(Paragraphs, ASentenceLeftWholeKeepsEverythingItsTranslationHas) {
  const auto plan = plan_sentences({{"Alone.", {}, {}}}, english());
  TranslationResult t = fake("Alone.");
  t.attention = {{1.0f}};
  const auto joined = join_sentences(plan, {{t}});
  EXPECT_EQ(joined[0].front().attention, t.attention);
}

TEST(Paragraphs, ASentenceTooLongIsCutWhereAClauseEndsElseBetweenWords) {
  const auto fits = [](std::string_view s) { return s.size() <= 24; };
  const auto plan = plan_sentences(
      {{"A dog runs on the grass, a cat sleeps; the sun shines. Short one.", {}, {}},
       {"Words without any punctuation at all in them", {}, {}}, {"Unbreakablewordthatisfartoolong.", {}, {}}},
      english(), fits);
  EXPECT_EQ(sources(plan), (std::vector<std::string>{"A dog runs on the grass,", "a cat sleeps;", "the sun shines.",
                                                     "Short one.", "Words without any", "punctuation at",
                                                     "all in them", "Unbreakablewordthatisfartoolong."}));
  // Put back with the spaces they were cut at.
  const auto joined = join_sentences(plan, fake_translations(plan));
  EXPECT_EQ(joined[0].front().text, "A DOG RUNS ON THE GRASS, A CAT SLEEPS; THE SUN SHINES. SHORT ONE.");
  EXPECT_EQ(joined[1].front().text, "WORDS WITHOUT ANY PUNCTUATION AT ALL IN THEM");
}

TEST(Paragraphs, ProgressCountsRequestsNotSentences) {
  const auto plan = plan_sentences({{"One. Two. Three.", {}, {}}, {"Four.", {}, {}}}, english());
  ASSERT_EQ(plan.sentences.size(), 4u);
  EXPECT_EQ(nmt::decode::requests_done(plan, 0), 0u);
  EXPECT_EQ(nmt::decode::requests_done(plan, 2), 1u);
  EXPECT_EQ(nmt::decode::requests_done(plan, 4), 2u);
}

}  // namespace
