#pragma once
// The one interface every model implements and every trainer/decoder uses, so neither
// knows which architecture runs (the CTranslate2 split of layers / models / decoding).
#include <memory>
#include <vector>

#include <torch/torch.h>

#include "nmt/models/config.h"
#include "nmt/text/special_ids.h"

namespace nmt::models {

// Special subword ids, fixed for every model (defined in nmt/text/special_ids.h).
constexpr int64_t kPadId = text::kPadId;
constexpr int64_t kUnkId = text::kUnkId;
constexpr int64_t kBosId = text::kBosId;
constexpr int64_t kEosId = text::kEosId;

// What incremental decoding carries from one step to the next. Every per-row and per-source
// tensor has the batch (sentence or beam) on dimension 0, so removing finished sentences or
// reordering beams is one generic `select` whatever the model stores.
struct DecoderCache {
  // What `select` does with a slot.
  enum class Slot {
    kPerRow,     // depends on the row's target prefix: follows `rows`
    kPerSource,  // depends only on the row's source sentence (source mask, cross-attention
                 // keys/values, projected memory): follows `sources`
    kHistory,    // written once by one step and never copied: the rows of later steps reach
                 // it through a per-row index slot the model keeps (Transformer: each step's
                 // self-attention keys/values, so reordering beams copies a [rows, steps]
                 // table of ints instead of every layer's keys and values)
  };
  std::vector<torch::Tensor> tensors;  // model-defined slots (keys/values, hidden states, ...)
  std::vector<Slot> slots;             // one per tensor
  int64_t position = 0;                // number of target tokens already fed

  // Attention of the last step, [batch, src_len], filled only when record_attention is set.
  bool record_attention = false;
  int64_t attention_layer = -1;  // Transformer: -1 = last decoder layer
  int64_t attention_head = -1;   // Transformer: -1 = average over heads
  torch::Tensor attention;

  // Per-source slots may hold one row per source sentence while the per-row slots hold
  // `beams` consecutive rows per source (beam search, as CTranslate2 does): the model folds
  // the beams of a source into its cross-attention instead of copying the source's keys and
  // values once per beam. A model sees it from the shapes: rows / per-source rows.

  // Keeps the rows `index` (int64 [n]) of every cached tensor, in that order (greedy decoding:
  // finished sentences leave the batch).
  void select(const torch::Tensor& index) { select(index, index); }

  // Keeps the rows `rows` of the per-row slots and the rows `sources` of the per-source slots;
  // an undefined `sources` leaves the per-source slots as they are.
  void select(const torch::Tensor& rows, const torch::Tensor& sources) {
    for (size_t i = 0; i < tensors.size(); ++i) {
      if (!tensors[i].defined() || slots.at(i) == Slot::kHistory) continue;
      const bool source_slot = slots[i] == Slot::kPerSource;
      if (source_slot && !sources.defined()) continue;
      tensors[i] = tensors[i].index_select(0, source_slot ? sources : rows);
    }
  }
};

class Seq2SeqModelImpl : public torch::nn::Module {
 public:
  ~Seq2SeqModelImpl() override = default;

  // Teacher-forced training pass. src: int64 [B,S]; src_mask: bool [B,S], true on real
  // tokens; tgt_in: int64 [B,T] starting with BOS. Returns logits [B,T,V].
  virtual torch::Tensor forward(const torch::Tensor& src, const torch::Tensor& src_mask,
                                const torch::Tensor& tgt_in) = 0;

  // Runs the encoder: memory [B,S,*] (the encoder states the decoder attends to).
  virtual torch::Tensor encode(const torch::Tensor& src, const torch::Tensor& src_mask) = 0;

  // Precomputes, once per sentence, everything the decoder needs from the memory
  // (cross-attention keys/values, attention key projections) into a fresh cache.
  virtual DecoderCache start(const torch::Tensor& memory, const torch::Tensor& src_mask) = 0;

  // One decoding step for every row of the cache: prev_tokens int64 [B] (BOS at first).
  // Returns logits [B,V] of the next token and advances the cache by one position.
  virtual torch::Tensor step(const torch::Tensor& prev_tokens, DecoderCache& cache) = 0;

  virtual const ModelConfig& config() const = 0;
};

using Seq2SeqModel = std::shared_ptr<Seq2SeqModelImpl>;

// Builds the model described by `config` (type "transformer" or "gru").
Seq2SeqModel make_model(const ModelConfig& config);

// Number of trainable parameters (tied weights counted once).
int64_t count_parameters(const Seq2SeqModelImpl& model);

}  // namespace nmt::models
