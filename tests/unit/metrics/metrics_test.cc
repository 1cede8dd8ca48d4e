// BLEU / chrF / d2l against sacreBLEU 2.6.0's outputs (shared/bleu-vectors), plus unit
// tests of the 13a tokenizer and the BLEU arithmetic corner cases.
#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <set>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "nmt/metrics/bleu.h"
#include "nmt/metrics/chrf.h"
#include "nmt/metrics/tokenizer.h"
#include "nmt/text/unicode.h"
#include "nmt/util/io.h"
#include "test_support.h"

namespace nmt::metrics {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

constexpr double kTolerance = 1e-9;

// ---------------------------------------------------------------------------------------
// Tokenizer

TEST(Tokenizer13a, NumbersStayWholeBetweenDigits) {
  EXPECT_EQ(tokenize_13a("3,5 kg"), "3,5 kg");
  EXPECT_EQ(tokenize_13a("1.000 personnes"), "1.000 personnes");
  EXPECT_EQ(tokenize_13a("en 2007.."), "en 2007 . .");
  EXPECT_EQ(tokenize_13a("x,5"), "x , 5");
  EXPECT_EQ(tokenize_13a("5,x"), "5 , x");
  EXPECT_EQ(tokenize_13a("2-3 fois"), "2 - 3 fois");
  EXPECT_EQ(tokenize_13a("12:45"), "12 : 45");
  EXPECT_EQ(tokenize_13a("fin."), "fin .");
  EXPECT_EQ(tokenize_13a("a..."), "a . . .");
}

TEST(Tokenizer13a, ApostrophesAndHyphensAreNotSplit) {
  EXPECT_EQ(tokenize_13a("l'homme"), "l'homme");
  EXPECT_EQ(tokenize_13a("arrière-plan"), "arrière-plan");
  // Non-ASCII punctuation stays attached to the word.
  EXPECT_EQ(tokenize_13a("l\u2019homme \u00ABoui\u00BB\u2026"), "l\u2019homme \u00ABoui\u00BB\u2026");
}

TEST(Tokenizer13a, EntitiesAndSymbols) {
  EXPECT_EQ(tokenize_13a("&quot;bonjour&quot;"), "\" bonjour \"");
  EXPECT_EQ(tokenize_13a("A &amp; B &lt;i&gt;"), "A & B < i >");
  EXPECT_EQ(tokenize_13a("&amp;quot;"), "& quot ;");  // unescaping is one pass, in order
  EXPECT_EQ(tokenize_13a("a<skipped>b"), "ab");
  EXPECT_EQ(tokenize_13a("(oui)!? [x] {y} $5 @z #1 a/b"), "( oui ) ! ? [ x ] { y } $ 5 @ z # 1 a / b");
  EXPECT_EQ(tokenize_13a("coupé-\ncollé\nici"), "coupécollé ici");
}

// mteval-v13a as sacreBLEU writes it: the four regexes applied one after the other, spaces
// padded like any other symbol, then str.split(). tokenize_13a takes shortcuts (single spaces,
// rules skipped when their characters are absent); on random lines built from the characters
// the rules look at, both must give the same tokens.
std::string literal_13a(const std::string& line) {
  std::string text = detail::split_mteval_periods_and_dashes(detail::pad_mteval_symbols(" " + line + " "));
  std::string joined;
  for (const std::string& word : text::python_split(text)) joined += (joined.empty() ? "" : " ") + word;
  return joined;
}

TEST(Tokenizer13a, SameTokensAsTheRegexesAppliedLiterally) {
  const std::vector<std::string> pieces = {"a", "Z", "7", "0", ".", ",", "-", " ", "  ", "\t", "'", "(", "$",
                                           ":", "/", "\u00E9", "\u00A0", "\u2026", "..", "-,", "5.", ",9"};
  uint64_t state = 12345;
  auto next = [&state] { return (state = state * 6364136223846793005ULL + 1442695040888963407ULL) >> 33; };
  for (int trial = 0; trial < 20000; ++trial) {
    std::string line;
    for (uint64_t n = next() % 12; n > 0; --n) line += pieces[next() % pieces.size()];
    ASSERT_EQ(tokenize_13a(line), literal_13a(line)) << "line: '" << line << "'";
  }
}

TEST(Tokenizer13a, PythonWhitespace) {
  EXPECT_EQ(tokenize_13a("  a\tb  "), "a b");
  EXPECT_EQ(tokenize_13a("Bonjour\u00A0!"), "Bonjour !");
  EXPECT_EQ(tokenize_13a("Quoi\u202F?"), "Quoi ?");
  EXPECT_EQ(tokenize_13a("a\u200Bb"), "a\u200Bb");  // zero-width space is not whitespace
  EXPECT_EQ(tokenize_13a(""), "");
  EXPECT_EQ(tokenize_13a(" \u3000 "), "");
}

TEST(Tokenizer, NamesAndErrors) {
  EXPECT_EQ(parse_tokenizer("13a"), TokenizerKind::k13a);
  EXPECT_EQ(parse_tokenizer("none"), TokenizerKind::kNone);
  EXPECT_EQ(parse_tokenizer("intl"), TokenizerKind::kIntl);
  EXPECT_EQ(parse_tokenizer("char"), TokenizerKind::kChar);
  EXPECT_EQ(parse_tokenizer("zh"), TokenizerKind::kZh);
  EXPECT_THROW(parse_tokenizer("ja-mecab"), UsageError);  // needs MeCab
  EXPECT_EQ(tokenize(TokenizerKind::kNone, "a,b ."), "a,b .");
  EXPECT_THROW(tokenize_13a("bad \xC3("), text::Utf8Error);
}

// ---------------------------------------------------------------------------------------
// BLEU arithmetic

TEST(Bleu, IdenticalIsOneHundredPlusRounding) {
  BleuScore s = BleuScorer().corpus_score({"le chat est sur le tapis ."}, {{"le chat est sur le tapis ."}});
  EXPECT_EQ(s.score, 100.00000000000004);
  EXPECT_EQ(s.bp, 1.0);
  EXPECT_EQ(s.signature, "nrefs:1|case:mixed|eff:no|tok:13a|smooth:exp|version:2.6.0");
}

TEST(Bleu, NoMatchGivesZeroPrecisions) {
  for (const char* smooth : {"exp", "floor", "add-k", "none"}) {
    BleuOptions o;
    o.smooth_method = parse_smooth_method(smooth);
    BleuScore s = BleuScorer(o).corpus_score({"a b c d e"}, {{"v w x y z"}});
    EXPECT_EQ(s.score, 0.0) << smooth;
    EXPECT_EQ(s.precisions, std::vector<double>(4, 0.0)) << smooth;
    EXPECT_EQ(s.totals, (std::vector<int64_t>{5, 4, 3, 2}));
  }
}

TEST(Bleu, EmptySegments) {
  BleuScore empty_both = sentence_bleu("", {""});
  EXPECT_EQ(empty_both.score, 0.0);
  EXPECT_EQ(empty_both.bp, 1.0);
  BleuScore empty_hyp = sentence_bleu("", {"un chat"});
  EXPECT_EQ(empty_hyp.score, 0.0);
  EXPECT_EQ(empty_hyp.bp, 0.0);
  EXPECT_EQ(empty_hyp.ref_len, 2);
}

TEST(Bleu, EffectiveOrderOnlyDropsMissingOrders) {
  // Two tokens: orders 3 and 4 have no n-grams and are dropped (sentence BLEU only).
  BleuScore s = sentence_bleu("un chat", {"un chat"});
  EXPECT_NEAR(s.score, 100.0, 1e-9);
  EXPECT_EQ(s.signature, "nrefs:1|case:mixed|eff:yes|tok:13a|smooth:exp|version:2.6.0");
  BleuScore corpus = BleuScorer().corpus_score({"un chat"}, {{"un chat"}});
  EXPECT_EQ(corpus.score, 0.0);  // eff:no: order 3 has precision 0 -> log floored
}

TEST(Bleu, MultiReferenceClippingAndClosestLength) {
  BleuScorer bleu;
  BleuStats s = bleu.segment_stats("le le le chat", {"le chat", "le le chat noir"});
  EXPECT_EQ(s.counts[0], 3);  // "le" clipped at its max count over the references (2) + "chat"
  EXPECT_EQ(s.ref_len, 4);
  // Tie between lengths 2 and 4 for a 3-token hypothesis: the shorter wins.
  EXPECT_EQ(bleu.segment_stats("a b c", {"a b c d", "a b"}).ref_len, 2);
  EXPECT_EQ(bleu.segment_stats("a b c", {"a b", "a b c d"}).ref_len, 2);
  // An empty reference is a reference of length 0.
  EXPECT_EQ(bleu.segment_stats("", {"a b", ""}).ref_len, 0);
}

TEST(Bleu, SignaturesOfVariants) {
  BleuOptions o;
  o.smooth_method = SmoothMethod::kFloor;
  EXPECT_EQ(BleuScorer(o).signature(2), "nrefs:2|case:mixed|eff:no|tok:13a|smooth:floor[0.10]|version:2.6.0");
  o.smooth_method = SmoothMethod::kAddK;
  o.lowercase = true;
  o.tokenize = TokenizerKind::kNone;
  EXPECT_EQ(BleuScorer(o).signature(1), "nrefs:1|case:lc|eff:no|tok:none|smooth:add-k[1.00]|version:2.6.0");
  o.smooth_value = 0.5;
  EXPECT_EQ(BleuScorer(o).signature(1), "nrefs:1|case:lc|eff:no|tok:none|smooth:add-k[0.50]|version:2.6.0");
  o.smooth_method = SmoothMethod::kNone;
  EXPECT_EQ(BleuScorer(o).signature(1), "nrefs:1|case:lc|eff:no|tok:none|smooth:none|version:2.6.0");
  EXPECT_THROW(parse_smooth_method("laplace"), UsageError);
}

TEST(Bleu, LowercaseIsUnicode) {
  BleuOptions o;
  o.lowercase = true;
  EXPECT_NEAR(BleuScorer(o).corpus_score({"ÉTÉ À ÇA ÊTRE ÈRE"}, {{"été à ça être ère"}}).score, 100.0, 1e-9);
}

TEST(Bleu, LengthMismatchIsAnError) {
  EXPECT_THROW(BleuScorer().corpus_score({"a", "b"}, {{"a"}}), UsageError);
  EXPECT_THROW(ChrfScorer().corpus_score({"a"}, {{"a", "b"}}), UsageError);
}

TEST(Chrf, Basics) {
  ChrfScorer chrf;
  EXPECT_EQ(chrf.sentence_score("", {""}).score, 0.0);
  EXPECT_EQ(chrf.sentence_score("abc", {"abc"}).score, 100.0);
  EXPECT_EQ(chrf.signature(1), "nrefs:1|case:mixed|eff:yes|nc:6|nw:0|space:no|version:2.6.0");
  EXPECT_EQ(chrf.name(), "chrF2");
  // Whitespace (including NBSP) is removed before extracting character n-grams.
  EXPECT_EQ(chrf.sentence_score("a b\u00A0c", {"abc"}).score, 100.0);
  // NFD is not NFC: code points, no normalisation.
  EXPECT_LT(chrf.sentence_score("e\u0301t\u00E9", {"\u00E9t\u00E9"}).score, 100.0);
  ChrfOptions pp;
  pp.word_order = 2;
  EXPECT_EQ(ChrfScorer(pp).name(), "chrF2++");
}

TEST(Chrf, MultiReferencePicksBestSentence) {
  ChrfScorer chrf;
  double with_best = chrf.sentence_score("un chat noir", {"un chien blanc", "un chat noir"}).score;
  EXPECT_EQ(with_best, 100.0);
}

TEST(D2lBleu, BookDefinition) {
  EXPECT_EQ(d2l_bleu("", "a b", 2), 0.0);
  EXPECT_EQ(d2l_bleu("a b", "", 2), 0.0);
  EXPECT_EQ(d2l_bleu("a b c", "a b c", 4), 1.0);  // order 4 skipped: prediction too short
  // BP exp(1 - 4/2), unigram 2/2, bigram 1/1.
  EXPECT_DOUBLE_EQ(d2l_bleu("a b", "a b c d", 2), std::exp(-1.0));
}

// ---------------------------------------------------------------------------------------
// sacreBLEU vectors

// A file's segments as the sacreBLEU CLI sees them: split on '\n', each line rstripped.
std::vector<std::string> read_segments(const std::string& path) {
  std::vector<std::string> lines = read_lines(path);
  for (size_t i = 0; i < lines.size(); ++i) {
    if (auto problem = text::find_utf8_error(lines[i]))
      throw RuntimeError(fmt::format("{}:{}: invalid UTF-8 at byte {}", path, i + 1, problem->offset));
    lines[i] = std::string(text::python_rstrip(lines[i]));
  }
  return lines;
}

struct Mismatches {
  std::string case_name;
  std::vector<std::string> items;
  size_t compared = 0;
  size_t bit_exact = 0;
  double max_diff = 0.0;
  std::string max_diff_at;
};

// Compares `actual` against every value of `expected`, recursively. `path` names the key;
// arrays of per-line values (`per_line`) are reported with 1-based line numbers.
void compare(const json& expected, const json& actual, const std::string& path, bool per_line, Mismatches& m) {
  if (expected.is_object()) {
    for (auto it = expected.begin(); it != expected.end(); ++it) {
      if (it.key() == "stats_doc") continue;  // documentation string, not a value
      std::string sub = path + "." + it.key();
      if (!actual.is_object() || !actual.contains(it.key())) {
        m.items.push_back(fmt::format("{} key {}: not computed", m.case_name, sub));
        continue;
      }
      bool lines = it.key() == "scores" || it.key() == "stats";
      compare(it.value(), actual.at(it.key()), sub, lines, m);
    }
  } else if (expected.is_array()) {
    if (!actual.is_array() || actual.size() != expected.size()) {
      m.items.push_back(fmt::format("{} key {}: expected {} elements, got {}", m.case_name, path, expected.size(),
                                    actual.is_array() ? actual.size() : 0));
      return;
    }
    for (size_t i = 0; i < expected.size(); ++i) {
      std::string sub = per_line ? fmt::format("{} line {}", path, i + 1) : fmt::format("{}[{}]", path, i);
      compare(expected[i], actual[i], sub, false, m);
    }
  } else if (expected.is_number()) {
    ++m.compared;
    if (!actual.is_number()) {
      m.items.push_back(fmt::format("{} key {}: expected {}, got {}", m.case_name, path, expected.dump(), actual.dump()));
      return;
    }
    double e = expected.get<double>(), a = actual.get<double>();
    double diff = std::fabs(e - a);
    if (e == a) ++m.bit_exact;
    if (diff > m.max_diff) {
      m.max_diff = diff;
      m.max_diff_at = path;
    }
    if (!(diff <= kTolerance))
      m.items.push_back(fmt::format("{} key {}: expected {} got {} (diff {:g})", m.case_name, path,
                                    expected.dump(), actual.dump(), diff));
  } else {
    ++m.compared;
    if (expected != actual) {
      m.items.push_back(fmt::format("{} key {}: expected {} got {}", m.case_name, path, expected.dump(), actual.dump()));
    } else {
      ++m.bit_exact;
    }
  }
}

std::vector<fs::path> vector_cases() {
  std::vector<fs::path> cases;
  for (const auto& entry : fs::directory_iterator(test::bleu_vectors_dir()))
    if (entry.is_directory() && fs::exists(entry.path() / "expected.json")) cases.push_back(entry.path());
  std::sort(cases.begin(), cases.end());
  return cases;
}

json corpus_bleu_json(const BleuScore& s) {
  json j = s;
  j["text_line"] = s.text_line(2);
  return j;
}

// Computes everything expected.json describes and compares it key by key.
Mismatches check_case(const fs::path& dir) {
  Mismatches m;
  m.case_name = dir.filename().string();
  std::ifstream in(dir / "expected.json");
  json expected = json::parse(in);

  std::string hyp_file = expected.value("hyp_file", std::string("hyp.txt"));
  std::vector<std::string> ref_files = expected.value("ref_files", std::vector<std::string>{"ref.txt"});
  std::vector<std::string> hyps = read_segments((dir / hyp_file).string());
  std::vector<std::vector<std::string>> refs;
  for (const std::string& f : ref_files) refs.push_back(read_segments((dir / f).string()));
  if (expected.contains("n_lines") && hyps.size() != expected["n_lines"].get<size_t>())
    m.items.push_back(fmt::format("{}: read {} lines, expected.json says {}", m.case_name, hyps.size(),
                                  expected["n_lines"].get<size_t>()));

  const std::set<std::string> metadata = {"case",    "set",       "description", "source",  "seed",
                                          "sacrebleu_version", "n_lines", "ref_files", "hyp_file", "line_reading"};
  for (auto it = expected.begin(); it != expected.end(); ++it) {
    const std::string& key = it.key();
    if (metadata.count(key)) continue;
    json actual;
    BleuOptions o;
    if (key == "corpus_bleu") {
    } else if (key == "corpus_bleu_tok_none") {
      o.tokenize = TokenizerKind::kNone;
    } else if (key == "corpus_bleu_lowercase") {
      o.lowercase = true;
    } else if (key == "corpus_bleu_smooth_floor") {
      o.smooth_method = SmoothMethod::kFloor;
    } else if (key == "corpus_bleu_smooth_add_k") {
      o.smooth_method = SmoothMethod::kAddK;
    } else if (key == "corpus_bleu_smooth_none") {
      o.smooth_method = SmoothMethod::kNone;
    }
    std::vector<std::string> line_refs(refs.size());
    const auto refs_of = [&](size_t i) {
      for (size_t k = 0; k < refs.size(); ++k) line_refs[k] = refs[k][i];
      return line_refs;
    };
    if (key.rfind("corpus_bleu", 0) == 0) {
      actual = corpus_bleu_json(BleuScorer(o).corpus_score(hyps, refs));
    } else if (key == "sentence_bleu") {
      o.effective_order = true;
      BleuScorer bleu(o);
      actual["signature"] = bleu.signature(refs.size());
      actual["scores"] = json::array();
      actual["stats"] = json::array();
      for (size_t i = 0; i < hyps.size(); ++i) {
        BleuStats st = bleu.segment_stats(hyps[i], refs_of(i));
        json row = {st.sys_len, st.ref_len};
        for (int64_t c : st.counts) row.push_back(c);
        for (int64_t t : st.totals) row.push_back(t);
        actual["stats"].push_back(row);
        actual["scores"].push_back(sentence_bleu(hyps[i], refs_of(i)).score);
      }
    } else if (key == "corpus_chrf") {
      actual = ChrfScorer().corpus_score(hyps, refs);
    } else if (key == "sentence_chrf") {
      ChrfScorer chrf;
      actual["signature"] = chrf.signature(refs.size());
      actual["scores"] = json::array();
      for (size_t i = 0; i < hyps.size(); ++i) actual["scores"].push_back(chrf.sentence_score(hyps[i], refs_of(i)).score);
    } else if (key == "d2l_bleu_k2" || key == "d2l_bleu_k4") {
      int k = key.back() - '0';
      actual = json::array();
      for (size_t i = 0; i < hyps.size(); ++i) actual.push_back(d2l_bleu(hyps[i], refs[0][i], k));  // ref.txt only
    } else {
      m.items.push_back(fmt::format("{} key {}: not understood by this test", m.case_name, key));
      continue;
    }
    bool per_line = key.rfind("d2l", 0) == 0;
    compare(it.value(), actual, key, per_line, m);
  }
  return m;
}

TEST(SacreBleuVectors, EveryCaseEveryKey) {
  if (!fs::is_directory(test::bleu_vectors_dir()))
    GTEST_SKIP() << "no sacreBLEU vectors at " << test::bleu_vectors_dir() << " (set NMT_BLEU_VECTORS)";
  std::vector<fs::path> cases = vector_cases();
  ASSERT_FALSE(cases.empty()) << "no case folder with expected.json under " << test::bleu_vectors_dir();
  size_t compared = 0, exact = 0;
  double max_diff = 0;
  std::string max_at;
  for (const fs::path& dir : cases) {
    Mismatches m = check_case(dir);
    compared += m.compared;
    exact += m.bit_exact;
    if (m.max_diff > max_diff) {
      max_diff = m.max_diff;
      max_at = m.case_name + " " + m.max_diff_at;
    }
    for (const std::string& item : m.items) ADD_FAILURE() << item;
  }
  std::cout << fmt::format("[ vectors  ] {} cases, {} values compared, {} bit-exact, max |diff| {:g}{}\n",
                           cases.size(), compared, exact, max_diff, max_at.empty() ? "" : " at " + max_at);
}

}  // namespace
}  // namespace nmt::metrics
