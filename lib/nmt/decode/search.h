#pragma once
// One way to decode: a search strategy (greedy, beam, sampling, forced scoring) run by one
// driver that sorts sentences into batches, encodes them and starts the decoder state, on
// one model or an ensemble, with one result type (CTranslate2's SearchStrategy and
// DecodingResult).
#include <functional>
#include <memory>
#include <vector>

#include "nmt/decode/batch_plan.h"
#include "nmt/decode/decode_options.h"
#include "nmt/decode/decoding_model.h"
#include "nmt/decode/hypothesis.h"
#include "nmt/decode/search_options.h"
#include "nmt/tensor/batch.h"
#include "nmt/text/lexical_constraints.h"

namespace nmt::decode {



// One batch as the driver hands it to a strategy: the model's started state and, per row,
// everything the strategy needs to know about its sentence.
struct SearchBatch {
  const DecodingModel& model;  // read-only: strategies (serve's workers) share it
  models::DecoderState state;
  torch::Device device;
  std::vector<size_t> source_index;  // row → position in the driver's input
  std::vector<int64_t> source_len;   // row → source tokens including EOS (attention width)
  std::vector<int64_t> limit;        // row → maximum output tokens without EOS (prefix included)
  std::vector<const text::TokenIds*> prefix;    // row → forced target prefix (never null; may be empty)
  // row → lexical constraints (never null; may be empty). Positive ones need beam search.
  std::vector<const text::LineConstraints*> constraints;
  bool any_constraints = false;      // some row has one
  bool any_positive_constraints = false;
  int64_t rows() const { return static_cast<int64_t>(source_index.size()); }
};

class SearchStrategy {
 public:
  virtual ~SearchStrategy() = default;
  // Checks the strategy's own options (UsageError naming the option), before any work.
  virtual void validate() const {}
  // Decodes one batch: per row, its hypotheses best first.
  virtual std::vector<SearchResult> search(SearchBatch& batch, const DecodeOptions& options) const = 0;
};

// Translates `sources` (subword ids) with `strategy`, one result per source in input order.
// Sentences are sorted by length into batches. `prefixes`, when given (one per source, empty
// for none), forces each output to start with those target subwords; `constraints`, when given
// (one per source), are the phrases each output must contain and must avoid.
std::vector<SearchResult> search(DecodingModel& model, const std::vector<text::TokenIds>& sources, const DecodeOptions& options,
                                 const SearchStrategy& strategy, const std::vector<text::TokenIds>* prefixes = nullptr,
                                 const std::vector<text::LineConstraints>* constraints = nullptr);
// The same on one model.
std::vector<SearchResult> search(models::Seq2SeqModelImpl& model, const std::vector<text::TokenIds>& sources,
                                 const DecodeOptions& options, const SearchStrategy& strategy,
                                 const std::vector<text::TokenIds>* prefixes = nullptr,
                                 const std::vector<text::LineConstraints>* constraints = nullptr);

// Orders indices by decreasing source length and cuts them into batches.
std::vector<std::vector<size_t>> length_sorted_batches(const std::vector<text::TokenIds>& sources, const DecodeOptions& options);

// The attention row of `row` in [rows, S] float CPU `attention`, cut to `width` source tokens.
std::vector<float> attention_row(const torch::Tensor& attention, int64_t row, int64_t width);

}  // namespace nmt::decode
