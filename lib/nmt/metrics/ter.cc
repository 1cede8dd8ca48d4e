#include "nmt/metrics/ter.h"

#include <algorithm>
#include <cmath>
#include <tuple>
#include <unordered_map>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "nmt/metrics/bleu.h"  // kSacreBleuVersion
#include "nmt/metrics/tokenizer.h"
#include "nmt/text/unicode.h"
#include "nmt/util/error.h"

namespace nmt::metrics {
namespace {

// lib_ter.py's limits: Tercom's, plus sacreBLEU's cap on candidates per segment.
constexpr int kMaxShiftSize = 10;
constexpr int kMaxShiftDist = 50;
constexpr int kBeamWidth = 25;
constexpr int kMaxShiftCandidates = 1000;
// sacreBLEU's int(1e16) for cells outside the beam: only compared and incremented, so any
// value far above a real edit count behaves the same.
constexpr int32_t kInfinity = 1 << 30;

constexpr char kOpNop = ' ', kOpSub = 's', kOpIns = 'i', kOpDel = 'd', kOpUndef = 'x';

struct Cell {
  int32_t cost;
  char op;
};

// ---- Tercom normaliser -------------------------------------------------------------------


// tokenizer_ter._normalize_general_and_western. Its "'s$" rule can never fire: the sentence
// was padded with a trailing space just before.
std::string normalize_western(std::string_view sent) {
  std::string s = replace_all(sent, "\n-", "");
  s = replace_all(s, "\n", " ");
  s = replace_all(s, "&quot;", "\"");
  s = replace_all(s, "&amp;", "&");
  s = replace_all(s, "&lt;", "<");
  s = replace_all(s, "&gt;", ">");
  s = detail::pad_mteval_symbols(" " + s + " ");
  s = replace_all(s, "'s ", " 's ");
  return detail::split_mteval_periods_and_dashes(s);
}

bool is_asian_punct(char32_t c) {  // TercomTokenizer.ASIAN_PUNCT
  return c == 0x3001 || c == 0x3002 || (c >= 0x3008 && c <= 0x3011) || (c >= 0x3014 && c <= 0x301F) ||
         (c >= 0xFF61 && c <= 0xFF65) || c == 0x30FB;
}

bool is_full_width_punct(char32_t c) {  // TercomTokenizer.FULL_WIDTH_PUNCT
  return c == 0xFF0E || c == 0xFF0C || c == 0xFF1F || c == 0xFF1A || c == 0xFF1B || c == 0xFF01 || c == 0xFF02 ||
         c == 0xFF08 || c == 0xFF09;
}

// The characters _normalize_asian surrounds with spaces. Its rules are single-character
// classes applied one after the other; a character in two of them only gains more spaces,
// which the final split removes, so one pass does. The three Hiragana/Katakana rules are
// anchored at the start of the string, which at that point is always the padding space, so
// they never match.
bool is_spaced_asian(char32_t c) {
  return (c >= 0x4E00 && c <= 0x9FFF) || (c >= 0x3400 && c <= 0x4DBF) || (c >= 0x31C0 && c <= 0x31EF) ||
         (c >= 0x2E80 && c <= 0x2EFF) || (c >= 0x3300 && c <= 0x33FF) || (c >= 0xF900 && c <= 0xFAFF) ||
         (c >= 0xFE30 && c <= 0xFE4F) || (c >= 0x3200 && c <= 0x3F22) || is_asian_punct(c) ||
         is_full_width_punct(c);
}

bool is_removed_punct(char32_t c) {  // [\.,\?:;!\"\(\)]
  return c == '.' || c == ',' || c == '?' || c == ':' || c == ';' || c == '!' || c == '"' || c == '(' || c == ')';
}

// ---- edit distance ----------------------------------------------------------------------

// BeamEditDistance for one reference: rows of the (hyp + 1) x (ref + 1) matrix, each row
// computed only within a beam around the length-scaled diagonal.
class BeamEditDistance {
 public:
  BeamEditDistance(const std::vector<int>& ref, size_t n_hyp) : ref_(ref), n_hyp_(n_hyp), width_(ref.size() + 1) {
    // All hypotheses of one segment have the same length, so the beam is fixed.
    ratio_ = n_hyp ? static_cast<double>(ref.size()) / static_cast<double>(n_hyp) : 1.0;
    beam_ = kBeamWidth < ratio_ / 2 ? static_cast<int64_t>(std::ceil(ratio_ / 2 + kBeamWidth)) : kBeamWidth;
    initial_.resize(width_);
    for (size_t j = 0; j < width_; ++j) initial_[j] = Cell{static_cast<int32_t>(j), kOpIns};
  }

  // The whole matrix of `hyp` into `rows` ((n_hyp + 1) * width); returns the distance.
  int32_t full(const std::vector<int>& hyp, std::vector<Cell>& rows) const {
    rows.assign((n_hyp_ + 1) * width_, Cell{kInfinity, kOpUndef});
    std::copy(initial_.begin(), initial_.end(), rows.begin());
    for (size_t i = 1; i <= n_hyp_; ++i) fill_row(hyp[i - 1], i, &rows[(i - 1) * width_], &rows[i * width_]);
    return rows[n_hyp_ * width_ + width_ - 1].cost;
  }

  // The distance of `hyp`, whose first `prefix` words are those that produced `base_rows`.
  int32_t from_prefix(const std::vector<int>& hyp, const std::vector<Cell>& base_rows, size_t prefix) const {
    if (prefix == n_hyp_) return base_rows[n_hyp_ * width_ + width_ - 1].cost;
    prev_.assign(base_rows.begin() + prefix * width_, base_rows.begin() + (prefix + 1) * width_);
    for (size_t i = prefix + 1; i <= n_hyp_; ++i) {
      cur_.assign(width_, Cell{kInfinity, kOpUndef});
      fill_row(hyp[i - 1], i, prev_.data(), cur_.data());
      std::swap(prev_, cur_);
    }
    return prev_[width_ - 1].cost;
  }

  // The edit operations of a full matrix, from its first cell to its last.
  std::string trace(const std::vector<Cell>& rows) const {
    std::string ops;
    size_t i = n_hyp_, j = ref_.size();
    while (i > 0 || j > 0) {
      const char op = rows[i * width_ + j].op;
      ops.push_back(op);
      if (op == kOpSub || op == kOpNop) {
        --i;
        --j;
      } else if (op == kOpIns) {
        --j;
      } else if (op == kOpDel) {
        --i;
      } else {
        throw RuntimeError("TER: edit distance trace left the beam (a segment too unbalanced for sacreBLEU's TER)");
      }
    }
    std::reverse(ops.begin(), ops.end());
    return ops;
  }

 private:
  // Row i of BeamEditDistance._edit_distance from row i - 1. Tercom prefers no-op or
  // substitution, then deletion, then insertion (ties keep the first).
  void fill_row(int word, size_t i, const Cell* prev, Cell* cur) const {
    const int64_t pseudo_diag = static_cast<int64_t>(std::floor(static_cast<double>(i) * ratio_));
    const int64_t min_j = std::max<int64_t>(0, pseudo_diag - beam_);
    int64_t max_j = std::min<int64_t>(static_cast<int64_t>(width_), pseudo_diag + beam_);
    if (i == n_hyp_) max_j = static_cast<int64_t>(width_);
    for (int64_t j = min_j; j < max_j; ++j) {
      if (j == 0) {
        cur[0] = Cell{prev[0].cost + 1, kOpDel};
        continue;
      }
      Cell best = cur[j];
      const bool same = word == ref_[j - 1];
      const int32_t sub = prev[j - 1].cost + (same ? 0 : 1);
      if (best.cost > sub) best = Cell{sub, same ? kOpNop : kOpSub};
      const int32_t del = prev[j].cost + 1;
      if (best.cost > del) best = Cell{del, kOpDel};
      const int32_t ins = cur[j - 1].cost + 1;
      if (best.cost > ins) best = Cell{ins, kOpIns};
      cur[j] = best;
    }
  }

  const std::vector<int>& ref_;
  size_t n_hyp_;
  size_t width_;
  double ratio_ = 1.0;
  int64_t beam_ = kBeamWidth;
  std::vector<Cell> initial_;
  mutable std::vector<Cell> prev_, cur_;
};

// trace_to_alignment on the flipped trace (rewriting the reference into the hypothesis):
// for each reference position the hypothesis position it aligns to, and which positions
// on either side are errors.
struct Alignment {
  std::vector<int> align;  // per reference position; -1 before the first hypothesis word
  std::vector<int> ref_err;
  std::vector<int> hyp_err;
};

Alignment align_trace(const std::string& trace) {
  Alignment a;
  int pos_hyp = -1;
  for (char op : trace) {
    switch (op) {  // the flipped operations: insertions become deletions and vice versa
      case kOpNop:
      case kOpSub:
        ++pos_hyp;
        a.align.push_back(pos_hyp);
        a.hyp_err.push_back(op == kOpSub);
        a.ref_err.push_back(op == kOpSub);
        break;
      case kOpDel:  // flipped: insertion of a hypothesis word
        ++pos_hyp;
        a.hyp_err.push_back(1);
        break;
      case kOpIns:  // flipped: deletion of a reference word
        a.align.push_back(pos_hyp);
        a.ref_err.push_back(1);
        break;
    }
  }
  return a;
}

// lib_ter._perform_shift, with Python's clamped slices.
void perform_shift(const std::vector<int>& words, int start, int length, int target, std::vector<int>& out) {
  const int n = static_cast<int>(words.size());
  const auto append = [&](int from, int to) {
    from = std::clamp(from, 0, n);
    to = std::clamp(to, 0, n);
    if (from < to) out.insert(out.end(), words.begin() + from, words.begin() + to);
  };
  out.clear();
  if (target < start) {
    append(0, target);
    append(start, start + length);
    append(target, start);
    append(start + length, n);
  } else if (target > start + length) {
    append(0, start);
    append(start + length, target);
    append(start, start + length);
    append(target, n);
  } else {
    append(0, start);
    append(start + length, length + target);
    append(start, start + length);
    append(length + target, n);
  }
}

struct ShiftResult {
  int32_t delta = 0;
  std::vector<int> words;
};

// lib_ter._shift: the best single shift of a block of hypothesis words onto a matching block
// of the reference, ranked as Tercom ranks them (edit distance gain, then longer blocks, then
// earlier blocks, then earlier targets). `checked` counts candidates across calls.
ShiftResult best_shift(const std::vector<int>& hyp, const std::vector<int>& ref, const BeamEditDistance& ed,
                       int& checked) {
  std::vector<Cell> rows;
  const int32_t pre_score = ed.full(hyp, rows);
  const Alignment a = align_trace(ed.trace(rows));
  const int n_h = static_cast<int>(hyp.size()), n_r = static_cast<int>(ref.size());

  bool found = false;
  std::tuple<int32_t, int, int, int> best{};  // (gain, length, -start_h, -idx)
  ShiftResult result;
  std::vector<int> shifted;
  shifted.reserve(hyp.size());

  // _find_shifted_pairs order: every hypothesis start, every reference start, growing length.
  for (int start_h = 0; start_h < n_h && checked < kMaxShiftCandidates; ++start_h) {
    for (int start_r = 0; start_r < n_r; ++start_r) {
      if (std::abs(start_r - start_h) > kMaxShiftDist) continue;
      int hyp_errors = 0, ref_errors = 0;
      for (int length = 1; length <= kMaxShiftSize; ++length) {
        if (hyp[start_h + length - 1] != ref[start_r + length - 1]) break;
        hyp_errors += a.hyp_err[start_h + length - 1];
        ref_errors += a.ref_err[start_r + length - 1];
        const bool consumed = start_h + length == n_h || start_r + length == n_r;
        // Shift only when the hypothesis block is wrong, the reference position is not
        // matched yet, and the target is outside the block itself.
        const int aligned = a.align[start_r];
        if (hyp_errors != 0 && ref_errors != 0 && !(start_h <= aligned && aligned < start_h + length)) {
          int prev_idx = -1;
          for (int offset = -1; offset < length; ++offset) {
            int idx;
            if (start_r + offset == -1) idx = 0;
            else if (start_r + offset < n_r) idx = a.align[start_r + offset] + 1;  // before, unlike Tercom
            else break;
            if (idx == prev_idx) continue;
            prev_idx = idx;
            perform_shift(hyp, start_h, length, idx, shifted);
            const size_t prefix = static_cast<size_t>(
                std::mismatch(hyp.begin(), hyp.end(), shifted.begin()).first - hyp.begin());
            const std::tuple<int32_t, int, int, int> candidate{pre_score - ed.from_prefix(shifted, rows, prefix),
                                                               length, -start_h, -idx};
            ++checked;
            if (!found || candidate > best) {
              found = true;
              best = candidate;
              result.words = shifted;
            }
          }
        }
        if (checked >= kMaxShiftCandidates) break;
        if (consumed) break;
      }
      if (checked >= kMaxShiftCandidates) break;
    }
  }
  if (!found) {
    result.words = hyp;
    return result;
  }
  result.delta = std::get<0>(best);
  return result;
}

}  // namespace

std::string tercom_tokenize(std::string_view segment, const TerOptions& o) {
  if (segment.empty()) return "";
  std::string sent = o.case_sensitive ? std::string(segment) : text::python_lower(segment);
  if (o.normalized) sent = normalize_western(sent);
  const bool asian_spacing = o.normalized && o.asian_support;
  const bool remove_punct = o.no_punct;
  const bool remove_asian = o.no_punct && o.asian_support;
  std::u32string chars;
  for (char32_t c : text::decode_utf8(sent)) {
    const bool spaced = asian_spacing && is_spaced_asian(c);
    const bool removed = (remove_punct && is_removed_punct(c)) ||
                         (remove_asian && (is_asian_punct(c) || is_full_width_punct(c)));
    if (removed) {
      if (spaced) chars.push_back(U' ');  // normalised first: the spaces around it stay
      continue;
    }
    if (spaced) chars += {U' ', c, U' '};
    else chars.push_back(c);
  }
  std::string joined;
  for (const std::u32string& word : text::python_split(chars)) {
    if (!joined.empty()) joined.push_back(' ');
    joined += text::encode_utf8(word);
  }
  return joined;
}

int64_t translation_edit_rate(const std::vector<std::string>& hyp_words, const std::vector<std::string>& ref_words) {
  if (ref_words.empty()) return static_cast<int64_t>(hyp_words.size());
  // Words as small integers: only equality matters.
  std::unordered_map<std::string_view, int> ids;
  const auto to_ids = [&](const std::vector<std::string>& words) {
    std::vector<int> out;
    out.reserve(words.size());
    for (const std::string& w : words) out.push_back(ids.emplace(w, static_cast<int>(ids.size())).first->second);
    return out;
  };
  const std::vector<int> ref = to_ids(ref_words);
  std::vector<int> hyp = to_ids(hyp_words);

  const BeamEditDistance ed(ref, hyp.size());
  int64_t shifts = 0;
  int checked = 0;
  while (true) {
    ShiftResult shift = best_shift(hyp, ref, ed, checked);
    // Reaching the candidate cap discards the shift just found, as sacreBLEU does.
    if (checked >= kMaxShiftCandidates || shift.delta <= 0) break;
    ++shifts;
    hyp = std::move(shift.words);
  }
  std::vector<Cell> rows;
  return shifts + ed.full(hyp, rows);
}

std::string TerScore::text_line(int width) const {
  return fmt::format("TER|{} = {:.{}f}", signature, score, width);
}

void to_json(nlohmann::json& j, const TerScore& s) {
  j = nlohmann::json{{"name", "TER"},
                     {"score", s.score},
                     {"num_edits", s.num_edits},
                     {"ref_length", s.ref_length},
                     {"signature", s.signature}};
}

std::string TerScorer::signature(size_t num_refs) const {
  return fmt::format("nrefs:{}|case:{}|tok:tercom|norm:{}|punct:{}|asian:{}|version:{}", num_refs,
                     options_.case_sensitive ? "mixed" : "lc", options_.normalized ? "yes" : "no",
                     options_.no_punct ? "no" : "yes", options_.asian_support ? "yes" : "no", kSacreBleuVersion);
}

std::vector<std::string> TerScorer::preprocess(std::string_view segment) const {
  return text::python_split(tercom_tokenize(text::python_rstrip(segment), options_));
}

TerStats TerScorer::segment_stats(std::string_view hypothesis, const std::vector<std::string>& references) const {
  std::vector<std::vector<std::string>> ref_words;
  for (const std::string& ref : references) ref_words.push_back(preprocess(ref));
  return segment_stats(preprocess(hypothesis), ref_words);
}

TerStats TerScorer::segment_stats(const std::vector<std::string>& hyp_words,
                                  const std::vector<std::vector<std::string>>& ref_words) const {
  if (ref_words.empty()) throw UsageError("TER: no reference given");
  int64_t ref_lengths = 0;
  int64_t best = static_cast<int64_t>(1e16);
  for (const std::vector<std::string>& ref : ref_words) {
    best = std::min(best, translation_edit_rate(hyp_words, ref));
    ref_lengths += static_cast<int64_t>(ref.size());
  }
  return TerStats{static_cast<double>(best), static_cast<double>(ref_lengths) / static_cast<double>(ref_words.size())};
}

TerScore TerScorer::score_from_stats(const TerStats& stats, size_t num_refs) const {
  double score = 0.0;
  if (stats.ref_length > 0) score = stats.num_edits / stats.ref_length;
  else if (stats.num_edits > 0) score = 1.0;  // empty references, non-empty hypothesis
  return TerScore{100 * score, static_cast<int64_t>(stats.num_edits), stats.ref_length, signature(num_refs)};
}

TerScore TerScorer::corpus_score(const std::vector<std::string>& hyps,
                                 const std::vector<std::vector<std::string>>& refs_per_stream) const {
  if (refs_per_stream.empty()) throw UsageError("TER: no reference stream given");
  for (size_t k = 0; k < refs_per_stream.size(); ++k) {
    if (refs_per_stream[k].size() != hyps.size())
      throw UsageError(fmt::format("TER: {} hypotheses but reference stream {} has {} lines", hyps.size(), k + 1,
                                   refs_per_stream[k].size()));
  }
  // utils.sum_of_lists: Python adds the segments' numbers left to right.
  TerStats total;
  std::vector<std::string> refs(refs_per_stream.size());
  for (size_t i = 0; i < hyps.size(); ++i) {
    for (size_t k = 0; k < refs_per_stream.size(); ++k) refs[k] = refs_per_stream[k][i];
    const TerStats s = segment_stats(hyps[i], refs);
    total.num_edits += s.num_edits;
    total.ref_length += s.ref_length;
  }
  return score_from_stats(total, refs_per_stream.size());
}

TerScore TerScorer::sentence_score(std::string_view hypothesis, const std::vector<std::string>& references) const {
  return score_from_stats(segment_stats(hypothesis, references), references.size());
}

}  // namespace nmt::metrics
