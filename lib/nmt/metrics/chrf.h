#pragma once
// chrF / chrF++, a port of sacreBLEU 2.6.0's CHRF (sacrebleu/metrics/chrf.py) that
// reproduces its scores to the bit.
//
//   nmt::metrics::ChrfScorer chrf;                     // chrF2: char order 6, no words
//   ChrfScore s = chrf.corpus_score(hyps, {refs});
//   std::cout << s.text_line() << "\n";                // "chrF2|nrefs:1|...|version:2.6.0 = 76.03"
//
// N-grams are over Unicode code points (no normalisation). Corpus chrF sums the sentence
// statistics, it does not average sentence scores. With several references each sentence
// uses the reference with the best sentence F (the first one on a tie).
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json_fwd.hpp>

namespace nmt::metrics {

struct ChrfOptions {
  int char_order = 6;
  int word_order = 0;  // 2 gives chrF++
  int beta = 2;
  bool lowercase = false;
  bool whitespace = false;     // keep whitespace inside character n-grams
  bool eps_smoothing = false;  // chrF++.py-style smoothing instead of effective order (eff:no)
};

// [hyp n-grams, ref n-grams, matches] for each order: char orders first, then word orders.
struct ChrfStats {
  std::vector<int64_t> values;  // 3 * (char_order + word_order)
  ChrfStats& operator+=(const ChrfStats& other);
};

struct ChrfScore {
  double score = 0.0;     // 0..100
  std::string name;       // "chrF2", "chrF2++" with word_order 2
  std::string signature;  // "nrefs:1|case:mixed|eff:yes|nc:6|nw:0|space:no|version:2.6.0"

  // sacreBLEU's CLI text output: "chrF2|<signature> = 76.03" (`width` decimals).
  std::string text_line(int width = 2) const;
};

// {"name": "chrF2", "score", "signature"} with full double precision.
void to_json(nlohmann::json& j, const ChrfScore& score);

class ChrfScorer {
 public:
  explicit ChrfScorer(ChrfOptions options = {});

  const ChrfOptions& options() const { return options_; }
  std::string signature(size_t num_refs) const;
  std::string name() const;

  // The F-score (0..100) of summed statistics (sacreBLEU's _compute_f_score).
  double f_score(const ChrfStats& stats) const;

  // Statistics of one hypothesis against the best of its references.
  ChrfStats segment_stats(std::string_view hypothesis, const std::vector<std::string>& references) const;

  // refs_per_stream[k][i] is reference k of segment i; throws UsageError on length mismatch.
  ChrfScore corpus_score(const std::vector<std::string>& hyps,
                         const std::vector<std::vector<std::string>>& refs_per_stream) const;

  ChrfScore sentence_score(std::string_view hypothesis, const std::vector<std::string>& references) const;

 private:
  ChrfOptions options_;
};

// The references prepared once (code points, and chrF++'s words as ids; their n-grams are
// matched per hypothesis by NgramMatcher), sacreBLEU's reference cache, for scoring several
// systems against the same references: segment_stats(i, hyp) equals
// scorer.segment_stats(hyp, {reference k of segment i, for every k}). Safe to share between
// threads.
class ChrfReferences {
 public:
  ChrfReferences(const ChrfScorer& scorer, const std::vector<std::vector<std::string>>& refs_per_stream);
  ~ChrfReferences();
  ChrfReferences(const ChrfReferences&) = delete;
  ChrfReferences& operator=(const ChrfReferences&) = delete;

  size_t size() const;
  ChrfStats segment_stats(size_t segment, std::string_view hypothesis) const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace nmt::metrics
