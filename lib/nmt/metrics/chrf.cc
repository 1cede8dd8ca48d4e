#include "nmt/metrics/chrf.h"

#include <algorithm>
#include <deque>
#include <unordered_map>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "nmt/metrics/bleu.h"  // kSacreBleuVersion
#include "nmt/text/unicode.h"
#include "nmt/util/error.h"

namespace nmt::metrics {
namespace {

// string.punctuation, which chrF++ splits off word edges.
bool is_ascii_punct(char32_t c) {
  return (c >= 0x21 && c <= 0x2F) || (c >= 0x3A && c <= 0x40) || (c >= 0x5B && c <= 0x60) ||
         (c >= 0x7B && c <= 0x7E);
}

// CHRF._remove_punctuation: splits one leading or trailing punctuation mark off each word.
std::vector<std::u32string> remove_punctuation(std::u32string_view sent) {
  std::vector<std::u32string> out;
  for (std::u32string& w : text::python_split(sent)) {
    if (w.size() == 1) {
      out.push_back(std::move(w));
    } else if (is_ascii_punct(w.back())) {
      out.push_back(w.substr(0, w.size() - 1));
      out.push_back(w.substr(w.size() - 1));
    } else if (is_ascii_punct(w.front())) {
      out.push_back(w.substr(0, 1));
      out.push_back(w.substr(1));
    } else {
      out.push_back(std::move(w));
    }
  }
  return out;
}

using Counter = std::unordered_map<std::u32string_view, int64_t>;

// The n-gram counts of one (preprocessed) segment: character orders 1..char_order
// (helpers.extract_all_char_ngrams), then word orders 1..word_order. Keys are views into
// strings owned here, which is why the table is built in place and never copied or moved.
class NgramTable {
 public:
  NgramTable(std::u32string_view segment, const ChrfOptions& o) {
    chars_ = o.whitespace ? std::u32string(segment) : text::remove_python_spaces(segment);
    const std::u32string_view line = chars_;
    orders.reserve(static_cast<size_t>(o.char_order + o.word_order));
    for (int n = 1; n <= o.char_order; ++n) {
      Counter& c = orders.emplace_back();
      if (line.size() >= static_cast<size_t>(n)) c.reserve(line.size() - n + 1);
      for (size_t i = 0; i + n <= line.size(); ++i) ++c[line.substr(i, n)];
    }
    if (o.word_order > 0) {
      const std::vector<std::u32string> words = remove_punctuation(segment);
      for (int n = 1; n <= o.word_order; ++n) {
        Counter& c = orders.emplace_back();
        for (size_t i = 0; i + n <= words.size(); ++i) {
          std::u32string& key = keys_.emplace_back(words[i]);
          for (int j = 1; j < n; ++j) {
            key.push_back(U' ');
            key += words[i + j];
          }
          ++c[key];
        }
      }
    }
  }
  NgramTable(const NgramTable&) = delete;
  NgramTable& operator=(const NgramTable&) = delete;

  std::vector<Counter> orders;

 private:
  std::u32string chars_;
  std::deque<std::u32string> keys_;  // deque: growing it never moves the stored strings
};

}  // namespace

ChrfStats& ChrfStats::operator+=(const ChrfStats& other) {
  if (values.size() < other.values.size()) values.resize(other.values.size(), 0);
  for (size_t i = 0; i < other.values.size(); ++i) values[i] += other.values[i];
  return *this;
}

std::string ChrfScore::text_line(int width) const {
  return fmt::format("{}|{} = {:.{}f}", name, signature, score, width);
}

void to_json(nlohmann::json& j, const ChrfScore& s) {
  j = nlohmann::json{{"name", s.name}, {"score", s.score}, {"signature", s.signature}};
}

ChrfScorer::ChrfScorer(ChrfOptions options) : options_(options) {
  if (options_.char_order < 0 || options_.word_order < 0 || options_.char_order + options_.word_order < 1)
    throw UsageError("chrF: character and word orders must be >= 0 and not both 0");
}

std::string ChrfScorer::name() const { return fmt::format("chrF{}{}", options_.beta, std::string(options_.word_order, '+')); }

std::string ChrfScorer::signature(size_t num_refs) const {
  return fmt::format("nrefs:{}|case:{}|eff:{}|nc:{}|nw:{}|space:{}|version:{}", num_refs,
                     options_.lowercase ? "lc" : "mixed", options_.eps_smoothing ? "no" : "yes", options_.char_order,
                     options_.word_order, options_.whitespace ? "yes" : "no", kSacreBleuVersion);
}

double ChrfScorer::f_score(const ChrfStats& stats) const {
  // Mirrors CHRF._compute_f_score, operation for operation.
  const double eps = 1e-16;
  const int order = options_.char_order + options_.word_order;
  const double factor = static_cast<double>(options_.beta) * options_.beta;
  double score = 0.0, avg_prec = 0.0, avg_rec = 0.0;
  int effective_order = 0;
  for (int i = 0; i < order; ++i) {
    const size_t base = 3 * static_cast<size_t>(i);
    const int64_t n_hyp = base < stats.values.size() ? stats.values[base] : 0;
    const int64_t n_ref = base + 1 < stats.values.size() ? stats.values[base + 1] : 0;
    const int64_t n_match = base + 2 < stats.values.size() ? stats.values[base + 2] : 0;
    const double prec = n_hyp > 0 ? static_cast<double>(n_match) / static_cast<double>(n_hyp) : eps;
    const double rec = n_ref > 0 ? static_cast<double>(n_match) / static_cast<double>(n_ref) : eps;
    const double denom = factor * prec + rec;
    score += denom > 0 ? (1 + factor) * prec * rec / denom : eps;
    if (n_hyp > 0 && n_ref > 0) {
      avg_prec += prec;
      avg_rec += rec;
      ++effective_order;
    }
  }
  if (options_.eps_smoothing) return 100 * score / order;
  if (effective_order == 0) {
    avg_prec = avg_rec = 0.0;
  } else {
    avg_prec /= effective_order;
    avg_rec /= effective_order;
  }
  if (avg_prec + avg_rec != 0) {
    score = (1 + factor) * avg_prec * avg_rec;
    score /= (factor * avg_prec) + avg_rec;
    return 100 * score;
  }
  return 0.0;
}

ChrfStats ChrfScorer::segment_stats(std::string_view hypothesis, const std::vector<std::string>& references) const {
  if (references.empty()) throw UsageError("chrF: no reference given");
  const auto prepare = [&](std::string_view s) {
    std::u32string t = text::decode_utf8(s);
    return options_.lowercase ? text::python_lower(t) : t;
  };

  const NgramTable hyp_table(prepare(hypothesis), options_);
  const std::vector<Counter>& hyp = hyp_table.orders;
  ChrfStats best;
  double best_f = -1.0;
  for (const std::string& reference : references) {
    const NgramTable ref_table(prepare(reference), options_);
    const std::vector<Counter>& ref = ref_table.orders;
    ChrfStats stats;
    stats.values.reserve(3 * hyp.size());
    for (size_t o = 0; o < hyp.size(); ++o) {
      int64_t hyp_count = 0, ref_count = 0, matches = 0;
      for (const auto& [gram, count] : hyp[o]) {
        hyp_count += count;
        auto it = ref[o].find(gram);
        if (it != ref[o].end()) matches += std::min(count, it->second);
      }
      for (const auto& entry : ref[o]) ref_count += entry.second;
      // Hypothesis n-grams do not count when the reference has none of that order.
      stats.values.push_back(ref[o].empty() ? 0 : hyp_count);
      stats.values.push_back(ref_count);
      stats.values.push_back(matches);
    }
    double f = f_score(stats);
    if (f > best_f) {
      best_f = f;
      best = std::move(stats);
    }
  }
  return best;
}

ChrfScore ChrfScorer::corpus_score(const std::vector<std::string>& hyps,
                                   const std::vector<std::vector<std::string>>& refs_per_stream) const {
  if (refs_per_stream.empty()) throw UsageError("chrF: no reference stream given");
  for (size_t k = 0; k < refs_per_stream.size(); ++k) {
    if (refs_per_stream[k].size() != hyps.size())
      throw UsageError(fmt::format("chrF: {} hypotheses but reference stream {} has {} lines", hyps.size(), k + 1,
                                   refs_per_stream[k].size()));
  }
  ChrfStats total;
  total.values.assign(3 * static_cast<size_t>(options_.char_order + options_.word_order), 0);
  std::vector<std::string> refs(refs_per_stream.size());
  for (size_t i = 0; i < hyps.size(); ++i) {
    for (size_t k = 0; k < refs_per_stream.size(); ++k) refs[k] = refs_per_stream[k][i];
    total += segment_stats(hyps[i], refs);
  }
  return ChrfScore{f_score(total), name(), signature(refs_per_stream.size())};
}

ChrfScore ChrfScorer::sentence_score(std::string_view hypothesis, const std::vector<std::string>& references) const {
  return ChrfScore{f_score(segment_stats(hypothesis, references)), name(), signature(references.size())};
}

}  // namespace nmt::metrics
