// Word alignment from attention (nmt/text/word_alignment.h) and inline markup carried through
// translation (nmt/text/markup.h).
#include <algorithm>
#include <fstream>
#include <random>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "nmt/text/markup.h"
#include "nmt/text/word_alignment.h"
#include "nmt/util/error.h"
#include "test_support.h"

namespace nmt::text {
namespace {

std::vector<WordLink> links(std::string_view pharaoh_line) { return parse_pharaoh(pharaoh_line).sure; }

// The restored translation of `source_line`, given its translation and word alignment.
std::string translate(std::string_view source_line, std::string_view translation, std::string_view alignment) {
  return restore_markup(strip_markup(source_line), translation, links(alignment));
}

std::vector<WordLink> identity_alignment(int words) {
  std::vector<WordLink> identity;
  for (int i = 0; i < words; ++i) identity.push_back({i, i});
  return identity;
}

// ---------------------------------------------------------------------------------------
// WordAlign

TEST(WordAlign, PiecesOfAWordShareItsIndex) {
  EXPECT_EQ(word_of_piece({"▁A", "▁man", "▁rid", "ing", "▁a", "▁bi", "ke", "."}),
            (std::vector<int>{0, 1, 2, 2, 3, 4, 4, 4}));
}

TEST(WordAlign, FirstPieceBeginsAWordWithoutTheMarker) {
  EXPECT_EQ(word_of_piece({"Hello", "▁world"}), (std::vector<int>{0, 1}));
  EXPECT_EQ(word_of_piece({"<s>", "ab", "▁c"}), (std::vector<int>{-1, 0, 1}));
  // SentencePiece writes "▁" alone before a word whose first character has no "▁X" piece.
  EXPECT_EQ(word_of_piece({"▁a", "▁", "Ω", "x"}), (std::vector<int>{0, 1, 1, 1}));
}

TEST(WordAlign, SpecialPiecesBelongToNoWordWhileBytesAndUnknownsContinueOne) {
  EXPECT_EQ(word_of_piece({"▁caf", "<0xC3>", "<0xA9>", "▁ok", "<unk>", "</s>"}), (std::vector<int>{0, 0, 0, 1, 1, -1}));
  // Text that merely contains '<' is text.
  EXPECT_EQ(word_of_piece({"▁a", "▁<", "<=", "▁b", "<pad>"}), (std::vector<int>{0, 1, 1, 2, -1}));
}

// "red car" → "voiture rouge": pieces ▁red ▁car </s> and ▁voiture ▁rou ge (+ the EOS row).
TEST(WordAlign, SwappedAdjectiveGivesCrossingLinks) {
  std::vector<int> source = word_of_piece({"▁red", "▁car", "</s>"});
  std::vector<int> target = word_of_piece({"▁voiture", "▁rou", "ge"});
  std::vector<std::vector<float>> attention = {
      {0.1f, 0.8f, 0.1f},  // voiture → car
      {0.7f, 0.2f, 0.1f},  // rou → red
      {0.6f, 0.3f, 0.1f},  // ge → red
      {0.0f, 0.0f, 1.0f},  // </s> row: ignored
  };
  std::vector<WordLink> alignment = word_alignment(attention, source, target);
  EXPECT_EQ(pharaoh(alignment), "0-1 1-0");
}

TEST(WordAlign, MonotoneAttentionGivesTheDiagonal) {
  std::vector<int> source = word_of_piece({"▁a", "▁dog", "▁runs", "</s>"});
  std::vector<int> target = word_of_piece({"▁un", "▁chien", "▁court"});
  std::vector<std::vector<float>> attention = {
      {0.9f, 0.05f, 0.05f, 0.0f}, {0.1f, 0.8f, 0.1f, 0.0f}, {0.1f, 0.1f, 0.8f, 0.0f}, {0.2f, 0.2f, 0.2f, 0.4f}};
  EXPECT_EQ(pharaoh(word_alignment(attention, source, target)), "0-0 1-1 2-2");
}

TEST(WordAlign, EosColumnNeverWinsAndTiesGoToTheEarlierPiece) {
  std::vector<int> source = word_of_piece({"▁a", "▁b", "</s>"});
  std::vector<int> target = word_of_piece({"▁x", "▁y"});
  std::vector<std::vector<float>> attention = {
      {0.1f, 0.2f, 0.7f},   // the EOS column weighs most: the best real piece, b, wins
      {0.4f, 0.4f, 0.2f}};  // a tie: a
  EXPECT_EQ(pharaoh(word_alignment(attention, source, target)), "0-1 1-0");
  // A row shorter than the pieces (attention cut off) is read as far as it goes.
  EXPECT_EQ(pharaoh(word_alignment({{0.1f}, {}}, source, target)), "0-0");
}

TEST(WordAlign, PharaohTextRoundTrips) {
  std::vector<WordLink> alignment = {{0, 0}, {1, 2}, {2, 1}};
  EXPECT_EQ(pharaoh(alignment), "0-0 1-2 2-1");
  EXPECT_EQ(parse_pharaoh(pharaoh(alignment)).sure, alignment);
  EXPECT_EQ(pharaoh({}), "");
  EXPECT_TRUE(parse_pharaoh("  ").possible.empty());
}

TEST(WordAlign, GoldStandardHasSureAndPossibleLinks) {
  GoldAlignment gold = parse_pharaoh("2-1 0-0\t1?2 0-0");
  EXPECT_EQ(gold.sure, (std::vector<WordLink>{{0, 0}, {2, 1}}));
  EXPECT_EQ(gold.possible, (std::vector<WordLink>{{0, 0}, {1, 2}, {2, 1}}));  // sure ⊆ possible
}

TEST(WordAlign, MalformedLinkIsAnErrorNamingItAndTheLine) {
  for (std::string bad : {"1x2", "1-", "-1-2", "a-b", "1-2-3", "12345678901-0"}) {
    try {
      parse_pharaoh("0-0 " + bad, "gold.txt:7");
      ADD_FAILURE() << bad << " was accepted";
    } catch (const RuntimeError& e) {
      EXPECT_NE(std::string(e.what()).find("gold.txt:7"), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find("\"" + bad + "\""), std::string::npos) << e.what();
    }
  }
}

// Och & Ney (2003): AER = 1 - (|A∩S| + |A∩P|) / (|A| + |S|), worked by hand.
TEST(WordAlign, AlignmentErrorRateMatchesTheDefinition) {
  GoldAlignment gold = parse_pharaoh("0-0 1-1 2?2");
  AerCounts wrong_third;
  wrong_third.add_sentence(links("0-0 1-1 2-3"), gold);  // |A|=3 |S|=2 |A∩S|=2 |A∩P|=2
  EXPECT_DOUBLE_EQ(wrong_third.aer(), 1.0 - 4.0 / 5.0);
  EXPECT_DOUBLE_EQ(wrong_third.precision(), 2.0 / 3.0);
  EXPECT_DOUBLE_EQ(wrong_third.recall(), 1.0);
  AerCounts possible_hit;
  // A possible link costs nothing; a duplicate link counts once.
  possible_hit.add_sentence({{0, 0}, {1, 1}, {2, 2}, {1, 1}}, gold);
  EXPECT_DOUBLE_EQ(possible_hit.aer(), 0.0);
  AerCounts none;
  none.add_sentence({}, gold);
  EXPECT_DOUBLE_EQ(none.aer(), 1.0);
  EXPECT_DOUBLE_EQ(none.recall(), 0.0);
}

TEST(WordAlign, CorpusErrorRateSumsCountsRatherThanAveragingSentences) {
  AerCounts corpus;
  corpus.add_sentence(links("0-1"), parse_pharaoh("0-0"));  // AER 1 on its own
  corpus.add_sentence(links("0-0 1-1 2-2 3-3 4-4 5-5 6-6 7-7 8-8"),
                      parse_pharaoh("0-0 1-1 2-2 3-3 4-4 5-5 6-6 7-7 8-8"));  // AER 0
  EXPECT_DOUBLE_EQ(corpus.aer(), 1.0 - 18.0 / 20.0);                          // not (1 + 0) / 2
  EXPECT_EQ(corpus.hypothesis, 10u);
  EXPECT_EQ(corpus.sure, 10u);
}

// ---------------------------------------------------------------------------------------
// Markup: taking tags out

TEST(Markup, StripGivesPlainTextAndTheWordsEachTagCovers) {
  MarkedLine line = strip_markup("Click <b>Save</b> to keep <i>your</i> file &amp; exit.<x id=\"1\"/>");
  EXPECT_EQ(line.text, "Click Save to keep your file & exit.");
  EXPECT_EQ(line.word_count, 8);
  ASSERT_EQ(line.elements.size(), 3u);
  EXPECT_EQ(line.elements[0].open, "<b>");
  EXPECT_EQ(line.elements[0].close, "</b>");
  EXPECT_EQ(line.elements[0].first_word, 1);
  EXPECT_EQ(line.elements[0].end_word, 2);
  EXPECT_EQ(line.elements[1].first_word, 4);
  EXPECT_EQ(line.elements[2].open, "<x id=\"1\"/>");
  EXPECT_FALSE(line.elements[2].paired());
  EXPECT_EQ(line.elements[2].first_word, 8);  // an insertion point at the end
  EXPECT_TRUE(line.warnings.empty());
}

TEST(Markup, WhitespaceIsCollapsedAndTagsKeepTheirAttributesVerbatim) {
  MarkedLine line = strip_markup("  A \t<a href=\"https://x.org/?a=1&amp;b=2\" title='x > y'>  big </a>   dog  ");
  EXPECT_EQ(line.text, "A big dog");
  ASSERT_EQ(line.elements.size(), 1u);
  EXPECT_EQ(line.elements[0].open, "<a href=\"https://x.org/?a=1&amp;b=2\" title='x > y'>");
  EXPECT_EQ(line.elements[0].first_word, 1);
  EXPECT_EQ(line.elements[0].end_word, 2);
}

TEST(Markup, NestedTagsRecordTheirParent) {
  MarkedLine line = strip_markup("<b>the <i>red</i> car</b> <u><br></u>");
  ASSERT_EQ(line.elements.size(), 4u);
  EXPECT_EQ(line.elements[1].parent, 0);                              // <i> inside <b>
  EXPECT_EQ(line.elements[2].parent, -1);                             // <u>
  EXPECT_EQ(line.elements[3].parent, 2);                              // <br> inside <u>
  EXPECT_EQ(line.elements[2].first_word, line.elements[2].end_word);  // <u> covers no word
}

TEST(Markup, MidWordTagCoversTheWholeWord) {
  MarkedLine line = strip_markup("This is un<b>believ</b>able");
  EXPECT_EQ(line.text, "This is unbelievable");
  ASSERT_EQ(line.elements.size(), 1u);
  EXPECT_EQ(line.elements[0].first_word, 2);
  EXPECT_EQ(line.elements[0].end_word, 3);
  EXPECT_EQ(translate("This is un<b>believ</b>able", "C'est incroyable", "0-0 1-0 2-1"), "C'est <b>incroyable</b>");
}

TEST(Markup, EntitiesAreDecodedForTheModelAndEscapedInTheOutput) {
  MarkedLine line =
      strip_markup("Tom &amp; Jerry &lt;3 &quot;hi&quot; &apos;&#233;t&#xE9;&apos; AT&T &#0; &#xD800; &bogus;");
  EXPECT_EQ(line.text, "Tom & Jerry <3 \"hi\" 'été' AT&T &#0; &#xD800; &bogus;");
  EXPECT_TRUE(line.elements.empty());
  EXPECT_EQ(restore_markup(line, line.text, identity_alignment(line.word_count)),
            "Tom &amp; Jerry &lt;3 \"hi\" 'été' AT&amp;T &amp;#0; &amp;#xD800; &amp;bogus;");
}

TEST(Markup, NoBreakSpaceSeparatesWordsLikeTheModelsSpace) {
  MarkedLine line = strip_markup("10&nbsp;km <b>to\u00A0go</b>");
  EXPECT_EQ(line.text, "10 km to go");
  EXPECT_EQ(line.word_count, 4);
  EXPECT_EQ(line.elements[0].first_word, 2);
  EXPECT_EQ(line.elements[0].end_word, 4);
}

TEST(Markup, LessThanThatStartsNoTagIsText) {
  for (std::string text : {"a < b", "3<5 and 6>4", "x <b y", "<!-- open comment", "</ b>", "<b =x>"}) {
    MarkedLine line = strip_markup(text);
    EXPECT_TRUE(line.elements.empty()) << text;
    EXPECT_TRUE(line.warnings.empty()) << text;
  }
  EXPECT_EQ(strip_markup("a < b").text, "a < b");
  EXPECT_EQ(translate("if a < b", "si a < b", "0-0 1-1 2-2 3-3"), "si a &lt; b");
}

TEST(Markup, CommentsAndVoidElementsStandAlone) {
  MarkedLine line = strip_markup("<!-- note: <b> --> A<br>B <img src=\"x.png\" alt=\"\"> C<hr/>");
  EXPECT_EQ(line.text, "A B C");  // <br> breaks the line: it separates words, as un<b>believ</b>able's tags do not
  ASSERT_EQ(line.elements.size(), 4u);
  EXPECT_EQ(line.elements[0].open, "<!-- note: <b> -->");
  for (const MarkupElement& element : line.elements) EXPECT_FALSE(element.paired()) << element.open;
  EXPECT_TRUE(line.warnings.empty());
}

// ---------------------------------------------------------------------------------------
// Markup: putting tags back

TEST(Markup, BoldWordStaysAroundItsTranslation) {
  EXPECT_EQ(translate("Click <b>Save</b> to exit.", "Cliquez sur Enregistrer pour quitter.", "0-0 0-1 1-2 2-3 3-4"),
            "Cliquez sur <b>Enregistrer</b> pour quitter.");
}

TEST(Markup, LineWithoutMarkupComesBackUnchangedButEscaped) {
  std::string line = "A man in a blue shirt is riding a bike.";
  EXPECT_EQ(restore_markup(strip_markup(line), line, identity_alignment(10)), line);
  EXPECT_EQ(translate("Fish and chips", "Fish & chips", "0-0 1-1 2-2"), "Fish &amp; chips");
}

TEST(Markup, SwappedAdjectivesTakeTheirTagsAlong) {
  EXPECT_EQ(translate("A <b>red</b> <i>car</i> .", "Une voiture rouge .", "0-0 1-2 2-1 3-3"),
            "Une <i>voiture</i> <b>rouge</b> .");
}

TEST(Markup, TagAroundSeveralWordsWrapsTheSmallestRunCoveringTheirTranslations) {
  EXPECT_EQ(translate("a <b>big dog</b> sleeps", "un grand chien dort", "0-0 1-1 2-2 3-3"),
            "un <b>grand chien</b> dort");
  // "big" and "black" become words 1 and 3: the run between them takes "chien" along.
  EXPECT_EQ(translate("a <b>big black</b> dog sleeps", "un grand chien noir dort", "0-0 1-1 2-3 3-2 4-4"),
            "un <b>grand chien noir</b> dort");
}

TEST(Markup, NestedTagsStayNestedWhenTheTranslationReorders) {
  EXPECT_EQ(translate("<b>the <i>red</i> car</b> is here", "la voiture rouge est ici", "0-0 1-2 2-1 3-3 4-4"),
            "<b>la voiture <i>rouge</i></b> est ici");
}

// "has seen" and "the film" are siblings; German puts the film inside "hat ... gesehen", so the
// naive ranges nest <i> inside <b>, and would cross for "A B / C D" → "a c b d".
TEST(Markup, SiblingTagsWhoseTranslationsInterleaveAreSeparated) {
  std::string german =
      translate("He <b>has seen</b> <i>the film</i>", "Er hat den Film gesehen", "0-0 1-1 2-4 3-2 4-3");
  EXPECT_EQ(german, "Er <b>hat</b> <i>den Film</i> gesehen");
  EXPECT_EQ(translate("<b>A B</b> <i>C D</i>", "a c b d", "0-0 1-2 2-1 3-3"), "<b>a c b</b> <i>d</i>");
  EXPECT_EQ(translate("<b>A</b> <i>B</i>", "ab", "0-0 1-0"), "<b>ab</b><i></i>");  // one word for both
}

TEST(Markup, TagWhoseWordsAreUnalignedBecomesAnEmptyPairWhereTheyWere) {
  EXPECT_EQ(translate("the <b>big</b> dog", "le chien", "0-0 2-1"), "le <b></b>chien");
  EXPECT_EQ(translate("the dog <b>too</b>", "le chien", "0-0 1-1"), "le chien<b></b>");
}

TEST(Markup, StandaloneTagsGoBeforeTheWordTheyPreceded) {
  EXPECT_EQ(translate("a <x id=\"1\"/>red car<br>", "une voiture rouge", "0-0 1-2 2-1"),
            "une voiture <x id=\"1\"/>rouge<br>");
  EXPECT_EQ(translate("<!-- c --> Hi", "Salut", "0-0"), "<!-- c -->Salut");
}

TEST(Markup, ChildMovedOutsideItsParentIsClampedBackIn) {
  // <i>'s "dog" is unaligned, and so is "runs": its insertion point, before the translation of
  // "fast", lies outside <b>'s translation ("chien"), so it moves to <b>'s nearer edge.
  EXPECT_EQ(translate("<b>a <i>dog</i></b> runs fast", "chien court vite", "0-0 3-2"),
            "<b>chien<i></i></b> court vite");
}

TEST(Markup, EmptyTranslationKeepsEveryTag) {
  std::string source = "<b>Save</b> <i>your</i> file<x/>";
  std::string out = translate(source, "", "0-0 1-0");  // links to missing words are ignored
  EXPECT_EQ(out, "<b></b><i></i><x/>");
  EXPECT_TRUE(check_markup(source, out).ok());
}

// ---------------------------------------------------------------------------------------
// Markup: unbalanced lines

TEST(Markup, ClosingTagWithNoOpenOneIsKeptWithAWarning) {
  MarkedLine line = strip_markup("a </i> b");
  EXPECT_EQ(line.warnings, std::vector<std::string>{"</i> closes no open tag"});
  ASSERT_EQ(line.elements.size(), 1u);
  EXPECT_FALSE(line.elements[0].paired());
  EXPECT_EQ(translate("a </i> b", "A B", "0-0 1-1"), "A </i>B");
}

TEST(Markup, UnclosedTagIsKeptWithAWarning) {
  MarkedLine line = strip_markup("<b>Save <i>now</i>");
  EXPECT_EQ(line.warnings, std::vector<std::string>{"<b> is never closed"});
  ASSERT_EQ(line.elements.size(), 2u);
  EXPECT_FALSE(line.elements[0].paired());
  EXPECT_EQ(line.elements[1].parent, -1);  // what the unclosed <b> held belongs to the line
  EXPECT_EQ(translate("<b>Save <i>now</i>", "maintenant Enregistrer", "0-1 1-0"), "<i>maintenant</i> <b>Enregistrer");
}

TEST(Markup, CrossedTagsKeepEveryTagWithWarnings) {
  std::string source = "<b>a <i>b</b> c</i>";
  MarkedLine line = strip_markup(source);
  EXPECT_EQ(line.warnings, (std::vector<std::string>{"<i> is not closed before </b>", "</i> closes no open tag"}));
  ASSERT_EQ(line.elements.size(), 3u);
  EXPECT_TRUE(line.elements[0].paired());
  std::string out = restore_markup(line, "A B C", identity_alignment(3));
  EXPECT_EQ(out, "<b>A <i>B</b> C</i>");
  MarkupCheck check = check_markup(source, out);
  EXPECT_TRUE(check.ok());
  EXPECT_EQ(check.output_warnings.size(), 2u);
}

// ---------------------------------------------------------------------------------------
// Markup: the checker

TEST(Markup, CheckFindsMissingAndExtraTagsAndBadNesting) {
  MarkupCheck good = check_markup("<b>a</b> <i>b</i>", "<i>B</i> <b>A</b>");
  EXPECT_TRUE(good.ok());
  EXPECT_TRUE(good.same_nesting);

  MarkupCheck lost = check_markup("<b>a</b> <x/>", "<b>A</b> <u>B</u>");
  EXPECT_FALSE(lost.same_tags);
  EXPECT_EQ(lost.missing, std::vector<std::string>{"<x/>"});
  EXPECT_EQ(lost.extra, (std::vector<std::string>{"</u>", "<u>"}));

  MarkupCheck crossed = check_markup("<b>a</b> <i>b</i>", "<b>A <i>B</b></i>");
  EXPECT_TRUE(crossed.same_tags);
  EXPECT_FALSE(crossed.well_formed);
  EXPECT_FALSE(crossed.ok());

  MarkupCheck renested = check_markup("<b>a</b> <i>b</i>", "<b>A <i>B</i></b>");
  EXPECT_TRUE(renested.ok());
  EXPECT_FALSE(renested.same_nesting);

  EXPECT_TRUE(check_markup("<b>a", "A <b>").ok());  // as unbalanced as the source: no worse
}

// Random tag trees over random sentences, random translations and random alignments: every tag
// comes back once, nested as in the source, and the text is the translation.
class RandomMarkup {
 public:
  explicit RandomMarkup(unsigned seed) : rng_(seed) {}

  std::string source_line(bool unbalanced) {
    std::string line;
    words_ = 0;
    for (int items = 1 + pick(5); items > 0; --items) add_item(line, 0);
    if (unbalanced) add_stray_tags(line);
    return line;
  }
  std::string translation(int words) {
    std::string text;
    for (int i = 0; i < words; ++i) text += (i ? " t" : "t") + std::to_string(i) + (pick(8) == 0 ? "&<" : "");
    return text;
  }
  // Mostly one or two links per source word, some words unaligned, a few links out of range.
  std::vector<WordLink> alignment(int source_words, int target_words) {
    std::vector<WordLink> links;
    if (target_words == 0) return links;
    for (int s = 0; s < source_words; ++s) {
      for (int n = pick(5) == 0 ? 0 : 1 + pick(2); n > 0; --n) links.push_back({s, pick(target_words)});
    }
    if (pick(4) == 0) links.push_back({pick(source_words + 2), target_words + pick(2)});
    return links;
  }
  int pick(int n) { return std::uniform_int_distribution<int>(0, n - 1)(rng_); }

 private:
  void add_content(std::string& line, int depth) {
    int items = pick(4);
    for (int i = 0; i < items; ++i) add_item(line, depth);
  }
  void add_item(std::string& line, int depth) {
    static const std::vector<std::pair<std::string, std::string>> kPairs = {
        {"<b>", "</b>"}, {"<i>", "</i>"}, {"<u>", "</u>"}, {"<a href=\"https://e.org/?q=1&amp;r=2\">", "</a>"}};
    static const std::vector<std::string> kStandalone = {"<x id=\"1\"/>", "<x id=\"2\"/>", "<br>", "<!-- c -->"};
    switch (pick(depth < 3 ? 5 : 3)) {
      case 0:
      case 1: line += (pick(3) ? " w" : "w") + std::to_string(words_++) + (pick(3) ? " " : ""); break;
      case 2: line += kStandalone[pick(kStandalone.size())]; break;
      default: {
        const auto& [open, close] = kPairs[pick(kPairs.size())];
        line += open;
        add_content(line, depth + 1);
        line += close;
      }
    }
  }
  void add_stray_tags(std::string& line) {
    static const std::vector<std::string> kStray = {"</i>", "<u>", "</b>", "<b>"};
    for (int i = 0, n = 1 + pick(2); i < n; ++i) {
      size_t at = pick(line.size() + 1);
      while (at < line.size() && at > 0 && line[at - 1] != '>' && line[at - 1] != ' ') ++at;  // not inside a tag
      line.insert(at, kStray[pick(kStray.size())]);
    }
  }

  std::mt19937 rng_;
  int words_ = 0;
};

TEST(Markup, RandomTagStructuresAndAlignmentsAlwaysGiveEveryTagWellNested) {
  RandomMarkup random(20240607);
  for (int trial = 0; trial < 600; ++trial) {
    bool unbalanced = trial % 4 == 3;
    std::string source = random.source_line(unbalanced);
    MarkedLine line = strip_markup(source);
    if (!unbalanced) {
      ASSERT_TRUE(line.warnings.empty()) << source;
    }
    int target_words = std::max(0, line.word_count + random.pick(5) - 2);
    std::string translation = random.translation(target_words);
    std::string out = restore_markup(line, translation, random.alignment(line.word_count, target_words));
    MarkupCheck check = check_markup(source, out);
    ASSERT_TRUE(check.same_tags) << source << "\n -> " << out;
    ASSERT_TRUE(check.well_formed) << source << "\n -> " << out;
    if (!unbalanced) {
      ASSERT_TRUE(check.same_nesting) << source << "\n -> " << out;
    }
    ASSERT_EQ(strip_markup(out).text, translation) << source << "\n -> " << out;
  }
}

// data/fixtures/markup.en, the markup evaluation set: each line survives a word-for-word
// "translation", and only its deliberately unbalanced lines warn.
TEST(Markup, EvaluationSetRoundTripsWithTheIdentityAlignment) {
  std::ifstream in(nmt::test::fixture("markup.en"));
  ASSERT_TRUE(in) << nmt::test::fixture("markup.en");
  int lines = 0, unbalanced = 0;
  for (std::string source; std::getline(in, source); ++lines) {
    MarkedLine line = strip_markup(source);
    unbalanced += !line.warnings.empty();
    std::string out = restore_markup(line, line.text, identity_alignment(line.word_count));
    MarkupCheck check = check_markup(source, out);
    EXPECT_TRUE(check.ok()) << source << "\n -> " << out;
    EXPECT_TRUE(check.same_nesting) << source << "\n -> " << out;
    EXPECT_EQ(strip_markup(out).text, line.text);
  }
  EXPECT_GE(lines, 40);
  EXPECT_EQ(unbalanced, 4);
}

}  // namespace
}  // namespace nmt::text
