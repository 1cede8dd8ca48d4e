#pragma once
// Batched greedy decoding on the shared model interface.
#include <functional>
#include <vector>

#include "nmt/models/model.h"
#include "nmt/tensor/batch.h"

namespace nmt::decode {

struct DecodeOptions {
  int64_t max_sentences = 64;   // sentences per batch
  int64_t max_tokens = 0;       // padded source tokens per batch, 0 = no limit
  double max_len_a = 1.5;       // a target may be at most a·src_len + b tokens
  int64_t max_len_b = 10;
  int64_t max_source_len = 1022;  // longer sources are truncated (counted by the caller)
  bool record_attention = false;
  int64_t attention_layer = -1;
  int64_t attention_head = -1;
  // Called after each batch with the number of sentences it finished (progress displays).
  std::function<void(size_t)> on_batch_done;
};

struct Hypothesis {
  Ids tokens;  // without BOS/EOS
  // When recorded: for each target token (and the final EOS), the attention over the source
  // tokens (including the source EOS), each row summing to 1.
  std::vector<std::vector<float>> attention;
};

// Translates `sources` (subword ids) and returns hypotheses in input order. Sentences are
// sorted by length into batches; a sentence leaves its batch as soon as it emits EOS.
std::vector<Hypothesis> greedy_decode(models::Seq2SeqModelImpl& model, const std::vector<Ids>& sources,
                                      const DecodeOptions& options);

// The longest output the model can produce (its positional limit), whatever max_len_a/b say.
int64_t max_target_len(const models::Seq2SeqModelImpl& model);

// Orders indices by decreasing source length and cuts them into batches (shared with beam search).
std::vector<std::vector<size_t>> length_sorted_batches(const std::vector<Ids>& sources, const DecodeOptions& options);

}  // namespace nmt::decode
