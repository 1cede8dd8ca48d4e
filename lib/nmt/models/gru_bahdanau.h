#pragma once
// "Neural Machine Translation by Jointly Learning to Align and Translate" (Bahdanau, Cho &
// Bengio, 2014) as the Dive into Deep Learning book builds it: a GRU encoder and a GRU
// decoder that attends over the encoder states with additive attention. Same C++ frontend
// style as transformer.h (XxxImpl + TORCH_MODULE, options with TORCH_ARG).
//
// Design choices (see also the comments at each module):
//  * Padding: the encoder packs its input (pack_padded_sequence, enforce_sorted = false),
//    so each sentence's GRU runs exactly over its real tokens, a bidirectional backward pass
//    starts at the true last token, and padded positions of the memory are exactly zero.
//  * Initial decoder state: computed inside start() (and forward()) from the memory alone:
//    s0 = tanh(W [masked mean of the memory ; memory at the last real token]), reshaped to
//    one state per decoder layer. The last real output is the D2L book's "final encoder
//    state" (top layer, forward direction); the mean is the Nematus/Bahdanau-style summary
//    that also carries the backward direction when bidirectional. So `start(memory,
//    src_mask)` is all the decoder needs, and the memory holds only real positions.
//  * Output layer: a "deep output" (Bahdanau's paper, Luong's attentional hidden state):
//    o_t = tanh(W_o [s_t ; c_t ; e_{t-1}]) of size `embedding`, then logits = o_t · Eᵀ with
//    the target embedding (tie_output) or a separate Linear. Feeding the context and the
//    previous word straight to the prediction helps alignment-driven words (names,
//    numbers) that the D2L variant (GRU output only) must squeeze through the recurrent
//    state, and projecting to the embedding size makes weight tying possible, which saves
//    V×H parameters on the 8k-subword vocabulary.
#include <torch/torch.h>

#include "nmt/models/model.h"
#include "nmt/models/gru_config.h"
#include "nmt/models/quantizable_linear.h"

namespace nmt::models {

struct AdditiveAttentionOptions {
  AdditiveAttentionOptions(int64_t query_size, int64_t key_size, int64_t hidden_size)
      : query_size_(query_size), key_size_(key_size), hidden_size_(hidden_size) {}
  TORCH_ARG(int64_t, query_size);
  TORCH_ARG(int64_t, key_size);
  TORCH_ARG(int64_t, hidden_size);
  TORCH_ARG(double, dropout) = 0.0;  // on the attention weights
};

// score(q, k) = vᵀ tanh(W_q q + W_k k), softmax over the real source positions. Masks are
// additive float [B,S] (0 keep, -1e9 drop): a large finite value, so padded positions get
// exactly zero weight and a fully padded row gets uniform weights, never NaN.
class AdditiveAttentionImpl : public torch::nn::Module {
 public:
  explicit AdditiveAttentionImpl(AdditiveAttentionOptions options);
  // W_k k for keys [B,S,key_size] → [B,S,hidden_size]; done once per sentence.
  torch::Tensor project_keys(const torch::Tensor& keys);
  // query [B,query_size], projected keys [B,S,hidden], values [B,S,Dv], additive mask [B,S]
  // (or undefined) → context [B,Dv]; the weights [B,S] go to *weights when non-null.
  torch::Tensor forward(const torch::Tensor& query, const torch::Tensor& projected_keys, const torch::Tensor& values,
                        const torch::Tensor& mask = {}, torch::Tensor* weights = nullptr);
  AdditiveAttentionOptions options;

  // Additive mask [B,S] (0 on real tokens, -1e9 on padding) from a bool [B,S] mask.
  static torch::Tensor additive_mask(const torch::Tensor& src_mask);

 private:
  QuantizableLinear w_q_{nullptr}, w_k_{nullptr};
  // Stays fp32 under int8 decoding: a [h → 1] product per (row, source position), where
  // quantising each activation row would cost as much as the product itself.
  torch::nn::Linear v_{nullptr};
  torch::nn::Dropout dropout_{nullptr};
};
TORCH_MODULE(AdditiveAttention);

struct GruEncoderOptions {
  GruEncoderOptions(int64_t embedding, int64_t hidden, int64_t layers)
      : embedding_(embedding), hidden_(hidden), layers_(layers) {}
  TORCH_ARG(int64_t, embedding);
  TORCH_ARG(int64_t, hidden);
  TORCH_ARG(int64_t, layers);
  TORCH_ARG(bool, bidirectional) = false;
  TORCH_ARG(double, dropout) = 0.0;  // on the embeddings and between GRU layers
  // Each GRU's input and recurrent gate products layer-normalised (GruConfig::rnn_layer_norm):
  // gains ln_input_lK[_reverse] and ln_hidden_lK[_reverse] of 3·hidden, the GRU's biases as
  // the normalisations' shifts.
  TORCH_ARG(bool, layer_norm) = false;
};

// Embedding → multi-layer GRU over packed sequences → memory [B,S,hidden]. When
// bidirectional, the concatenated [forward ; backward] outputs are projected to `hidden`.
// The embedding table is registered by the owning model (it may be shared with the
// decoder, and LibTorch's parameters() does not deduplicate).
class GruEncoderImpl : public torch::nn::Module {
 public:
  GruEncoderImpl(GruEncoderOptions options, torch::nn::Embedding table);
  // src int64 [B,S], bool src_mask [B,S] (real tokens first, then padding) → [B,S,hidden],
  // exactly zero on padded positions.
  torch::Tensor forward(const torch::Tensor& src, const torch::Tensor& src_mask);
  GruEncoderOptions options;

 private:
  // forward() one step at a time over the padded batch, each row's state held where its sentence
  // has no token, every step's input gates in one product per layer and direction: through the
  // fused cell (nmt/models/fused_recurrent.h) in training on the CPU, and in ATen's operations
  // for a layer-normalised GRU elsewhere (torch::nn::GRU has no layer normalisation). Without
  // it, the same function as the packed GRU, dropout masks included.
  torch::Tensor forward_stepwise(const torch::Tensor& src, const torch::Tensor& src_mask);
  // The dropout torch::nn::GRU applies between layers, drawn as it draws it: over the packed
  // sequence's positions (the real tokens, time-major, longest sentence first), then laid out
  // over the padded batch [B,S,width].
  torch::Tensor packed_order_dropout(const torch::Tensor& x, const torch::Tensor& lengths);

  torch::nn::Embedding table_{nullptr};
  torch::nn::GRU gru_{nullptr};
  QuantizableLinear projection_{nullptr};  // bidirectional only
  torch::nn::Dropout dropout_{nullptr};
};
TORCH_MODULE(GruEncoder);

struct BahdanauDecoderOptions {
  BahdanauDecoderOptions(int64_t embedding, int64_t hidden, int64_t layers)
      : embedding_(embedding), hidden_(hidden), layers_(layers) {}
  TORCH_ARG(int64_t, embedding);
  TORCH_ARG(int64_t, hidden);  // decoder state size = memory size = attention size
  TORCH_ARG(int64_t, layers);
  TORCH_ARG(double, dropout) = 0.0;
  TORCH_ARG(double, attention_dropout) = 0.0;
  TORCH_ARG(bool, layer_norm) = false;  // as GruEncoderOptions::layer_norm
};

// One step: c_t = attention(s_{t-1}^top, memory); s_t = GRU([e_{t-1} ; c_t], s_{t-1});
// o_t = tanh(W_o [s_t^top ; c_t ; e_{t-1}]) of size `embedding` (the vocabulary projection
// is the model's, so it can be tied to the embedding).
class BahdanauDecoderImpl : public torch::nn::Module {
 public:
  BahdanauDecoderImpl(BahdanauDecoderOptions options, torch::nn::Embedding table);

  // Initial state [B,layers,hidden] from the memory [B,S,hidden] and bool mask [B,S].
  torch::Tensor initial_state(const torch::Tensor& memory, const torch::Tensor& src_mask);
  torch::Tensor project_keys(const torch::Tensor& memory) { return attention_->project_keys(memory); }

  // Teacher-forced: tgt_in [B,T] → deep outputs [B,T,embedding].
  torch::Tensor forward(const torch::Tensor& tgt_in, const torch::Tensor& memory, const torch::Tensor& src_mask);

  // One position: tokens [B]; state [layers,B,hidden] is replaced by the new one. Returns
  // the deep output [B,embedding]; attention weights [B,S] to *weights when non-null.
  torch::Tensor step(const torch::Tensor& tokens, torch::Tensor& state, const torch::Tensor& projected_keys,
                     const torch::Tensor& memory, const torch::Tensor& additive_mask, torch::Tensor* weights = nullptr);
  BahdanauDecoderOptions options;

 private:
  // Embedded inputs e [B,E] → (top-layer output [B,H], context [B,H]); updates state.
  std::pair<torch::Tensor, torch::Tensor> recur(const torch::Tensor& e, torch::Tensor& state,
                                                const torch::Tensor& projected_keys, const torch::Tensor& memory,
                                                const torch::Tensor& additive_mask, torch::Tensor* weights);
  torch::Tensor deep_output(const torch::Tensor& s, const torch::Tensor& c, const torch::Tensor& e);
  // forward() with the GRU stepped here, the embeddings' share of the first layer's input gates
  // computed for all positions in one product: through the fused kernels
  // (nmt/models/fused_recurrent.h) in training on the CPU, and in ATen's operations for a
  // layer-normalised GRU elsewhere.
  torch::Tensor forward_stepwise(const torch::Tensor& tgt_in, const torch::Tensor& memory,
                                 const torch::Tensor& src_mask);
  // recur() of a layer-normalised GRU, in ATen's operations.
  std::pair<torch::Tensor, torch::Tensor> recur_normalised(const torch::Tensor& e, torch::Tensor& state,
                                                           const torch::Tensor& projected_keys,
                                                           const torch::Tensor& memory,
                                                           const torch::Tensor& additive_mask, torch::Tensor* weights);

  torch::nn::Embedding table_{nullptr};
  AdditiveAttention attention_{nullptr};
  torch::nn::GRU gru_{nullptr};
  QuantizableLinear bridge_{nullptr}, pre_output_{nullptr};
  torch::nn::Dropout dropout_{nullptr};
};
TORCH_MODULE(BahdanauDecoder);

class GruBahdanauImpl : public Seq2SeqModelImpl {
 public:
  explicit GruBahdanauImpl(const ModelConfig& config);
  torch::Tensor forward(const torch::Tensor& src, const torch::Tensor& src_mask, const torch::Tensor& tgt_in) override;
  // Memory = the encoder outputs [B,S,hidden] (zero on padding).
  torch::Tensor encode(const torch::Tensor& src, const torch::Tensor& src_mask) override;
  // The decoder state's entries, all batch-first: "attention_keys" [B,S,H], "memory" [B,S,H]
  // and "source_mask" [B,S] (additive) per source; "hidden" [B,layers,H] per row.
  DecoderState start(const torch::Tensor& memory, const torch::Tensor& src_mask) override;
  torch::Tensor step(const torch::Tensor& prev_tokens, DecoderState& state) override;
  const ModelConfig& config() const override { return config_; }
  void quantize_tied_output() override;

 private:
  torch::Tensor project(const torch::Tensor& deep_output);  // → logits
  ModelConfig config_;
  torch::nn::Embedding src_table_{nullptr}, tgt_table_{nullptr};
  GruEncoder encoder_{nullptr};
  BahdanauDecoder decoder_{nullptr};
  QuantizableLinear output_{nullptr};  // only when the output is not tied
  QuantizableLinear tied_output_{nullptr};  // the int8 copy of a tied output (not registered)
};
TORCH_MODULE(GruBahdanau);

}  // namespace nmt::models
