// sacreBLEU 2.6.0's own outputs (tests/score-vectors, made by scripts/gen/gen-score-vectors.py)
// against nmt's library: every corpus-level CLI output byte for byte (tables, JSON, confidence
// intervals, paired tests), and the Python API's full-precision figures (corpus and sentence
// scores of every metric configuration, bootstrap means and half-widths with their numpy type,
// paired bootstrap and approximate randomisation scores, p-values and intervals).
// Also: numpy's random draws, the new tokenizers, and the helpers the outputs rely on.
#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "nmt/metrics/numpy_random.h"
#include "nmt/metrics/sacrebleu_report.h"
#include "nmt/metrics/significance.h"
#include "nmt/metrics/ter.h"
#include "nmt/metrics/tokenizer.h"
#include "nmt/text/unicode.h"
#include "nmt/util/error.h"
#include "nmt/util/io.h"
#include "test_support.h"

namespace nmt::test {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;
using namespace nmt::metrics;

fs::path vectors_dir() { return fs::path(source_dir()) / "tests" / "score-vectors"; }

std::vector<fs::path> cases() {
  std::vector<fs::path> out;
  for (const auto& entry : fs::directory_iterator(vectors_dir()))
    if (fs::exists(entry.path() / "expected.json")) out.push_back(entry.path());
  std::sort(out.begin(), out.end());
  return out;
}

json load_expected(const fs::path& dir) {
  std::ifstream in(dir / "expected.json");
  return json::parse(in);
}

// The CLI's reading: split on \n, rstrip.
std::vector<std::string> segments(const fs::path& file) {
  std::vector<std::string> lines = read_lines(file.string());
  for (std::string& l : lines) l = std::string(text::python_rstrip(l));
  return lines;
}

// Sets SACREBLEU_SEED for one scope.
class SeedEnv {
 public:
  explicit SeedEnv(const std::optional<std::string>& value) {
    if (value) setenv("SACREBLEU_SEED", value->c_str(), 1);
    else unsetenv("SACREBLEU_SEED");
  }
  ~SeedEnv() { unsetenv("SACREBLEU_SEED"); }
};

// A sacreBLEU run's flags as ReportOptions; nullopt for sentence-level runs (the CLI's own
// path, checked end to end in tests/cli/bleu_test.cc).
std::optional<ReportOptions> options_of(const json& run) {
  ReportOptions o;
  o.metrics = run["metrics"].get<std::vector<std::string>>();
  const std::vector<std::string> flags = run["flags"].get<std::vector<std::string>>();
  for (size_t i = 0; i < flags.size(); ++i) {
    const std::string& f = flags[i];
    const auto next = [&] { return flags.at(++i); };
    if (f == "-f") o.json = next() == "json";
    else if (f == "-w") o.width = std::stoi(next());
    else if (f == "--confidence") o.confidence = true;
    else if (f == "-cin") o.confidence_n = std::stoul(next());
    else if (f == "--paired-bs") o.paired = PairedTest::kBootstrap;
    else if (f == "--paired-ar") o.paired = PairedTest::kApproximateRandomization;
    else if (f == "--paired-bs-n" || f == "-pbsn") o.paired_bs_n = std::stoul(next());
    else if (f == "--paired-ar-n" || f == "-parn") o.paired_ar_n = std::stoul(next());
    else if (f == "--short") o.short_signature = true;
    else if (f == "--score-only") o.score_only = true;
    else if (f == "--sentence-level") return std::nullopt;
    else if (f == "--tokenize") o.bleu.tokenize = parse_tokenizer(next());
    else if (f == "--chrf-word-order") o.chrf.word_order = std::stoi(next());
    else if (f == "--ter-normalized") o.ter.normalized = true;
    else if (f == "--ter-asian-support") o.ter.asian_support = true;
    else if (f == "--ter-no-punct") o.ter.no_punct = true;
    else if (f == "--ter-case-sensitive") o.ter.case_sensitive = true;
    else ADD_FAILURE() << "flag not understood by the test: " << f;
  }
  return o;
}

TEST(ScoreVectors, EveryCorpusLevelOutputMatchesSacreBleuByteForByte) {
  size_t checked = 0;
  for (const fs::path& dir : cases()) {
    const json expected = load_expected(dir);
    std::vector<std::vector<std::string>> refs;
    for (const auto& r : expected["refs"]) refs.push_back(segments(dir / r.get<std::string>()));
    for (const json& run : expected["runs"]) {
      std::optional<ReportOptions> o = options_of(run);
      if (!o) continue;
      const SeedEnv env(run.contains("seed") ? std::optional<std::string>(run["seed"]) : std::nullopt);
      o->seed = test_seed_from_environment();
      std::vector<NamedSystem> systems;
      for (const auto& s : run["systems"])
        systems.push_back(NamedSystem{s.get<std::string>(), segments(dir / s.get<std::string>())});
      EXPECT_EQ(sacrebleu_report(systems, refs, *o), run["stdout"].get<std::string>())
          << dir.filename() << " " << run["metrics"].dump() << " " << run["flags"].dump();
      ++checked;
    }
  }
  EXPECT_GE(checked, 24u);  // 33 runs, 9 of them sentence-level (CLI tests)
}

// The metric of an API configuration name of the generator.
std::unique_ptr<ResamplingMetric> metric_of(const std::string& config, const std::vector<std::vector<std::string>>& refs) {
  BleuOptions b;
  ChrfOptions c;
  TerOptions t;
  if (config == "bleu") return make_bleu_metric(BleuScorer(b), refs);
  if (config.rfind("bleu-", 0) == 0) {
    if (config == "bleu-none-lc") b.tokenize = TokenizerKind::kNone, b.lowercase = true;
    else b.tokenize = parse_tokenizer(config.substr(5));
    return make_bleu_metric(BleuScorer(b), refs);
  }
  if (config == "chrf") return make_chrf_metric(ChrfScorer(c), refs);
  if (config == "chrf++") return c.word_order = 2, make_chrf_metric(ChrfScorer(c), refs);
  if (config == "ter-norm") t.normalized = true;
  if (config == "ter-norm-asian-nopunct") t.normalized = t.asian_support = t.no_punct = true;
  if (config == "ter-case-nopunct") t.case_sensitive = t.no_punct = true;
  return make_ter_metric(TerScorer(t), refs);
}

// Sentence scores through each scorer's own sentence_score (sacreBLEU API defaults: BLEU
// without effective order).
double sentence_score(const std::string& config, const std::string& hyp, const std::vector<std::string>& refs) {
  if (config.rfind("bleu", 0) == 0) {
    BleuOptions b;
    if (config == "bleu-none-lc") b.tokenize = TokenizerKind::kNone, b.lowercase = true;
    else if (config != "bleu") b.tokenize = parse_tokenizer(config.substr(5));
    return BleuScorer(b).sentence_score(hyp, refs).score;
  }
  if (config.rfind("chrf", 0) == 0) {
    ChrfOptions c;
    if (config == "chrf++") c.word_order = 2;
    return ChrfScorer(c).sentence_score(hyp, refs).score;
  }
  TerOptions t;
  if (config == "ter-norm") t.normalized = true;
  if (config == "ter-norm-asian-nopunct") t.normalized = t.asian_support = t.no_punct = true;
  if (config == "ter-case-nopunct") t.case_sensitive = t.no_punct = true;
  return TerScorer(t).sentence_score(hyp, refs).score;
}

void expect_number(const json& want, const PyNumber& got, bool want_f32, const std::string& what) {
  EXPECT_EQ(got.value, want.get<double>()) << what;
  EXPECT_EQ(got.f32, want_f32) << what << " (numpy float32 or Python float)";
}

TEST(ScoreVectors, ApiFiguresMatchToTheBit) {
  size_t figures = 0;
  for (const fs::path& dir : cases()) {
    const json expected = load_expected(dir);
    std::vector<std::vector<std::string>> refs;
    for (const auto& r : expected["refs"]) refs.push_back(segments(dir / r.get<std::string>()));
    std::vector<std::vector<std::string>> systems;
    for (const auto& s : expected["systems"]) systems.push_back(segments(dir / s.get<std::string>()));
    const SeedEnv env(std::nullopt);
    const TestSeed seed = test_seed_from_environment();
    for (const auto& [config, want] : expected["api"].items()) {
      const std::string where = dir.filename().string() + " " + config;
      const std::unique_ptr<ResamplingMetric> metric = metric_of(config, refs);
      std::vector<SegmentStats> stats;
      for (const auto& s : systems) stats.push_back(metric->statistics(s));
      for (size_t k = 0; k < systems.size(); ++k, ++figures)
        EXPECT_EQ(metric->score(sum_statistics(stats[k]).data()), want["corpus"][k].get<double>()) << where;
      for (size_t i = 0; i < systems[0].size(); ++i, ++figures) {
        std::vector<std::string> line_refs;
        for (const auto& r : refs) line_refs.push_back(r[i]);
        EXPECT_EQ(sentence_score(config, systems[0][i], line_refs), want["sentence"][i].get<double>())
            << where << " line " << i + 1;
      }
      const json& conf = want["confidence"];
      if (!conf.contains("error")) {  // sacreBLEU itself fails where float and float32 scores mix
        const ConfidenceInterval ci = bootstrap_confidence(*metric, stats[0], conf["n"].get<size_t>(), seed);
        expect_number(conf["mean"], ci.mean, conf["mean_f32"], where + " confidence mean");
        expect_number(conf["ci"], ci.ci, conf["ci_f32"], where + " confidence half-width");
        figures += 2;
      }
      for (const char* test : {"paired_bs", "paired_ar"}) {
        if (!want.contains(test)) continue;
        const json& w = want[test];
        const size_t n = w["n"].get<size_t>();
        const std::vector<PairedResult> got = std::string(test) == "paired_bs"
                                                  ? paired_bootstrap(*metric, stats, n, seed)
                                                  : paired_approximate_randomization(*metric, stats, n, seed);
        ASSERT_EQ(got.size(), w["results"].size()) << where;
        for (size_t k = 0; k < got.size(); ++k) {
          const json& r = w["results"][k];
          const std::string what = where + " " + test + " system " + std::to_string(k);
          EXPECT_EQ(got[k].score, r["score"].get<double>()) << what;
          EXPECT_EQ(got[k].p_value.has_value(), !r["p_value"].is_null()) << what;
          if (got[k].p_value && !r["p_value"].is_null()) {
            EXPECT_EQ(*got[k].p_value, r["p_value"].get<double>()) << what;
          }
          EXPECT_EQ(got[k].mean.has_value(), !r["mean"].is_null()) << what;
          if (got[k].mean && !r["mean"].is_null()) {
            expect_number(r["mean"], *got[k].mean, r["mean_f32"], what + " mean");
            expect_number(r["ci"], *got[k].ci, r["ci_f32"], what + " ci");
          }
          figures += 4;
        }
      }
    }
  }
  EXPECT_GE(figures, 1150u);
}

TEST(NumpyRandom, SeedingAndDrawsMatchNumpy) {
  // np.random.default_rng(12345).bit_generator.state: SeedSequence then PCG64's seeding.
  const Pcg64 bits(NumpySeed{{12345}});
  EXPECT_EQ(static_cast<uint64_t>(bits.state() >> 64), 0x1905e0335aae9634ULL);
  EXPECT_EQ(static_cast<uint64_t>(bits.state()), 0x9199b0d09775add5ULL);
  EXPECT_EQ(static_cast<uint64_t>(bits.increment() >> 64), 0xc9c7353e6e2b1f28ULL);
  EXPECT_EQ(static_cast<uint64_t>(bits.increment()), 0x7d761f2d4027fae7ULL);
  // default_rng(12345).choice(1000, 5)
  Generator g(NumpySeed{{12345}});
  std::vector<int64_t> idx(5);
  g.choice(1000, idx.size(), idx.data());
  EXPECT_EQ(idx, (std::vector<int64_t>{699, 227, 788, 316, 204}));
  // default_rng(12345).integers(2, size=40, dtype=bool)
  Generator b(NumpySeed{{12345}});
  std::vector<uint8_t> flips(40);
  b.booleans(flips.size(), flips.data());
  EXPECT_EQ(flips, (std::vector<uint8_t>{1, 0, 1, 1, 1, 0, 0, 1, 1, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1,
                                          1, 1, 1, 1, 0, 1, 0, 0, 1, 1, 0, 1, 1, 0, 1, 1, 0, 0, 0, 1}));
  // default_rng(0).choice(7, 8) and default_rng(2**70 + 5).choice(2**32 + 1, 3): a 96-bit seed
  // and the 64-bit Lemire path.
  Generator z(NumpySeed{{0}});
  idx.resize(8);
  z.choice(7, idx.size(), idx.data());
  EXPECT_EQ(idx, (std::vector<int64_t>{5, 4, 3, 1, 2, 0, 0, 0}));
  const std::optional<NumpySeed> big = parse_numpy_seed("1180591620717411303429");  // 2**70 + 5
  ASSERT_TRUE(big);
  EXPECT_EQ(big->to_string(), "1180591620717411303429");
  Generator w(*big);
  idx.resize(3);
  w.choice((int64_t{1} << 32) + 1, idx.size(), idx.data());
  EXPECT_EQ(idx, (std::vector<int64_t>{835285643, 1163694638, 2548856253}));
}

TEST(NumpyRandom, SeedParsingFollowsPythonInt) {
  bool negative = false;
  EXPECT_EQ(parse_numpy_seed(" +1_000 ")->to_string(), "1000");
  EXPECT_FALSE(parse_numpy_seed("1__0"));
  EXPECT_FALSE(parse_numpy_seed("12a"));
  EXPECT_FALSE(parse_numpy_seed(""));
  ASSERT_TRUE(parse_numpy_seed("-3", &negative));
  EXPECT_TRUE(negative);
  const SeedEnv none(std::string("NoNe"));
  EXPECT_FALSE(test_seed_from_environment().seed);
  EXPECT_EQ(test_seed_from_environment().label(), "none");
  setenv("SACREBLEU_SEED", "x1", 1);
  EXPECT_THROW(test_seed_from_environment(), UsageError);
  unsetenv("SACREBLEU_SEED");
  EXPECT_EQ(test_seed_from_environment().label(), "12345");
}

TEST(Tokenizers, IntlZhCharAndTercomAsSacreBleu) {
  // Outputs of sacreBLEU 2.6.0's tokenizer classes on the same strings.
  const std::string s = "« Bonjour », dit-il — 3,5 % des 1.000 élèves (1990). Prix: 12€!";
  EXPECT_EQ(tokenize_intl(s), "« Bonjour » , dit - il — 3,5 % des 1.000 élèves ( 1990 ) . Prix : 12 € !");
  EXPECT_EQ(tokenize_zh(s), "« Bonjour » , dit-il — 3,5 % des 1.000 élèves ( 1990 ) . Prix : 12 € !");
  TerOptions norm;
  norm.normalized = true;
  EXPECT_EQ(tercom_tokenize(s, norm), "« bonjour » , dit-il — 3,5 % des 1.000 élèves ( 1990 ) . prix : 12€ !");
  TerOptions all = norm;
  all.asian_support = all.no_punct = true;
  EXPECT_EQ(tercom_tokenize(s, all), "« bonjour » dit-il — 35 % des 1000 élèves 1990 prix 12€");

  const std::string zh = "我们今天去北京，看了长城。Hello, world 2020.";
  EXPECT_EQ(tokenize_intl(zh), "我们今天去北京 ， 看了长城 。 Hello , world 2020.");
  EXPECT_EQ(tokenize_zh(zh), "我 们 今 天 去 北 京 ， 看 了 长 城 。 Hello , world 2020.");
  EXPECT_EQ(tokenize_char("Hé, 2"), "H é ,   2");
  EXPECT_EQ(tercom_tokenize(zh, all), "我 们 今 天 去 北 京 看 了 长 城 hello world 2020");
  // sacreBLEU's two-character range ends: U+2A6D is "Chinese", U+2A6E is not; U+2F81 is.
  EXPECT_EQ(tokenize_zh("x\u2A6D\u2A6Ey\u2F81z"), "x \u2A6D \u2A6Ey \u2F81 z");
}

TEST(Tokenizers, UnsupportedOnesAreRefusedWithTheirReason) {
  for (const char* name : {"ja-mecab", "ko-mecab"}) {
    try {
      parse_tokenizer(name);
      ADD_FAILURE() << name << " accepted";
    } catch (const UsageError& e) {
      EXPECT_NE(std::string(e.what()).find("MeCab"), std::string::npos) << e.what();
      EXPECT_EQ(e.exit_code(), 2);
    }
  }
  for (const char* name : {"spm", "flores101", "flores200", "spBLEU-1K"})
    EXPECT_THROW(parse_tokenizer(name), UsageError) << name;
  EXPECT_THROW(parse_tokenizer("13b"), UsageError);
}

TEST(Ter, EditsCountShiftsAndEmptyReferences) {
  EXPECT_EQ(translation_edit_rate({"a", "b", "c"}, {}), 3);  // empty reference: every word deleted
  EXPECT_EQ(translation_edit_rate({}, {"a", "b"}), 2);
  // One block shift beats two substitutions.
  EXPECT_EQ(translation_edit_rate({"d", "e", "a", "b", "c"}, {"a", "b", "c", "d", "e"}), 1);
  const TerScorer ter;
  const TerScore s = ter.corpus_score({"the cat sat", ""}, {{"The cat sat down", ""}});
  EXPECT_EQ(s.num_edits, 1);
  EXPECT_EQ(s.ref_length, 4.0);
  EXPECT_EQ(s.score, 25.0);
  EXPECT_EQ(s.text_line(1), "TER|nrefs:1|case:lc|tok:tercom|norm:no|punct:yes|asian:no|version:2.6.0 = 25.0");
}

TEST(SacreBleuReport, PythonNumbersAndSignatures) {
  EXPECT_EQ(python_float_repr(61.5), "61.5");
  EXPECT_EQ(python_float_repr(62.0), "62.0");
  EXPECT_EQ(python_float_repr(1e-05), "1e-05");
  EXPECT_EQ(python_float_repr(0.0001), "0.0001");
  EXPECT_EQ(python_float_repr(1e16), "1e+16");
  EXPECT_EQ(python_float_repr(0.009900990099009901), "0.009900990099009901");
  EXPECT_EQ(python_json_string("μ \"q\"\n😀", false), "\"μ \\\"q\\\"\\n😀\"");
  EXPECT_EQ(python_json_string("μ😀", true), "\"\\u03bc\\ud83d\\ude00\"");
  EXPECT_EQ(short_signature("nrefs:1|bs:9|seed:1|case:lc|tok:tercom|norm:no|punct:yes|asian:no|version:2.6.0", "TER"),
            "#:1|bs:9|rs:1|c:lc|t:tercom|nr:no|pn:yes|as:no|v:2.6.0");
  EXPECT_EQ(with_test_fields("nrefs:2|case:mixed", "ar:10|seed:none"), "nrefs:2|ar:10|seed:none|case:mixed");
  // statistics.mean: exact sum, one rounding (summing in doubles gives 3333333333333333.5).
  EXPECT_EQ(exact_mean({1e16, 1.0, 1.0}), 3333333333333334.0);
}

TEST(SacreBleuReport, RefusesWhatSacreBleuRefuses) {
  const std::vector<std::vector<std::string>> refs{{"a b", "c d"}};
  const std::vector<NamedSystem> one{{"s1", {"a b", "c"}}}, two{{"s1", {"a b", "c"}}, {"s2", {"a", "c d"}}};
  ReportOptions paired;
  paired.paired = PairedTest::kBootstrap;
  EXPECT_THROW(sacrebleu_report(one, refs, paired), UsageError);
  ReportOptions confidence;
  confidence.confidence = true;
  EXPECT_THROW(sacrebleu_report(two, refs, confidence), UsageError);
  ReportOptions unknown;
  unknown.metrics = {"meteor"};
  EXPECT_THROW(sacrebleu_report(one, refs, unknown), UsageError);
}

}  // namespace
}  // namespace nmt::test
