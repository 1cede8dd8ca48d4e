#pragma once
// "Attention Is All You Need" (Vaswani et al., 2017) built from its parts, in the style of
// the PyTorch C++ frontend: XxxImpl + TORCH_MODULE, options structs with TORCH_ARG.
#include <torch/torch.h>

#include "nmt/models/model.h"
#include "nmt/models/quantizable_linear.h"
#include "nmt/models/transformer_config.h"

namespace nmt::models {

// softmax(Q Kᵀ / √d_k + mask) V. Masks are additive float tensors (0 keep, -1e9 drop)
// built once per batch and broadcast over heads: a large finite value rather than -inf,
// so a fully masked row gives uniform weights instead of NaN.
// With LibTorch ≥ 2.0 the attention runs in torch::scaled_dot_product_attention (the fused
// kernels) unless the weights are asked for; LibTorch 1.13 always runs the hand-written
// version below. set_fused_attention(false) forces the hand-written one (tests compare them).
bool fused_attention_available();
void set_fused_attention(bool enabled);

struct ScaledDotProductAttentionOptions {
  TORCH_ARG(double, dropout) = 0.0;
};

class ScaledDotProductAttentionImpl : public torch::nn::Module {
 public:
  explicit ScaledDotProductAttentionImpl(ScaledDotProductAttentionOptions options = {});
  // q [B,H,T,dk] (not yet scaled), k [B,H,S,dk], v [B,H,S,dv], mask broadcastable to
  // [B,H,T,S] or undefined. Returns the output [B,H,T,dv]; the weights [B,H,T,S] go to
  // *weights when it is non-null.
  torch::Tensor forward(const torch::Tensor& q, const torch::Tensor& k, const torch::Tensor& v,
                        const torch::Tensor& mask = {}, torch::Tensor* weights = nullptr);
  ScaledDotProductAttentionOptions options;

 private:
  torch::nn::Dropout dropout_{nullptr};
};
TORCH_MODULE(ScaledDotProductAttention);

struct MultiHeadAttentionOptions {
  MultiHeadAttentionOptions(int64_t d_model, int64_t heads) : d_model_(d_model), heads_(heads) {}
  TORCH_ARG(int64_t, d_model);
  TORCH_ARG(int64_t, heads);
  TORCH_ARG(double, dropout) = 0.0;
  // Self-attention projects Q, K and V with one fused [d, 3d] matmul; cross-attention
  // projects Q from the decoder and K/V (fused [d, 2d]) from the encoder memory.
  TORCH_ARG(bool, self_attention) = true;
};

class MultiHeadAttentionImpl : public torch::nn::Module {
 public:
  explicit MultiHeadAttentionImpl(MultiHeadAttentionOptions options);

  // Full-sequence self-attention: x [B,T,d] → [B,T,d].
  torch::Tensor forward_self(const torch::Tensor& x, const torch::Tensor& mask, torch::Tensor* weights = nullptr);
  // Self-attention of one decoding step x [B,1,d] over the positions so far: appends this
  // step's fused projection [B,3d] to `steps` (see DecoderLayerState) and attends over all
  // of them; origins int64 [B, steps.size() + 1] maps each row to its row in every step.
  torch::Tensor forward_self_step(const torch::Tensor& x, std::vector<torch::Tensor>& steps,
                                  const torch::Tensor& origins);
  // Keys and values of the encoder memory [B,S,d] → two [B,H,S,dk] tensors (computed once).
  std::pair<torch::Tensor, torch::Tensor> project_memory(const torch::Tensor& memory);
  // Cross-attention of x [B,T,d] over projected memory keys/values.
  torch::Tensor forward_cross(const torch::Tensor& x, const torch::Tensor& k, const torch::Tensor& v,
                              const torch::Tensor& mask, torch::Tensor* weights = nullptr);

  MultiHeadAttentionOptions options;

 private:
  torch::Tensor split_heads(const torch::Tensor& x) const;  // [B,T,d] → [B,H,T,dk]
  torch::Tensor merge_heads(const torch::Tensor& x) const;  // [B,H,T,dk] → [B,T,d]
  QuantizableLinear qkv_proj_{nullptr}, q_proj_{nullptr}, kv_proj_{nullptr}, out_proj_{nullptr};
  ScaledDotProductAttention attention_{nullptr};
};
TORCH_MODULE(MultiHeadAttention);

struct FeedForwardOptions {
  FeedForwardOptions(int64_t d_model, int64_t hidden) : d_model_(d_model), hidden_(hidden) {}
  TORCH_ARG(int64_t, d_model);
  TORCH_ARG(int64_t, hidden);
  TORCH_ARG(double, dropout) = 0.0;  // on the hidden activations
  TORCH_ARG(std::string, activation) = "relu";  // "relu", "swish" (SiLU) or "gelu" (erf, exact)
};

// Position-wise feed-forward network: Linear → activation → dropout → Linear.
class FeedForwardImpl : public torch::nn::Module {
 public:
  explicit FeedForwardImpl(FeedForwardOptions options);
  torch::Tensor forward(const torch::Tensor& x);
  FeedForwardOptions options;

 private:
  enum class Activation { kRelu, kSwish, kGelu };
  Activation activation_ = Activation::kRelu;
  QuantizableLinear fc1_{nullptr}, fc2_{nullptr};
  torch::nn::Dropout dropout_{nullptr};
};
TORCH_MODULE(FeedForward);

struct PositionalEncodingOptions {
  PositionalEncodingOptions(int64_t d_model, int64_t max_len) : d_model_(d_model), max_len_(max_len) {}
  TORCH_ARG(int64_t, d_model);
  TORCH_ARG(int64_t, max_len);
  // Where the cosines go: interleaved with the sines (nmt's layout), or all sines first and then
  // all cosines ("concatenated": Marian's and transformers' MarianMTModel's, computed in double
  // and rounded once, as theirs is).
  TORCH_ARG(bool, concatenated) = false;
};

// Sinusoidal positions (a buffer computed once, never per step).
class PositionalEncodingImpl : public torch::nn::Module {
 public:
  explicit PositionalEncodingImpl(PositionalEncodingOptions options);
  // Positions [offset, offset + length) as [length, d].
  torch::Tensor forward(int64_t length, int64_t offset = 0);
  PositionalEncodingOptions options;

 private:
  torch::Tensor table_;
};
TORCH_MODULE(PositionalEncoding);

struct TransformerLayerOptions {
  TransformerLayerOptions(int64_t d_model, int64_t heads, int64_t ffn) : d_model_(d_model), heads_(heads), ffn_(ffn) {}
  TORCH_ARG(int64_t, d_model);
  TORCH_ARG(int64_t, heads);
  TORCH_ARG(int64_t, ffn);
  TORCH_ARG(double, dropout) = 0.1;
  TORCH_ARG(double, attention_dropout) = 0.0;
  TORCH_ARG(double, activation_dropout) = 0.0;
  TORCH_ARG(bool, pre_norm) = false;
  TORCH_ARG(std::string, activation) = "relu";
};

class EncoderLayerImpl : public torch::nn::Module {
 public:
  explicit EncoderLayerImpl(TransformerLayerOptions options);
  torch::Tensor forward(const torch::Tensor& x, const torch::Tensor& src_mask);
  TransformerLayerOptions options;

 private:
  MultiHeadAttention self_attn_{nullptr};
  FeedForward ffn_{nullptr};
  torch::nn::LayerNorm norm1_{nullptr}, norm2_{nullptr};
  torch::nn::Dropout dropout_{nullptr};
};
TORCH_MODULE(EncoderLayer);

// Per-layer decoding state. Self-attention: every step's fused q/k/v projection [rows_τ, 3d],
// kept as written (beam search reorders rows through `origins` [rows, t], the row of step τ
// holding each current row's past, instead of copying keys and values); cross-attention: the
// memory's keys/values.
struct DecoderLayerState {
  std::vector<torch::Tensor> self_steps;
  torch::Tensor origins, cross_k, cross_v;
};

class DecoderLayerImpl : public torch::nn::Module {
 public:
  explicit DecoderLayerImpl(TransformerLayerOptions options);
  // Teacher-forced: x [B,T,d], memory [B,S,d], causal mask [T,T], source mask [B,1,1,S].
  torch::Tensor forward(const torch::Tensor& x, const torch::Tensor& memory, const torch::Tensor& causal_mask,
                        const torch::Tensor& src_mask, torch::Tensor* cross_weights = nullptr);
  // Incremental: x [B,1,d]; state holds the layer's caches.
  torch::Tensor step(const torch::Tensor& x, DecoderLayerState& state, const torch::Tensor& src_mask,
                     torch::Tensor* cross_weights = nullptr);
  std::pair<torch::Tensor, torch::Tensor> project_memory(const torch::Tensor& memory) {
    return cross_attn_->project_memory(memory);
  }
  TransformerLayerOptions options;

 private:
  template <typename SelfAttention, typename CrossAttention>
  torch::Tensor block(const torch::Tensor& x, SelfAttention&& self_attention, CrossAttention&& cross_attention);
  MultiHeadAttention self_attn_{nullptr}, cross_attn_{nullptr};
  FeedForward ffn_{nullptr};
  torch::nn::LayerNorm norm1_{nullptr}, norm2_{nullptr}, norm3_{nullptr};
  torch::nn::Dropout dropout_{nullptr};
};
TORCH_MODULE(DecoderLayer);

// Token embedding × √d_model (× 1 without `scale`) + sinusoidal positions, then dropout.
class EmbeddingsImpl : public torch::nn::Module {
 public:
  EmbeddingsImpl(torch::nn::Embedding table, PositionalEncoding positions, double dropout, bool scale = true);
  torch::Tensor forward(const torch::Tensor& tokens, int64_t offset = 0);
  torch::nn::Embedding table{nullptr};

 private:
  PositionalEncoding positions_{nullptr};
  torch::nn::Dropout dropout_{nullptr};
  double scale_;
};
TORCH_MODULE(Embeddings);

class EncoderImpl : public torch::nn::Module {
 public:
  EncoderImpl(const ModelConfig& config, Embeddings embeddings);
  // src [B,S], additive source mask [B,1,1,S] → memory [B,S,d]
  torch::Tensor forward(const torch::Tensor& src, const torch::Tensor& src_mask);

 private:
  Embeddings embeddings_{nullptr};
  torch::nn::ModuleList layers_;
  torch::nn::LayerNorm final_norm_{nullptr};  // pre-LN only
};
TORCH_MODULE(Encoder);

class DecoderImpl : public torch::nn::Module {
 public:
  DecoderImpl(const ModelConfig& config, Embeddings embeddings);
  // Teacher-forced: tgt_in [B,T] → hidden states [B,T,d].
  torch::Tensor forward(const torch::Tensor& tgt_in, const torch::Tensor& memory, const torch::Tensor& src_mask);
  // One position: tokens [B] → hidden [B,d]; states one per layer.
  // With `attention`, also the cross-attention of decoder layer `alignment.layer` (-1: the
  // last), head `alignment.head` (-1: the mean of the heads), [B,S].
  using Alignment = AlignmentChoice;
  torch::Tensor step(const torch::Tensor& tokens, int64_t position, std::vector<DecoderLayerState>& states,
                     const torch::Tensor& src_mask, torch::Tensor* attention = nullptr,
                     AlignmentChoice alignment = AlignmentChoice());
  std::vector<DecoderLayerState> start(const torch::Tensor& memory);
  int64_t num_layers() const { return static_cast<int64_t>(layers_->size()); }

 private:
  torch::Tensor causal_mask(int64_t length);
  Embeddings embeddings_{nullptr};
  torch::nn::ModuleList layers_;
  torch::nn::LayerNorm final_norm_{nullptr};
  torch::Tensor causal_table_;  // [max_positions, max_positions] additive, sliced per batch
};
TORCH_MODULE(Decoder);

class TransformerImpl : public Seq2SeqModelImpl {
 public:
  explicit TransformerImpl(const ModelConfig& config);
  torch::Tensor forward(const torch::Tensor& src, const torch::Tensor& src_mask, const torch::Tensor& tgt_in) override;
  torch::Tensor encode(const torch::Tensor& src, const torch::Tensor& src_mask) override;
  DecoderState start(const torch::Tensor& memory, const torch::Tensor& src_mask) override;
  torch::Tensor step(const torch::Tensor& prev_tokens, DecoderState& state) override;
  const ModelConfig& config() const override { return config_; }
  void quantize_tied_output() override;

  // Additive mask [B,1,1,S] (0 on real tokens, -1e9 on padding) from a bool [B,S] mask.
  static torch::Tensor additive_mask(const torch::Tensor& src_mask);

 private:
  torch::Tensor project(const torch::Tensor& hidden);  // → logits
  ModelConfig config_;
  torch::nn::Embedding src_table_{nullptr}, tgt_table_{nullptr};
  Encoder encoder_{nullptr};
  Decoder decoder_{nullptr};
  QuantizableLinear output_{nullptr};  // only when the output is not tied
  torch::Tensor output_bias_;          // [tgt_vocab] with TransformerConfig::output_bias, tied output
  QuantizableLinear tied_output_{nullptr};  // the int8 copy of a tied output (not registered)
  struct LayerEntryNames {
    std::string cross_keys, cross_values, self_projections;
  };
  std::vector<LayerEntryNames> entry_names_;  // the state's names per decoder layer, made once
};
TORCH_MODULE(Transformer);

}  // namespace nmt::models
