#pragma once
// The one interface every model implements and every trainer/decoder uses, so neither
// knows which architecture runs (the CTranslate2 split of layers / models / decoding).
#include <memory>
#include <vector>

#include <torch/torch.h>

#include "nmt/models/config.h"
#include "nmt/models/decoder_state.h"
#include "nmt/text/special_ids.h"

namespace nmt::models {

// Special subword ids, fixed for every model (defined in nmt/text/special_ids.h).
constexpr int64_t kPadId = text::kPadId;
constexpr int64_t kUnkId = text::kUnkId;
constexpr int64_t kBosId = text::kBosId;
constexpr int64_t kEosId = text::kEosId;

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
  // (cross-attention keys/values, attention key projections) into a fresh state whose named
  // entries say how they follow reordered rows.
  virtual DecoderState start(const torch::Tensor& memory, const torch::Tensor& src_mask) = 0;

  // One decoding step for every row of the state: prev_tokens int64 [B] (BOS at first).
  // Returns logits [B,V] of the next token and advances the state by one position; with
  // state.record_attention, also the step's attention over the source (state.attention).
  virtual torch::Tensor step(const torch::Tensor& prev_tokens, DecoderState& state) = 0;

  virtual const ModelConfig& config() const = 0;

  // int8 decoding (nmt/models/quantize.h) quantises every QuantizableLinear it finds among the
  // modules, then calls this: an output projection tied to the target embedding (no Linear of
  // its own) gets an int8 copy of the table for decoding on the CPU; the lookup keeps the fp32
  // table. Derived from the table, so int8 weights files do not store it.
  virtual void quantize_tied_output() = 0;
};

using Seq2SeqModel = std::shared_ptr<Seq2SeqModelImpl>;

// Builds the model described by `config` (type "transformer" or "gru").
Seq2SeqModel make_model(const ModelConfig& config);

// Number of trainable parameters (tied weights counted once).
int64_t count_parameters(const Seq2SeqModelImpl& model);

}  // namespace nmt::models
