#include "nmt/metrics/chrf.h"

#include <algorithm>
#include <deque>
#include <memory>

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

// The distinct n-grams of one order with their counts, sorted by key: matching two segments
// is then a merge, with no hashing or per-n-gram allocation (hash maps took most of the time
// of scoring a test set). Character n-grams of up to 6 code points (21 bits each) are packed
// into one 128-bit integer, which compares far faster than a string; longer ones and word
// n-grams are keyed by their text.
using Packed = unsigned __int128;
constexpr int kMaxPackedOrder = 6;

template <typename Key>
std::vector<std::pair<Key, int64_t>> count_sorted(std::vector<Key>& grams) {
  std::sort(grams.begin(), grams.end());
  std::vector<std::pair<Key, int64_t>> out;
  for (size_t i = 0; i < grams.size();) {
    size_t j = i + 1;
    while (j < grams.size() && grams[j] == grams[i]) ++j;
    out.emplace_back(grams[i], static_cast<int64_t>(j - i));
    i = j;
  }
  return out;
}

template <typename Key>
int64_t sorted_matches(const std::vector<std::pair<Key, int64_t>>& a, const std::vector<std::pair<Key, int64_t>>& b) {
  int64_t matches = 0;
  for (auto x = a.begin(), y = b.begin(); x != a.end() && y != b.end();) {
    if (x->first < y->first) ++x;
    else if (y->first < x->first) ++y;
    else matches += std::min((x++)->second, (y++)->second);
  }
  return matches;
}

struct Counter {
  std::vector<std::pair<Packed, int64_t>> packed;
  std::vector<std::pair<std::u32string_view, int64_t>> text;
  int64_t total() const {
    int64_t t = 0;
    for (const auto& e : packed) t += e.second;
    for (const auto& e : text) t += e.second;
    return t;
  }
  bool empty() const { return packed.empty() && text.empty(); }
  int64_t matches(const Counter& other) const {
    return sorted_matches(packed, other.packed) + sorted_matches(text, other.text);
  }
};

// The n-gram counts of one (preprocessed) segment: character orders 1..char_order
// (helpers.extract_all_char_ngrams), then word orders 1..word_order. Keys are views into
// strings owned here, which is why the table is built in place and never copied or moved.
class NgramTable {
 public:
  NgramTable(std::u32string_view segment, const ChrfOptions& o) {
    chars_ = o.whitespace ? std::u32string(segment) : text::remove_python_spaces(segment);
    const std::u32string_view line = chars_;
    orders.reserve(static_cast<size_t>(o.char_order + o.word_order));
    std::vector<std::u32string_view> grams;
    std::vector<Packed> packed;
    for (int n = 1; n <= o.char_order; ++n) {
      Counter& c = orders.emplace_back();
      if (n <= kMaxPackedOrder) {
        packed.clear();
        for (size_t i = 0; i + n <= line.size(); ++i) {
          Packed key = 0;
          for (int j = 0; j < n; ++j) key = (key << 21) | static_cast<Packed>(line[i + j]);
          packed.push_back(key);
        }
        c.packed = count_sorted(packed);
      } else {
        grams.clear();
        for (size_t i = 0; i + n <= line.size(); ++i) grams.push_back(line.substr(i, n));
        c.text = count_sorted(grams);
      }
    }
    if (o.word_order > 0) {
      const std::vector<std::u32string> words = remove_punctuation(segment);
      for (int n = 1; n <= o.word_order; ++n) {
        grams.clear();
        for (size_t i = 0; i + n <= words.size(); ++i) {
          std::u32string& key = keys_.emplace_back(words[i]);
          for (int j = 1; j < n; ++j) {
            key.push_back(U' ');
            key += words[i + j];
          }
          grams.push_back(key);
        }
        orders.emplace_back().text = count_sorted(grams);
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

namespace {

std::u32string prepare(std::string_view s, const ChrfOptions& o) {
  std::u32string t = text::decode_utf8(s);
  return o.lowercase ? text::python_lower(t) : t;
}

// The statistics against the reference with the best sentence F (the first on a tie).
template <typename RefTables>
ChrfStats best_stats(const ChrfScorer& scorer, const NgramTable& hyp_table, const RefTables& refs) {
  const std::vector<Counter>& hyp = hyp_table.orders;
  ChrfStats best;
  double best_f = -1.0;
  for (const auto& ref_table : refs) {
    const std::vector<Counter>& ref = ref_table->orders;
    ChrfStats stats;
    stats.values.reserve(3 * hyp.size());
    for (size_t o = 0; o < hyp.size(); ++o) {
      const int64_t hyp_count = hyp[o].total(), ref_count = ref[o].total(), matches = hyp[o].matches(ref[o]);
      // Hypothesis n-grams do not count when the reference has none of that order.
      stats.values.push_back(ref[o].empty() ? 0 : hyp_count);
      stats.values.push_back(ref_count);
      stats.values.push_back(matches);
    }
    double f = scorer.f_score(stats);
    if (f > best_f) {
      best_f = f;
      best = std::move(stats);
    }
  }
  return best;
}

}  // namespace

ChrfStats ChrfScorer::segment_stats(std::string_view hypothesis, const std::vector<std::string>& references) const {
  if (references.empty()) throw UsageError("chrF: no reference given");
  const NgramTable hyp_table(prepare(hypothesis, options_), options_);
  std::vector<std::unique_ptr<NgramTable>> refs;
  for (const std::string& reference : references)
    refs.push_back(std::make_unique<NgramTable>(prepare(reference, options_), options_));
  return best_stats(*this, hyp_table, refs);
}

struct ChrfReferences::Impl {
  ChrfScorer scorer;
  std::vector<std::vector<std::unique_ptr<NgramTable>>> tables;  // [segment][reference]
};

ChrfReferences::ChrfReferences(const ChrfScorer& scorer, const std::vector<std::vector<std::string>>& refs_per_stream)
    : impl_(std::make_unique<Impl>(Impl{scorer, {}})) {
  if (refs_per_stream.empty()) throw UsageError("chrF: no reference stream given");
  impl_->tables.resize(refs_per_stream[0].size());
  for (size_t i = 0; i < impl_->tables.size(); ++i)
    for (const std::vector<std::string>& stream : refs_per_stream)
      impl_->tables[i].push_back(
          std::make_unique<NgramTable>(prepare(stream.at(i), scorer.options()), scorer.options()));
}

ChrfReferences::~ChrfReferences() = default;

size_t ChrfReferences::size() const { return impl_->tables.size(); }

ChrfStats ChrfReferences::segment_stats(size_t segment, std::string_view hypothesis) const {
  const NgramTable hyp_table(prepare(hypothesis, impl_->scorer.options()), impl_->scorer.options());
  return best_stats(impl_->scorer, hyp_table, impl_->tables.at(segment));
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
