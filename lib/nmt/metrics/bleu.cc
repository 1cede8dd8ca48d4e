#include "nmt/metrics/bleu.h"

#include <algorithm>
#include <cmath>
#include <unordered_map>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "nmt/text/unicode.h"
#include "nmt/util/error.h"

namespace nmt::metrics {
namespace {

using NgramCounts = std::vector<std::unordered_map<std::string, int64_t>>;  // index: order - 1

// sacreBLEU's extract_all_word_ngrams: every n-gram of order 1..max_order. Tokens never
// contain whitespace, so joining them with ' ' is as unique a key as Python's tuples.
NgramCounts extract_ngrams(const std::vector<std::string>& tokens, int max_order) {
  NgramCounts counts(max_order);
  for (int n = 1; n <= max_order; ++n) {
    auto& table = counts[n - 1];
    for (size_t i = 0; i + n <= tokens.size(); ++i) {
      std::string key = tokens[i];
      for (int j = 1; j < n; ++j) {
        key.push_back(' ');
        key += tokens[i + j];
      }
      ++table[key];
    }
  }
  return counts;
}

// sacreBLEU's my_log: log(0) is floored instead of -inf.
double my_log(double x) { return x == 0.0 ? -9999999999.0 : std::log(x); }

// sacreBLEU's _get_closest_ref_len: the closest length, the shorter one on a tie.
int64_t closest_ref_len(int64_t hyp_len, const std::vector<int64_t>& ref_lens) {
  int64_t closest_diff = -1, closest_len = -1;
  for (int64_t ref_len : ref_lens) {
    int64_t diff = std::llabs(hyp_len - ref_len);
    if (closest_diff == -1 || diff < closest_diff) {
      closest_diff = diff;
      closest_len = ref_len;
    } else if (diff == closest_diff && ref_len < closest_len) {
      closest_len = ref_len;
    }
  }
  return closest_len;
}

}  // namespace

SmoothMethod parse_smooth_method(std::string_view name) {
  if (name == "none") return SmoothMethod::kNone;
  if (name == "floor") return SmoothMethod::kFloor;
  if (name == "add-k") return SmoothMethod::kAddK;
  if (name == "exp") return SmoothMethod::kExp;
  throw UsageError(fmt::format("unknown smoothing method '{}' (expected exp, floor, add-k or none)", name));
}

std::string smooth_method_name(SmoothMethod method) {
  switch (method) {
    case SmoothMethod::kNone: return "none";
    case SmoothMethod::kFloor: return "floor";
    case SmoothMethod::kAddK: return "add-k";
    case SmoothMethod::kExp: return "exp";
  }
  return "?";
}

std::optional<double> default_smooth_value(SmoothMethod method) {
  if (method == SmoothMethod::kFloor) return 0.1;
  if (method == SmoothMethod::kAddK) return 1.0;
  return std::nullopt;
}

BleuStats& BleuStats::operator+=(const BleuStats& other) {
  sys_len += other.sys_len;
  ref_len += other.ref_len;
  if (counts.size() < other.counts.size()) counts.resize(other.counts.size(), 0);
  if (totals.size() < other.totals.size()) totals.resize(other.totals.size(), 0);
  for (size_t i = 0; i < other.counts.size(); ++i) counts[i] += other.counts[i];
  for (size_t i = 0; i < other.totals.size(); ++i) totals[i] += other.totals[i];
  return *this;
}

std::string BleuScore::text_line(int width) const {
  std::string precs;
  for (size_t i = 0; i < precisions.size(); ++i) {
    if (i) precs.push_back('/');
    precs += fmt::format("{:.1f}", precisions[i]);
  }
  return fmt::format("BLEU|{} = {:.{}f} {} (BP = {:.3f} ratio = {:.3f} hyp_len = {} ref_len = {})", signature,
                     score, width, precs, bp, ratio, sys_len, ref_len);
}

void to_json(nlohmann::json& j, const BleuScore& s) {
  j = nlohmann::json{{"name", "BLEU"},       {"score", s.score},         {"precisions", s.precisions},
                     {"bp", s.bp},           {"sys_len", s.sys_len},     {"ref_len", s.ref_len},
                     {"counts", s.counts},   {"totals", s.totals},       {"ratio", s.ratio},
                     {"signature", s.signature}};
}

BleuScore compute_bleu(const BleuStats& stats, SmoothMethod method, std::optional<double> smooth_value,
                       bool effective_order, int max_ngram_order) {
  // Mirrors BLEU.compute_bleu line by line; the order of the floating-point operations
  // matters for bit-exact agreement.
  const double sv = smooth_value ? *smooth_value : default_smooth_value(method).value_or(0.0);
  BleuScore r;
  r.counts = stats.counts;
  r.totals = stats.totals;
  r.counts.resize(max_ngram_order, 0);
  r.totals.resize(max_ngram_order, 0);
  r.sys_len = stats.sys_len;
  r.ref_len = stats.ref_len;
  r.ratio = r.ref_len ? static_cast<double>(r.sys_len) / static_cast<double>(r.ref_len) : 0.0;

  if (r.sys_len < r.ref_len)
    r.bp = r.sys_len > 0 ? std::exp(1.0 - static_cast<double>(r.ref_len) / static_cast<double>(r.sys_len)) : 0.0;
  else
    r.bp = 1.0;

  r.precisions.assign(max_ngram_order, 0.0);
  // No match at all: score 0 and all precisions 0, whatever the smoothing (sacreBLEU #141).
  if (std::all_of(r.counts.begin(), r.counts.end(), [](int64_t c) { return c == 0; })) {
    r.score = 0.0;
    return r;
  }

  double smooth_mteval = 1.0;
  int eff_order = max_ngram_order;
  for (int n = 1; n <= max_ngram_order; ++n) {
    double correct = static_cast<double>(r.counts[n - 1]);
    double total = static_cast<double>(r.totals[n - 1]);
    if (method == SmoothMethod::kAddK && n > 1) {
      correct += sv;
      total += sv;
    }
    if (total == 0) break;
    if (effective_order) eff_order = n;
    double& p = r.precisions[n - 1];
    if (correct == 0) {
      if (method == SmoothMethod::kExp) {
        smooth_mteval *= 2;
        p = 100.0 / (smooth_mteval * total);
      } else if (method == SmoothMethod::kFloor) {
        p = 100.0 * sv / total;
      }
    } else {
      p = 100.0 * correct / total;
    }
  }

  double log_sum = 0.0;  // Python's sum(): left to right from 0
  for (int i = 0; i < eff_order; ++i) log_sum += my_log(r.precisions[i]);
  r.score = r.bp * std::exp(log_sum / eff_order);
  return r;
}

BleuScorer::BleuScorer(BleuOptions options) : options_(std::move(options)) {
  if (options_.max_ngram_order < 1) throw UsageError("BLEU: max n-gram order must be at least 1");
}

std::string BleuScorer::signature(size_t num_refs) const {
  std::string smooth = smooth_method_name(options_.smooth_method);
  if (auto def = default_smooth_value(options_.smooth_method))
    smooth += fmt::format("[{:.2f}]", options_.smooth_value.value_or(*def));
  return fmt::format("nrefs:{}|case:{}|eff:{}|tok:{}|smooth:{}|version:{}", num_refs,
                     options_.lowercase ? "lc" : "mixed", options_.effective_order ? "yes" : "no",
                     tokenizer_name(options_.tokenize), smooth, kSacreBleuVersion);
}

std::vector<std::string> BleuScorer::preprocess(std::string_view segment) const {
  std::string lowered;
  if (options_.lowercase) {
    lowered = text::python_lower(segment);
    segment = lowered;
  }
  std::string tokenized = tokenize(options_.tokenize, text::python_rstrip(segment));
  return text::python_split(tokenized);
}

namespace {

struct ReferenceInfo {
  NgramCounts ngrams;  // merged by maximum count (clipping against the best reference)
  std::vector<int64_t> lens;
};

ReferenceInfo reference_info(const BleuScorer& scorer, const std::vector<std::string>& references) {
  const int max_order = scorer.options().max_ngram_order;
  ReferenceInfo info;
  for (const std::string& ref : references) {
    std::vector<std::string> tokens = scorer.preprocess(ref);
    info.lens.push_back(static_cast<int64_t>(tokens.size()));
    NgramCounts these = extract_ngrams(tokens, max_order);
    if (info.ngrams.empty()) {
      info.ngrams = std::move(these);
      continue;
    }
    for (int n = 0; n < max_order; ++n)
      for (const auto& [ngram, count] : these[n]) {
        int64_t& slot = info.ngrams[n][ngram];
        slot = std::max(slot, count);
      }
  }
  return info;
}

BleuStats stats_against(const BleuScorer& scorer, std::string_view hypothesis, const ReferenceInfo& refs) {
  const int max_order = scorer.options().max_ngram_order;
  std::vector<std::string> hyp_tokens = scorer.preprocess(hypothesis);
  NgramCounts hyp_ngrams = extract_ngrams(hyp_tokens, max_order);
  BleuStats s;
  s.sys_len = static_cast<int64_t>(hyp_tokens.size());
  s.ref_len = closest_ref_len(s.sys_len, refs.lens);
  s.counts.assign(max_order, 0);
  s.totals.assign(max_order, 0);
  for (int n = 0; n < max_order; ++n) {
    for (const auto& [ngram, count] : hyp_ngrams[n]) {
      s.totals[n] += count;
      auto it = refs.ngrams[n].find(ngram);
      if (it != refs.ngrams[n].end()) s.counts[n] += std::min(count, it->second);
    }
  }
  return s;
}

}  // namespace

BleuStats BleuScorer::segment_stats(std::string_view hypothesis, const std::vector<std::string>& references) const {
  if (references.empty()) throw UsageError("BLEU: no reference given");
  return stats_against(*this, hypothesis, reference_info(*this, references));
}

struct BleuReferences::Impl {
  BleuScorer scorer;
  std::vector<ReferenceInfo> segments;
};

BleuReferences::BleuReferences(const BleuScorer& scorer, const std::vector<std::vector<std::string>>& refs_per_stream)
    : impl_(std::make_unique<Impl>(Impl{scorer, {}})) {
  if (refs_per_stream.empty()) throw UsageError("BLEU: no reference stream given");
  std::vector<std::string> refs(refs_per_stream.size());
  for (size_t i = 0; i < refs_per_stream[0].size(); ++i) {
    for (size_t k = 0; k < refs_per_stream.size(); ++k) refs[k] = refs_per_stream[k].at(i);
    impl_->segments.push_back(reference_info(scorer, refs));
  }
}

BleuReferences::~BleuReferences() = default;

BleuStats BleuReferences::segment_stats(size_t segment, std::string_view hypothesis) const {
  return stats_against(impl_->scorer, hypothesis, impl_->segments.at(segment));
}

BleuScore BleuScorer::corpus_score(const std::vector<std::string>& hyps,
                                   const std::vector<std::vector<std::string>>& refs_per_stream) const {
  if (refs_per_stream.empty()) throw UsageError("BLEU: no reference stream given");
  for (size_t k = 0; k < refs_per_stream.size(); ++k) {
    if (refs_per_stream[k].size() != hyps.size())
      throw UsageError(fmt::format("BLEU: {} hypotheses but reference stream {} has {} lines", hyps.size(), k + 1,
                                   refs_per_stream[k].size()));
  }
  BleuStats total;
  total.counts.assign(options_.max_ngram_order, 0);
  total.totals.assign(options_.max_ngram_order, 0);
  std::vector<std::string> refs(refs_per_stream.size());
  for (size_t i = 0; i < hyps.size(); ++i) {
    for (size_t k = 0; k < refs_per_stream.size(); ++k) refs[k] = refs_per_stream[k][i];
    total += segment_stats(hyps[i], refs);
  }
  BleuScore r = compute_bleu(total, options_.smooth_method, options_.smooth_value, options_.effective_order,
                             options_.max_ngram_order);
  r.signature = signature(refs_per_stream.size());
  return r;
}

BleuScore BleuScorer::sentence_score(std::string_view hypothesis, const std::vector<std::string>& references) const {
  BleuScore r = compute_bleu(segment_stats(hypothesis, references), options_.smooth_method, options_.smooth_value,
                             options_.effective_order, options_.max_ngram_order);
  r.signature = signature(references.size());
  return r;
}

BleuScore sentence_bleu(std::string_view hypothesis, const std::vector<std::string>& references,
                        BleuOptions options) {
  options.effective_order = true;
  return BleuScorer(options).sentence_score(hypothesis, references);
}

double d2l_bleu(std::string_view hypothesis, std::string_view reference, int k) {
  std::vector<std::string> pred = text::python_split(hypothesis);
  std::vector<std::string> label = text::python_split(reference);
  if (pred.empty()) return 0.0;
  const double len_pred = static_cast<double>(pred.size());
  double score = std::exp(std::min(0.0, 1.0 - static_cast<double>(label.size()) / len_pred));
  NgramCounts pred_ngrams = extract_ngrams(pred, std::max(k, 0));
  NgramCounts label_ngrams = extract_ngrams(label, std::max(k, 0));
  for (int n = 1; n <= k; ++n) {
    if (static_cast<int64_t>(pred.size()) - n + 1 <= 0) continue;
    int64_t matches = 0;
    for (const auto& [ngram, count] : pred_ngrams[n - 1]) {
      auto it = label_ngrams[n - 1].find(ngram);
      if (it != label_ngrams[n - 1].end()) matches += std::min(count, it->second);
    }
    const double possible = static_cast<double>(static_cast<int64_t>(pred.size()) - n + 1);
    score *= std::pow(static_cast<double>(matches) / possible, std::pow(0.5, n));
  }
  return score;
}

}  // namespace nmt::metrics
