#pragma once
// TER (translation edit rate, Snover et al. 2006), a port of sacreBLEU 2.6.0's TER
// (sacrebleu/metrics/ter.py, lib_ter.py, tokenizers/tokenizer_ter.py) that reproduces its
// scores to the bit: the Tercom normaliser, the greedy shift search with Tercom's ranking of
// shifts and sacreBLEU's limits (shift length 10, distance 50, 1,000 candidates per segment),
// and the beam-limited edit distance around the length-scaled diagonal.
//
//   nmt::metrics::TerScorer ter;                      // lowercased, no normalisation
//   TerScore s = ter.corpus_score(hyps, {refs});
//   std::cout << s.text_line() << "\n";              // "TER|nrefs:1|case:lc|tok:tercom|...= 38.90"
//
// sacreBLEU caches edit-distance rows by hypothesis prefix; rows depend only on the prefix and
// the (fixed) hypothesis length, so the cache never changes a result. Here every candidate
// shift reuses the rows of the unshifted hypothesis up to the first moved word instead.
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json_fwd.hpp>

namespace nmt::metrics {

struct TerOptions {
  bool normalized = false;      // Tercom's normalisation and punctuation tokenization
  bool no_punct = false;        // remove . , ? : ; ! " ( )
  bool asian_support = false;   // with normalized: split CJK characters; with no_punct: drop CJK punctuation
  bool case_sensitive = false;  // default: Python str.lower() first
};

// TercomTokenizer: the segment as space-separated words.
std::string tercom_tokenize(std::string_view segment, const TerOptions& options);

// lib_ter.translation_edit_rate: the edits (shifts + insertions, deletions, substitutions)
// turning the hypothesis into the reference. Words are compared for equality only.
int64_t translation_edit_rate(const std::vector<std::string>& hyp_words, const std::vector<std::string>& ref_words);

// Sufficient statistics of one segment or (summed) of a corpus: the fewest edits over the
// references, and the average reference length (a float with several references).
struct TerStats {
  double num_edits = 0.0;
  double ref_length = 0.0;
};

struct TerScore {
  double score = 0.0;  // 100 * edits / reference length
  int64_t num_edits = 0;
  double ref_length = 0.0;
  std::string signature;  // "nrefs:1|case:lc|tok:tercom|norm:no|punct:yes|asian:no|version:2.6.0"

  // sacreBLEU's CLI text output: "TER|<signature> = 38.90" (`width` decimals).
  std::string text_line(int width = 2) const;
};

// {"name": "TER", "score", "num_edits", "ref_length", "signature"} with full precision.
void to_json(nlohmann::json& j, const TerScore& score);

class TerScorer {
 public:
  explicit TerScorer(TerOptions options = {}) : options_(options) {}

  const TerOptions& options() const { return options_; }
  std::string signature(size_t num_refs) const;

  // Tokenized words of a segment (rstripped first, as sacreBLEU does).
  std::vector<std::string> preprocess(std::string_view segment) const;

  TerStats segment_stats(std::string_view hypothesis, const std::vector<std::string>& references) const;
  // Same, from words already preprocessed (the references are reused across systems).
  TerStats segment_stats(const std::vector<std::string>& hyp_words,
                         const std::vector<std::vector<std::string>>& ref_words) const;

  // The score of summed statistics (TER._compute_score_from_stats on Python numbers).
  TerScore score_from_stats(const TerStats& stats, size_t num_refs) const;

  // refs_per_stream[k][i] is reference k of segment i; throws UsageError on length mismatch.
  TerScore corpus_score(const std::vector<std::string>& hyps,
                        const std::vector<std::vector<std::string>>& refs_per_stream) const;
  TerScore sentence_score(std::string_view hypothesis, const std::vector<std::string>& references) const;

 private:
  TerOptions options_;
};

}  // namespace nmt::metrics
