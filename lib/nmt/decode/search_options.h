#pragma once
// How a translation is searched for: the one table of search options that `nmt translate`,
// `eval`, `attention`, `score`, `serve` and `bench translate` bind (app/option_binder.h), so a
// server decodes exactly as `nmt translate` does with the same flags, and one factory turns
// them into a search strategy (decode/strategy.h). Torch-free: the option table and its checks
// are plain data.
#include <array>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "nmt/util/option_spec.h"

namespace nmt::decode {

enum class LengthPenalty {
  kGnmt,     // ((5+len)/6)^alpha (Wu et al., 2016)
  kAverage,  // divide by the length
  kNone,     // the raw log-probability
};
inline constexpr std::array<EnumName<LengthPenalty>, 3> enum_names(LengthPenalty) {
  return {{{LengthPenalty::kGnmt, "gnmt"}, {LengthPenalty::kAverage, "average"}, {LengthPenalty::kNone, "none"}}};
}

struct SamplingOptions {
  int64_t top_k = 0;         // sample among the k most probable tokens; 0 = no limit
  double top_p = 1.0;        // sample among the most probable tokens holding probability p
  double temperature = 1.0;  // the scores are divided by it before the softmax
  uint64_t seed = 0;
};

// "top-k:K" (K >= 1) or "top-p:P" (0 < P <= 1) into `options`; UsageError naming --sampling.
void parse_sampling(const std::string& spec, SamplingOptions& options);

inline constexpr int64_t kMaxBeam = 1000;
inline constexpr int64_t kMaxBatchSentences = 100'000;

// Field defaults are the options' defaults; what each means is in search_option_specs().
struct SearchOptions {
  int64_t beam = 1;   // 1 (with nbest 1): greedy search
  int64_t nbest = 1;  // hypotheses returned per sentence
  LengthPenalty length_penalty = LengthPenalty::kGnmt;
  double alpha = 0.6;
  bool shrink = false;
  std::string sampling;  // "top-k:K" or "top-p:P"; empty: search, not sampling
  double temperature = 1.0;
  uint64_t seed = 0;
  double max_len_a = 1.5;  // an output has at most a * source length + b subwords
  int64_t max_len_b = 10;
  int64_t batch_size = 64;  // sentences per batch
  int64_t no_repeat_ngram = 0;  // > 0: no output repeats a subword n-gram of this size

  bool use_sampling() const { return !sampling.empty(); }
  bool use_beam() const { return beam > 1 || nbest > 1; }
  SamplingOptions sampling_options() const;  // of a valid `sampling`
};

const std::vector<OptionSpec<SearchOptions>>& search_option_specs();

// Every range, then what the options mean together (nbest within the beam, sampling alone,
// --temperature only with it); OptionError naming the options by key, or UsageError worded
// with `name` when given.
void validate_search_options(const SearchOptions& options,
                             const std::function<std::string(const std::string&)>& name = nullptr);

// "greedy decoding", "beam 5", "sampling top-k:10": what the interactive prompt says it does.
std::string search_name(const SearchOptions& options);

}  // namespace nmt::decode
