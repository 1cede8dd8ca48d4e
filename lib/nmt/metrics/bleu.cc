#include "nmt/metrics/bleu.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <unordered_map>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "nmt/metrics/ngram_match.h"
#include "nmt/text/unicode.h"
#include "nmt/util/error.h"

namespace nmt::metrics {
namespace {

using NgramCounts = std::vector<std::unordered_map<std::string, int64_t>>;  // index: order - 1

// Every n-gram of order 1..max_order with its count (d2l_bleu's; sacreBLEU's BLEU matches
// n-grams of token ids in NgramMatcher). Tokens never contain whitespace, so joining them
// with ' ' is as unique a key as Python's tuples.
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

const std::vector<std::string_view>& BleuScorer::preprocess(std::string_view segment, TokenizerBuffers& buffers) const {
  if (options_.lowercase) {
    buffers.lowered = text::python_lower(segment);
    segment = buffers.lowered;
  }
  return tokenize_words(options_.tokenize, text::python_rstrip(segment), buffers);
}

std::vector<std::string> BleuScorer::preprocess(std::string_view segment) const {
  TokenizerBuffers buffers;
  const std::vector<std::string_view>& words = preprocess(segment, buffers);
  return std::vector<std::string>(words.begin(), words.end());
}

namespace {

size_t ngrams_of_order(size_t length, int order) {
  return length >= static_cast<size_t>(order) ? length - static_cast<size_t>(order) + 1 : 0;
}

struct Span {
  size_t begin, end;
};

// Per thread, so that const scorers stay usable from several threads; reused from segment
// to segment, so that scoring a segment allocates nothing but its statistics.
struct Scratch {
  std::vector<uint32_t> hypothesis;  // token ids
  std::vector<int64_t> ref_lens;
  NgramMatcher matcher;
  // segment_stats(hypothesis, references): [0] the hypothesis, [k + 1] reference k
  std::vector<TokenizerBuffers> texts;
  TransientWordIds ids;
  std::vector<uint32_t> references;  // token ids of every reference, reference k at spans[k]
  std::vector<Span> spans;
};
Scratch& scratch() {
  thread_local Scratch s;
  return s;
}

// The statistics of s.hypothesis (token ids) against the references tokens[spans[k]].
BleuStats match_hypothesis(Scratch& s, const uint32_t* tokens, const Span* spans, size_t n_refs, int max_order) {
  BleuStats stats;
  stats.sys_len = static_cast<int64_t>(s.hypothesis.size());
  s.ref_lens.clear();
  s.matcher.start();
  for (size_t k = 0; k < n_refs; ++k) {
    const Span& ref = spans[k];
    s.ref_lens.push_back(static_cast<int64_t>(ref.end - ref.begin));
    s.matcher.add_reference(tokens + ref.begin, ref.end - ref.begin, max_order);
  }
  stats.ref_len = closest_ref_len(stats.sys_len, s.ref_lens);
  stats.counts.assign(static_cast<size_t>(max_order), 0);
  s.matcher.match(s.hypothesis.data(), s.hypothesis.size(), max_order, stats.counts.data());
  stats.totals.resize(static_cast<size_t>(max_order));
  for (int n = 1; n <= max_order; ++n)
    stats.totals[n - 1] = static_cast<int64_t>(ngrams_of_order(s.hypothesis.size(), n));
  return stats;
}

template <typename Strings>
BleuStats sentence_stats(const BleuScorer& scorer, std::string_view hypothesis, const Strings& references) {
  if (references.empty()) throw UsageError("BLEU: no reference given");
  Scratch& s = scratch();
  if (s.texts.size() < references.size() + 1) s.texts.resize(references.size() + 1);
  size_t words = 0;
  for (size_t k = 0; k < references.size(); ++k) words += scorer.preprocess(references[k], s.texts[k + 1]).size();
  s.ids.start(words);
  s.references.clear();
  s.spans.clear();
  for (size_t k = 0; k < references.size(); ++k) {
    const size_t begin = s.references.size();
    for (std::string_view word : s.texts[k + 1].words) s.references.push_back(s.ids.add(word));
    s.spans.push_back(Span{begin, s.references.size()});
  }
  s.hypothesis.clear();
  for (std::string_view word : scorer.preprocess(hypothesis, s.texts[0])) s.hypothesis.push_back(s.ids.find(word));
  return match_hypothesis(s, s.references.data(), s.spans.data(), s.spans.size(), scorer.options().max_ngram_order);
}

}  // namespace

BleuStats BleuScorer::segment_stats(std::string_view hypothesis, const std::vector<std::string>& references) const {
  return sentence_stats(*this, hypothesis, references);
}

BleuStats BleuScorer::segment_stats_of_views(std::string_view hypothesis,
                                             const std::vector<std::string_view>& references) const {
  return sentence_stats(*this, hypothesis, references);
}

struct BleuReferences::Impl {
  BleuScorer scorer;
  size_t streams = 0;
  WordIds<std::string> token_ids;
  std::vector<uint32_t> tokens;  // reference k of segment i: spans[i * streams + k]
  std::vector<Span> spans;
};

BleuReferences::BleuReferences(const BleuScorer& scorer, const std::vector<std::vector<std::string>>& refs_per_stream)
    : impl_(std::make_unique<Impl>(Impl{scorer, refs_per_stream.size(), {}, {}, {}})) {
  if (refs_per_stream.empty()) throw UsageError("BLEU: no reference stream given");
  Impl& r = *impl_;
  TokenizerBuffers buffers;
  for (size_t i = 0; i < refs_per_stream[0].size(); ++i) {
    for (const std::vector<std::string>& stream : refs_per_stream) {
      const size_t begin = r.tokens.size();
      for (std::string_view token : scorer.preprocess(stream.at(i), buffers))
        r.tokens.push_back(r.token_ids.add(std::string(token)));
      r.spans.push_back(Span{begin, r.tokens.size()});
    }
  }
}

BleuReferences::~BleuReferences() = default;

BleuStats BleuReferences::segment_stats(size_t segment, std::string_view hypothesis) const {
  const Impl& r = *impl_;
  if (segment >= r.spans.size() / r.streams) throw std::out_of_range("BleuReferences::segment_stats: no such segment");
  Scratch& s = scratch();
  if (s.texts.empty()) s.texts.resize(1);
  s.hypothesis.clear();
  thread_local std::string key;
  for (std::string_view token : r.scorer.preprocess(hypothesis, s.texts[0])) {
    key.assign(token);
    s.hypothesis.push_back(r.token_ids.find(key));
  }
  return match_hypothesis(s, r.tokens.data(), r.spans.data() + segment * r.streams, r.streams,
                          r.scorer.options().max_ngram_order);
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
  const BleuReferences references(*this, refs_per_stream);
  for (size_t i = 0; i < hyps.size(); ++i) total += references.segment_stats(i, hyps[i]);
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
