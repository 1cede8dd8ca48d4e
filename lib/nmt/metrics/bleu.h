#pragma once
// Corpus and sentence BLEU, a port of sacreBLEU 2.6.0's BLEU (sacrebleu/metrics/bleu.py)
// that reproduces its scores to the bit: same tokenizers, same clipping against several
// references, same smoothing, same floating-point operation order.
//
//   nmt::metrics::BleuScorer bleu;                     // 13a, mixed case, exp smoothing
//   BleuScore s = bleu.corpus_score(hyps, {refs});     // refs: one stream per reference
//   std::cout << s.text_line() << "\n";                // "BLEU|nrefs:1|...|version:2.6.0 = 61.54 ..."
//
// Lines are UTF-8 strings; trailing whitespace is ignored (sacreBLEU rstrips each segment),
// but line splitting and the CLI's per-line rstrip are the caller's job. Invalid UTF-8
// throws text::Utf8Error.
#include <array>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "nmt/metrics/tokenizer.h"

namespace nmt::metrics {

// The sacreBLEU release whose behaviour (and signature "version:" field) we reproduce.
inline constexpr const char* kSacreBleuVersion = "2.6.0";

enum class SmoothMethod { kNone, kFloor, kAddK, kExp };

// "none", "floor", "add-k", "exp"; throws UsageError for anything else.
SmoothMethod parse_smooth_method(std::string_view name);
std::string smooth_method_name(SmoothMethod method);
// sacreBLEU's defaults: floor 0.1, add-k 1 (none and exp take no value).
std::optional<double> default_smooth_value(SmoothMethod method);

struct BleuOptions {
  TokenizerKind tokenize = TokenizerKind::k13a;
  bool lowercase = false;  // Python str.lower() before tokenizing
  SmoothMethod smooth_method = SmoothMethod::kExp;
  std::optional<double> smooth_value;  // unset: default_smooth_value(smooth_method)
  int max_ngram_order = 4;
  // Drop n-gram orders the hypothesis is too short to have (sentence BLEU); signature eff:yes.
  bool effective_order = false;
};

// Sufficient statistics of one segment or (summed) of a corpus.
struct BleuStats {
  int64_t sys_len = 0;
  int64_t ref_len = 0;
  std::vector<int64_t> counts;  // clipped matches per order 1..N
  std::vector<int64_t> totals;  // hypothesis n-grams per order 1..N

  BleuStats& operator+=(const BleuStats& other);
};

struct BleuScore {
  double score = 0.0;              // 0..100
  std::vector<double> precisions;  // p_n in %, after smoothing (all 0 when nothing matches)
  std::vector<int64_t> counts;     // raw clipped matches (before add-k smoothing)
  std::vector<int64_t> totals;     // raw hypothesis n-gram counts
  double bp = 0.0;                 // brevity penalty
  double ratio = 0.0;              // sys_len / ref_len (0 when ref_len is 0)
  int64_t sys_len = 0;
  int64_t ref_len = 0;
  std::string signature;  // "nrefs:1|case:mixed|eff:no|tok:13a|smooth:exp|version:2.6.0"

  // sacreBLEU's CLI text output, e.g.
  // "BLEU|<signature> = 61.54 100.0/85.5/74.9/67.1 (BP = 0.760 ratio = 0.785 hyp_len = 321 ref_len = 409)".
  // `width` is the number of decimals of the score.
  std::string text_line(int width = 2) const;
};

// {"name": "BLEU", "score", "precisions", "bp", "sys_len", "ref_len", "counts", "totals",
// "ratio", "signature"} with full double precision (so `nlohmann::json j = score;` works).
void to_json(nlohmann::json& j, const BleuScore& score);

// sacreBLEU's BLEU.compute_bleu: the score from (summed) statistics.
BleuScore compute_bleu(const BleuStats& stats, SmoothMethod method, std::optional<double> smooth_value,
                       bool effective_order, int max_ngram_order = 4);

class BleuScorer {
 public:
  explicit BleuScorer(BleuOptions options = {});

  const BleuOptions& options() const { return options_; }

  // The signature for `num_refs` references (sacreBLEU's BLEUSignature.format()).
  std::string signature(size_t num_refs) const;

  // Lowercase (if asked), rstrip and tokenize a segment; returns its tokens.
  std::vector<std::string> preprocess(std::string_view segment) const;
  // The same tokens as views into `buffers` (valid until their next use), without allocating.
  const std::vector<std::string_view>& preprocess(std::string_view segment, TokenizerBuffers& buffers) const;

  // Statistics of one hypothesis against its references (one or more).
  BleuStats segment_stats(std::string_view hypothesis, const std::vector<std::string>& references) const;
  // The same for references held elsewhere (the Python module's str objects).
  BleuStats segment_stats_of_views(std::string_view hypothesis, const std::vector<std::string_view>& references) const;

  // Corpus BLEU. refs_per_stream[k][i] is reference k of segment i; every stream must have
  // hyps.size() lines (throws UsageError otherwise; sacreBLEU's API would silently truncate).
  BleuScore corpus_score(const std::vector<std::string>& hyps,
                         const std::vector<std::vector<std::string>>& refs_per_stream) const;

  // BLEU of one segment (use effective_order = true, as sacrebleu.sentence_bleu does).
  BleuScore sentence_score(std::string_view hypothesis, const std::vector<std::string>& references) const;

 private:
  BleuOptions options_;
};

// The references tokenized once (as token ids; their n-grams are matched per hypothesis by
// NgramMatcher), sacreBLEU's reference cache, for scoring several systems against the same
// references: segment_stats(i, hyp) equals scorer.segment_stats(hyp, {reference k of
// segment i, every k}). Safe to share between threads.
class BleuReferences {
 public:
  BleuReferences(const BleuScorer& scorer, const std::vector<std::vector<std::string>>& refs_per_stream);
  ~BleuReferences();
  BleuReferences(const BleuReferences&) = delete;
  BleuReferences& operator=(const BleuReferences&) = delete;

  BleuStats segment_stats(size_t segment, std::string_view hypothesis) const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// Sentence BLEU exactly as sacrebleu.sentence_bleu(hyp, refs) computes it: the given options
// with effective_order forced on.
BleuScore sentence_bleu(std::string_view hypothesis, const std::vector<std::string>& references,
                        BleuOptions options = {});

// The sentence BLEU of the "Dive into Deep Learning" book (not sacreBLEU, not comparable to
// it): whitespace tokens of the raw line, BP exp(min(0, 1 - |ref|/|hyp|)), then for
// n = 1..k the clipped n-gram precision raised to 0.5^n. Our conventions: an empty
// hypothesis scores 0, and orders longer than the hypothesis are skipped. Scale 0..1.
double d2l_bleu(std::string_view hypothesis, std::string_view reference, int k);

}  // namespace nmt::metrics
