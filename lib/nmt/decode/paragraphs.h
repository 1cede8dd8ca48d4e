#pragma once
// Paragraphs in, paragraphs out: a request's source is split into sentences
// (text/sentence_split.h), the sentences of every request are translated together in one
// batched call, and each request's translation is put back together with the source's own
// whitespace between its sentences (spaces, line breaks, blank lines). A model trained on
// sentences translates a paragraph given whole badly: it drops sentences (docs/translation.md,
// "Paragraphs"). Torch-free: the service (decode/service.h) calls it around its translator.
#include <cstddef>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "nmt/decode/translation_result.h"

namespace nmt::text {
class SentenceSplitter;
}

namespace nmt::decode {

struct SentencePlan {
  // Where one request's sentences are in `sentences`, and the text around them:
  // gaps[0] before the first, gaps[i] between sentence i-1 and i, gaps[count] after the last.
  struct Paragraph {
    size_t first = 0;
    size_t count = 0;
    std::vector<std::string> gaps;
  };
  std::vector<TranslationRequest> sentences;  // what is translated, every request's in order
  std::vector<Paragraph> paragraphs;          // one per request
};

// Whether a piece of text fits the model's source length limit (in subwords).
using FitsModel = std::function<bool(std::string_view)>;

// Each request cut into its sentences. A request with a prefix or with constraints stays
// whole (a prefix starts one translation; a phrase to include may fall in any sentence), as
// does one with no sentence in it (empty or only whitespace: it translates to "").
// A sentence that does not `fit` is cut in two where a clause ends (after ",", ";" or ":"
// before a space) nearest its middle, else at the space nearest its middle, and so on until
// each piece fits; a single word too long is left to the translator (which truncates it, and
// counts it). Without `fits`, every sentence fits.
SentencePlan plan_sentences(const std::vector<TranslationRequest>& requests, const text::SentenceSplitter& splitter,
                            const FitsModel& fits = nullptr);

// Each request's hypotheses from its sentences' (`sentences[i]` for plan.sentences[i]): the
// k-th joins each sentence's k-th (or its last, when it has fewer), so there are as many as the
// sentence with most. Joined: text with the gaps, where an empty gap between two sentences
// (text written without spaces) becomes one space; tokens and log-probabilities
// concatenated; score, log_prob and constraint_tokens summed; confidence the mean of all the
// tokens' log-probabilities; repetition if any sentence has one; alignment's word indices
// shifted by the words of the sentences before; length_limit the largest. Attention is not
// joined (its rows belong to one sentence's tokens): requests that ask for it are not split.
std::vector<Nbest> join_sentences(const SentencePlan& plan, std::vector<Nbest> sentences);

// Sentences finished → requests finished, for progress: `done` of `plan.sentences.size()`
// scaled to the number of requests (exact at the end).
size_t requests_done(const SentencePlan& plan, size_t sentences_done);

}  // namespace nmt::decode
