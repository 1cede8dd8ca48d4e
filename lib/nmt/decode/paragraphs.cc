#include "nmt/decode/paragraphs.h"

#include <algorithm>
#include <cmath>
#include <sstream>

#include "nmt/text/sentence_split.h"
#include "nmt/text/unicode.h"

namespace nmt::decode {

namespace {

SentencePlan::Paragraph whole(size_t first) { return {first, 1, {"", ""}}; }

size_t word_count(const std::string& text) {
  std::istringstream words(text);
  size_t n = 0;
  for (std::string w; words >> w;) ++n;
  return n;
}

// "3-4 5-6" with every source index raised by `source_shift` and target by `target_shift`.
std::string shifted_alignment(const std::string& pharaoh, size_t source_shift, size_t target_shift) {
  std::istringstream links(pharaoh);
  std::string out;
  for (std::string link; links >> link;) {
    const size_t dash = link.find('-');
    if (dash == std::string::npos) continue;
    const size_t s = std::stoul(link.substr(0, dash)) + source_shift;
    const size_t t = std::stoul(link.substr(dash + 1)) + target_shift;
    if (!out.empty()) out += ' ';
    out += std::to_string(s) + "-" + std::to_string(t);
  }
  return out;
}

// One hypothesis of a paragraph from one hypothesis of each of its sentences.
TranslationResult join(const SentencePlan& plan, const SentencePlan::Paragraph& p,
                       const std::vector<const TranslationResult*>& parts) {
  TranslationResult r;
  size_t source_words = 0, target_words = 0;
  double log_prob_of_counted = 0;
  size_t counted_tokens = 0;
  for (size_t i = 0; i < parts.size(); ++i) {
    const TranslationResult& part = *parts[i];
    const std::string& gap = p.gaps[i];
    r.text += i > 0 && gap.empty() && !part.text.empty() && !r.text.empty() ? " " : gap;
    r.text += part.text;
    r.score += part.score;
    r.log_prob += part.log_prob;
    r.repetition |= part.repetition;
    r.tokens.insert(r.tokens.end(), part.tokens.begin(), part.tokens.end());
    r.token_ids.insert(r.token_ids.end(), part.token_ids.begin(), part.token_ids.end());
    r.token_log_probs.insert(r.token_log_probs.end(), part.token_log_probs.begin(), part.token_log_probs.end());
    // A part's confidence is its log_prob over its token count: the count is recovered so the
    // paragraph's is the mean over all its tokens even when the log-probabilities are not kept.
    if (part.confidence != 0) {
      log_prob_of_counted += part.log_prob;
      counted_tokens += static_cast<size_t>(std::llround(part.log_prob / part.confidence));
    }
    r.unmet_constraints.insert(r.unmet_constraints.end(), part.unmet_constraints.begin(), part.unmet_constraints.end());
    r.constraint_tokens += part.constraint_tokens;
    r.length_limit = std::max(r.length_limit, part.length_limit);
    if (!part.alignment.empty()) {
      const std::string links = shifted_alignment(part.alignment, source_words, target_words);
      r.alignment += r.alignment.empty() || links.empty() ? links : " " + links;
    }
    source_words += word_count(plan.sentences[p.first + i].source);
    target_words += word_count(part.text);
    for (const auto& w : part.warnings)
      if (std::find(r.warnings.begin(), r.warnings.end(), w) == r.warnings.end()) r.warnings.push_back(w);
  }
  r.text += p.gaps.back();
  r.confidence = counted_tokens > 0 ? log_prob_of_counted / static_cast<double>(counted_tokens) : 0;
  return r;
}

// Where to cut [begin, end) of `source` in two: after the clause end nearest the middle, else at
// the space nearest it; npos when there is no space inside.
size_t cut_point(const std::string& source, size_t begin, size_t end) {
  const size_t middle = begin + (end - begin) / 2;
  size_t clause = std::string::npos, space = std::string::npos;
  auto nearer = [middle](size_t a, size_t b) {
    if (a == std::string::npos) return b;
    return (b > middle ? b - middle : middle - b) < (a > middle ? a - middle : middle - a) ? b : a;
  };
  for (size_t i = begin + 1; i + 1 < end; ++i) {
    if (!text::is_ascii_space(source[i]) || text::is_ascii_space(source[i - 1])) continue;
    space = nearer(space, i);
    if (source[i - 1] == ',' || source[i - 1] == ';' || source[i - 1] == ':') clause = nearer(clause, i);
  }
  return clause != std::string::npos ? clause : space;
}

// [begin, end) as spans that each fit (trimmed of the spaces at a cut).
void add_fitting(const std::string& source, size_t begin, size_t end, const FitsModel& fits,
                 std::vector<text::SentenceSpan>& out) {
  const size_t cut = !fits || fits(std::string_view(source).substr(begin, end - begin)) ? std::string::npos
                                                                                       : cut_point(source, begin, end);
  if (cut == std::string::npos) {
    out.push_back({begin, end});
    return;
  }
  size_t next = cut;
  while (next < end && text::is_ascii_space(source[next])) ++next;
  add_fitting(source, begin, cut, fits, out);
  add_fitting(source, next, end, fits, out);
}

}  // namespace

SentencePlan plan_sentences(const std::vector<TranslationRequest>& requests, const text::SentenceSplitter& splitter,
                            const FitsModel& fits) {
  SentencePlan plan;
  for (const auto& request : requests) {
    const size_t first = plan.sentences.size();
    std::vector<text::SentenceSpan> spans;
    if (request.prefix.empty() && request.constraints.empty())
      for (const auto& s : splitter.split(request.source)) add_fitting(request.source, s.begin, s.end, fits, spans);
    if (spans.size() <= 1 && (spans.empty() || (spans[0].begin == 0 && spans[0].end == request.source.size()))) {
      plan.sentences.push_back(request);
      plan.paragraphs.push_back(whole(first));
      continue;
    }
    SentencePlan::Paragraph p{first, spans.size(), {}};
    size_t end = 0;
    for (const auto& span : spans) {
      p.gaps.push_back(request.source.substr(end, span.begin - end));
      plan.sentences.push_back({request.source.substr(span.begin, span.end - span.begin), "", {}});
      end = span.end;
    }
    p.gaps.push_back(request.source.substr(end));
    plan.paragraphs.push_back(std::move(p));
  }
  return plan;
}

std::vector<Nbest> join_sentences(const SentencePlan& plan, std::vector<Nbest> sentences) {
  std::vector<Nbest> out;
  out.reserve(plan.paragraphs.size());
  for (const auto& p : plan.paragraphs) {
    if (p.count == 1 && p.gaps[0].empty() && p.gaps[1].empty()) {
      out.push_back(std::move(sentences[p.first]));
      continue;
    }
    size_t hypotheses = 0;
    for (size_t i = 0; i < p.count; ++i) hypotheses = std::max(hypotheses, sentences[p.first + i].size());
    Nbest joined;
    for (size_t k = 0; k < hypotheses; ++k) {
      std::vector<const TranslationResult*> parts;
      for (size_t i = 0; i < p.count; ++i) {
        static const TranslationResult kNone;  // (the service gives every sentence a hypothesis)
        const Nbest& n = sentences[p.first + i];
        parts.push_back(n.empty() ? &kNone : &n[std::min(k, n.size() - 1)]);
      }
      joined.push_back(join(plan, p, parts));
    }
    out.push_back(std::move(joined));
  }
  return out;
}

size_t requests_done(const SentencePlan& plan, size_t sentences_done) {
  const size_t total = plan.sentences.size();
  if (total == 0 || sentences_done >= total) return plan.paragraphs.size();
  return sentences_done * plan.paragraphs.size() / total;
}

}  // namespace nmt::decode
