// Paragraphs into sentences (text/sentence_split.h): what `nmt translate` and the server
// translate one by one when a line or a request holds several.
#include <gtest/gtest.h>

#include <string>
#include <thread>
#include <vector>

#include "nmt/text/sentence_split.h"

namespace {

using nmt::text::SentenceSplitter;

std::vector<std::string> sentences(const std::string& text, const std::string& language = "en") {
  std::vector<std::string> out;
  for (const auto& span : SentenceSplitter(language).split(text)) out.push_back(text.substr(span.begin, span.end - span.begin));
  return out;
}

using Sentences = std::vector<std::string>;

TEST(SentenceSplit, AParagraphIsCutAfterEachSentenceWithoutTheSpacesAround) {
  EXPECT_EQ(sentences("  A man is riding a horse on the beach.  Two dogs are playing in the snow! Is a woman reading? "),
            (Sentences{"A man is riding a horse on the beach.", "Two dogs are playing in the snow!", "Is a woman reading?"}));
  EXPECT_EQ(sentences("One sentence without a full stop"), (Sentences{"One sentence without a full stop"}));
}

TEST(SentenceSplit, AbbreviationsNumbersAndQuotesEndNoSentence) {
  EXPECT_EQ(sentences("Mr. Smith met Dr. Jones on Jan. 5 in the U.S. office. They talked."),
            (Sentences{"Mr. Smith met Dr. Jones on Jan. 5 in the U.S. office.", "They talked."}));
  EXPECT_EQ(sentences("It costs 3.50 dollars, i.e. not much. It is 10.5 km away."),
            (Sentences{"It costs 3.50 dollars, i.e. not much.", "It is 10.5 km away."}));
  EXPECT_EQ(sentences("He said \"Stop!\" Then he left. (She stayed.) The end."),
            (Sentences{"He said \"Stop!\"", "Then he left.", "(She stayed.)", "The end."}));
  // The source language's own abbreviations: French "M." (Monsieur).
  EXPECT_EQ(sentences("M. Dupont est là. Il part.", "fr"), (Sentences{"M. Dupont est là.", "Il part."}));
}

TEST(SentenceSplit, ALineBreakEndsASentenceAndNoSpanHoldsOne) {
  const std::string text = "A title without a stop\nThe first paragraph. It goes on.\r\n\r\nThe second\n";
  EXPECT_EQ(sentences(text),
            (Sentences{"A title without a stop", "The first paragraph.", "It goes on.", "The second"}));
}

TEST(SentenceSplit, EmptyAndBlankTextHaveNoSentence) {
  EXPECT_TRUE(sentences("").empty());
  EXPECT_TRUE(sentences(" \t\n\n  ").empty());
}

TEST(SentenceSplit, AnyLanguageAndAnyBytesAreSplitWithoutFailing) {
  // A language ICU does not know: Unicode's rules alone (no abbreviations).
  EXPECT_EQ(sentences("One. Two.", "xx"), (Sentences{"One.", "Two."}));
  EXPECT_EQ(sentences("One. Two.", ""), (Sentences{"One.", "Two."}));
  EXPECT_EQ(sentences("他来了。她走了。"), (Sentences{"他来了。", "她走了。"}));
  // Invalid UTF-8: every span lies inside the text and the bytes are all accounted for.
  const std::string bad = "Caf\xc3 ok. \xff\xfe Next one.";
  const auto spans = SentenceSplitter("en").split(bad);
  ASSERT_FALSE(spans.empty());
  size_t end = 0;
  for (const auto& s : spans) {
    EXPECT_LE(end, s.begin);
    EXPECT_LT(s.begin, s.end);
    end = s.end;
  }
  EXPECT_LE(end, bad.size());
}

TEST(SentenceSplit, OneSplitterServesManyThreads) {
  const SentenceSplitter splitter("en");
  const std::string text = "Mr. Brown is here. The dog sleeps. Rain falls!";
  const auto expected = splitter.split(text);
  ASSERT_EQ(expected.size(), 3u);
  std::vector<std::thread> threads;
  std::vector<int> mismatches(4, 0);
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([&, t] {
      for (int i = 0; i < 300; ++i) mismatches[t] += splitter.split(text) == expected ? 0 : 1;
    });
  for (auto& th : threads) th.join();
  EXPECT_EQ(mismatches, std::vector<int>(4, 0));
}

}  // namespace
