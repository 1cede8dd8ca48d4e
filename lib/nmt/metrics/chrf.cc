#include "nmt/metrics/chrf.h"

#include <algorithm>
#include <memory>
#include <stdexcept>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "nmt/metrics/bleu.h"  // kSacreBleuVersion
#include "nmt/metrics/ngram_match.h"
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

// A segment as chrF compares it: its code points (whitespace removed unless kept), then for
// chrF++ its words, ids in `words`.
struct Symbols {
  std::vector<uint32_t> chars;
  std::vector<uint32_t> words;
};

// Decodes, lowercases if asked, and fills `out.chars`; returns the decoded (lowercased) text.
std::u32string_view prepare_chars(std::string_view utf8, const ChrfOptions& o, std::u32string& decoded,
                                  std::u32string& lowered, Symbols& out) {
  text::Utf8Problem problem;
  if (!text::try_decode_utf8(utf8, decoded, &problem)) throw text::Utf8Error(problem);
  std::u32string_view segment = decoded;
  if (o.lowercase) segment = lowered = text::python_lower(segment);
  out.chars.clear();
  for (char32_t c : segment)
    if (o.whitespace || !text::is_python_space(c)) out.chars.push_back(static_cast<uint32_t>(c));
  return segment;
}

// Per thread, so that const scorers stay usable from several threads; reused from segment
// to segment, so that scoring allocates nothing once the buffers have grown.
struct Scratch {
  std::u32string decoded, lowered;
  Symbols hypothesis;
  NgramMatcher matcher;
};
Scratch& scratch() {
  thread_local Scratch s;
  return s;
}

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

size_t ngrams_of_order(size_t length, int order) {
  return length >= static_cast<size_t>(order) ? length - static_cast<size_t>(order) + 1 : 0;
}

// Appends [hyp n-grams, ref n-grams, matches] for orders 1..max_order of one symbol kind.
void append_order_stats(const std::vector<uint32_t>& hyp, const uint32_t* ref, size_t ref_size, int max_order,
                        NgramMatcher& matcher, std::vector<int64_t>& values) {
  if (max_order <= 0) return;
  std::vector<int64_t> matches(static_cast<size_t>(max_order), 0);
  matcher.start();
  matcher.add_reference(ref, ref_size, max_order);
  matcher.match(hyp.data(), hyp.size(), max_order, matches.data());
  for (int n = 1; n <= max_order; ++n) {
    const auto ref_count = static_cast<int64_t>(ngrams_of_order(ref_size, n));
    // Hypothesis n-grams do not count when the reference has none of that order.
    values.push_back(ref_count == 0 ? 0 : static_cast<int64_t>(ngrams_of_order(hyp.size(), n)));
    values.push_back(ref_count);
    values.push_back(matches[static_cast<size_t>(n) - 1]);
  }
}

}  // namespace

ChrfStats ChrfScorer::segment_stats(std::string_view hypothesis, const std::vector<std::string>& references) const {
  if (references.empty()) throw UsageError("chrF: no reference given");
  std::vector<std::vector<std::string>> streams;
  for (const std::string& reference : references) streams.push_back({reference});
  return ChrfReferences(*this, streams).segment_stats(0, hypothesis);
}

struct ChrfReferences::Impl {
  // Where reference k of segment i lies in `chars` and `words`: spans[i * streams + k].
  struct Span {
    size_t chars_begin, chars_end, words_begin, words_end;
  };
  ChrfScorer scorer;
  size_t streams = 0;
  WordIds<std::u32string> word_ids;  // chrF++'s words
  std::vector<uint32_t> chars, words;
  std::vector<Span> spans;
};

ChrfReferences::ChrfReferences(const ChrfScorer& scorer, const std::vector<std::vector<std::string>>& refs_per_stream)
    : impl_(std::make_unique<Impl>(Impl{scorer, refs_per_stream.size(), {}, {}, {}, {}})) {
  if (refs_per_stream.empty()) throw UsageError("chrF: no reference stream given");
  const ChrfOptions& o = scorer.options();
  Impl& r = *impl_;
  std::u32string decoded, lowered;
  Symbols symbols;
  for (size_t i = 0; i < refs_per_stream[0].size(); ++i) {
    for (const std::vector<std::string>& stream : refs_per_stream) {
      const std::u32string_view text = prepare_chars(stream.at(i), o, decoded, lowered, symbols);
      Impl::Span span{r.chars.size(), 0, r.words.size(), 0};
      r.chars.insert(r.chars.end(), symbols.chars.begin(), symbols.chars.end());
      if (o.word_order > 0)
        for (std::u32string& word : remove_punctuation(text)) r.words.push_back(r.word_ids.add(std::move(word)));
      span.chars_end = r.chars.size();
      span.words_end = r.words.size();
      r.spans.push_back(span);
    }
  }
}

ChrfReferences::~ChrfReferences() = default;

size_t ChrfReferences::size() const { return impl_->spans.size() / impl_->streams; }

ChrfStats ChrfReferences::segment_stats(size_t segment, std::string_view hypothesis) const {
  const Impl& r = *impl_;
  if (segment >= size()) throw std::out_of_range("ChrfReferences::segment_stats: no such segment");
  const ChrfOptions& o = r.scorer.options();
  Scratch& s = scratch();
  Symbols& hyp = s.hypothesis;
  const std::u32string_view text = prepare_chars(hypothesis, o, s.decoded, s.lowered, hyp);
  hyp.words.clear();
  if (o.word_order > 0)
    for (const std::u32string& word : remove_punctuation(text)) hyp.words.push_back(r.word_ids.find(word));
  // The statistics against the reference with the best sentence F (the first on a tie).
  ChrfStats best;
  double best_f = -1.0;
  for (size_t k = 0; k < r.streams; ++k) {
    const Impl::Span& ref = r.spans[segment * r.streams + k];
    ChrfStats stats;
    stats.values.reserve(3 * static_cast<size_t>(o.char_order + o.word_order));
    append_order_stats(hyp.chars, r.chars.data() + ref.chars_begin, ref.chars_end - ref.chars_begin, o.char_order,
                       s.matcher, stats.values);
    append_order_stats(hyp.words, r.words.data() + ref.words_begin, ref.words_end - ref.words_begin, o.word_order,
                       s.matcher, stats.values);
    const double f = r.scorer.f_score(stats);
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
  const ChrfReferences references(*this, refs_per_stream);
  for (size_t i = 0; i < hyps.size(); ++i) total += references.segment_stats(i, hyps[i]);
  return ChrfScore{f_score(total), name(), signature(refs_per_stream.size())};
}

ChrfScore ChrfScorer::sentence_score(std::string_view hypothesis, const std::vector<std::string>& references) const {
  return ChrfScore{f_score(segment_stats(hypothesis, references)), name(), signature(references.size())};
}

}  // namespace nmt::metrics
