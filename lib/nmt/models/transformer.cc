#include "nmt/models/transformer.h"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include <torch/version.h>

#include "nmt/models/init.h"
#include "nmt/models/small_query_attention.h"
#include "nmt/util/error.h"

namespace nmt::models {
namespace F = torch::nn::functional;

// ---------------------------------------------------------------------------------------
ScaledDotProductAttentionImpl::ScaledDotProductAttentionImpl(ScaledDotProductAttentionOptions options_)
    : options(options_) {
  dropout_ = register_module("dropout", torch::nn::Dropout(options.dropout()));
}

namespace {
bool g_fused_attention = true;
}  // namespace

bool fused_attention_available() { return TORCH_VERSION_MAJOR >= 2; }
void set_fused_attention(bool enabled) { g_fused_attention = enabled; }

torch::Tensor ScaledDotProductAttentionImpl::forward(const torch::Tensor& q, const torch::Tensor& k,
                                                     const torch::Tensor& v, const torch::Tensor& mask,
                                                     torch::Tensor* weights) {
  // Decoding steps on the CPU (no dropout, no gradient): one fused loop nest, see the file.
  if ((!is_training() || options.dropout() == 0) && small_query_attention_applies(q, k, v, mask))
    return small_query_attention(q, k, v, mask, 1.0 / std::sqrt(static_cast<double>(q.size(-1))), weights);
#if TORCH_VERSION_MAJOR >= 2
  // LibTorch 2.x's fused kernel (flash / memory-efficient on CUDA) when nobody needs the
  // weights. Our mask is additive and finite, which it accepts as is. LibTorch 2.x only:
  // Debian's 1.13 has no such kernel.
  if (g_fused_attention && !weights) {
    const double p = is_training() ? options.dropout() : 0.0;
    const c10::optional<torch::Tensor> additive_mask =
        mask.defined() ? c10::optional<torch::Tensor>(mask.to(q.scalar_type())) : c10::nullopt;
    return at::scaled_dot_product_attention(q, k, v, additive_mask, p, /*is_causal=*/false);
  }
#endif
  // Scaling q (T×dk values) is cheaper than scaling the scores (T×S values).
  const double scale = 1.0 / std::sqrt(static_cast<double>(q.size(-1)));
  torch::Tensor scores = torch::matmul(q * scale, k.transpose(-2, -1));
  if (mask.defined()) scores = scores + mask;
  torch::Tensor attn = torch::softmax(scores, -1);
  if (weights) *weights = attn;
  if (options.dropout() > 0 && is_training()) attn = dropout_(attn);
  return torch::matmul(attn, v);
}

// ---------------------------------------------------------------------------------------
MultiHeadAttentionImpl::MultiHeadAttentionImpl(MultiHeadAttentionOptions options_) : options(options_) {
  const int64_t d = options.d_model();
  TORCH_CHECK(d % options.heads() == 0, "d_model must be divisible by heads");
  if (options.self_attention()) {
    qkv_proj_ = register_module("qkv_proj", QuantizableLinear(d, 3 * d));
    init_linear(qkv_proj_);
  } else {
    q_proj_ = register_module("q_proj", QuantizableLinear(d, d));
    kv_proj_ = register_module("kv_proj", QuantizableLinear(d, 2 * d));
    init_linear(q_proj_);
    init_linear(kv_proj_);
  }
  out_proj_ = register_module("out_proj", QuantizableLinear(d, d));
  init_linear(out_proj_);
  attention_ = register_module("attention",
                               ScaledDotProductAttention(ScaledDotProductAttentionOptions().dropout(options.dropout())));
}

torch::Tensor MultiHeadAttentionImpl::split_heads(const torch::Tensor& x) const {
  const int64_t heads = options.heads();
  return x.view({x.size(0), x.size(1), heads, x.size(2) / heads}).transpose(1, 2);
}

torch::Tensor MultiHeadAttentionImpl::merge_heads(const torch::Tensor& x) const {
  return x.transpose(1, 2).reshape({x.size(0), x.size(2), options.d_model()});
}

torch::Tensor MultiHeadAttentionImpl::forward_self(const torch::Tensor& x, const torch::Tensor& mask,
                                                   torch::Tensor* weights) {
  const int64_t B = x.size(0), T = x.size(1), H = options.heads(), dk = options.d_model() / H;
  // One [d, 3d] matmul, then heads folded next to the batch: [3, B, H, T, dk].
  auto qkv = qkv_proj_(x).view({B, T, 3, H, dk}).permute({2, 0, 3, 1, 4});
  auto out = attention_->forward(qkv[0], qkv[1], qkv[2], mask, weights);
  return out_proj_(merge_heads(out));
}

torch::Tensor MultiHeadAttentionImpl::forward_self_step(const torch::Tensor& x, std::vector<torch::Tensor>& steps,
                                                        const torch::Tensor& origins) {
  const int64_t B = x.size(0), H = options.heads(), dk = options.d_model() / H;
  TORCH_CHECK(x.size(1) == 1, "forward_self_step: one position per row");
  auto qkv = qkv_proj_(x);  // [B,1,3d]
  steps.push_back(qkv.view({B, 3 * options.d_model()}));
  auto q = qkv.view({B, 1, 3, H, dk}).select(2, 0).transpose(1, 2);  // [B,H,1,dk]
  // The new position may attend to every earlier one: no mask needed.
  torch::Tensor out;
  if (!is_training() && history_attention_applies(q, steps, origins)) {
    out = history_attention(q, steps, origins, 1.0 / std::sqrt(static_cast<double>(dk)));
  } else {
    auto [k, v] = gather_history(steps, origins, H);
    out = attention_->forward(q, k, v);
  }
  return out_proj_(merge_heads(out));
}

std::pair<torch::Tensor, torch::Tensor> MultiHeadAttentionImpl::project_memory(const torch::Tensor& memory) {
  const int64_t B = memory.size(0), S = memory.size(1), H = options.heads(), dk = options.d_model() / H;
  auto kv = kv_proj_(memory).view({B, S, 2, H, dk}).permute({2, 0, 3, 1, 4});
  return {kv[0], kv[1]};
}

torch::Tensor MultiHeadAttentionImpl::forward_cross(const torch::Tensor& x, const torch::Tensor& k,
                                                    const torch::Tensor& v, const torch::Tensor& mask,
                                                    torch::Tensor* weights) {
  const int64_t rows = x.size(0), sources = k.size(0);
  if (rows == sources) {
    auto q = split_heads(q_proj_(x));
    auto out = attention_->forward(q, k, v, mask, weights);
    return out_proj_(merge_heads(out));
  }
  // Beam search with the source's keys/values stored once: the `beams` rows of a source become
  // `beams` queries against them ([sources, H, beams, dk]), one position each.
  TORCH_CHECK(x.size(1) == 1 && rows % sources == 0, "cross-attention: ", rows, " rows for ", sources, " sources");
  const int64_t beams = rows / sources, H = options.heads(), dk = options.d_model() / H;
  auto q = q_proj_(x).view({sources, beams, H, dk}).transpose(1, 2);
  auto out = attention_->forward(q, k, v, mask, weights);  // [sources, H, beams, dk]
  // The weights per row, as the unfolded layout gives them: [sources, H, beams, S] → [rows, H, 1, S].
  if (weights) *weights = weights->transpose(1, 2).reshape({rows, H, 1, weights->size(-1)});
  return out_proj_(out.transpose(1, 2).reshape({rows, 1, options.d_model()}));
}

// ---------------------------------------------------------------------------------------
FeedForwardImpl::FeedForwardImpl(FeedForwardOptions options_) : options(options_) {
  fc1_ = register_module("fc1", QuantizableLinear(options.d_model(), options.hidden()));
  fc2_ = register_module("fc2", QuantizableLinear(options.hidden(), options.d_model()));
  dropout_ = register_module("dropout", torch::nn::Dropout(options.dropout()));
  init_linear(fc1_);
  init_linear(fc2_);
  if (options.activation() == "swish") activation_ = Activation::kSwish;
  else if (options.activation() == "gelu") activation_ = Activation::kGelu;
  else TORCH_CHECK(options.activation() == "relu", "unknown activation '", options.activation(), "'");
}

torch::Tensor FeedForwardImpl::forward(const torch::Tensor& x) {
  auto h = fc1_(x);
  switch (activation_) {
    case Activation::kRelu: h = torch::relu(h); break;
    case Activation::kSwish: h = torch::silu(h); break;
    case Activation::kGelu: h = torch::gelu(h); break;
  }
  if (options.dropout() > 0 && is_training()) h = dropout_(h);
  return fc2_(h);
}

// ---------------------------------------------------------------------------------------
PositionalEncodingImpl::PositionalEncodingImpl(PositionalEncodingOptions options_) : options(options_) {
  const int64_t d = options.d_model(), n = options.max_len();
  if (options.concatenated()) {
    // angle(pos, j) = pos / 10000^(2⌊j/2⌋/d); sines of the even j, then cosines of the odd j.
    auto position = torch::arange(n, torch::kDouble).unsqueeze(1);
    auto j = torch::arange(d, torch::kDouble);
    auto angle = position / torch::pow(10000.0, 2 * torch::floor(j / 2) / static_cast<double>(d));
    using torch::indexing::Slice;
    table_ = torch::cat({torch::sin(angle.index({Slice(), Slice(0, torch::indexing::None, 2)})),
                         torch::cos(angle.index({Slice(), Slice(1, torch::indexing::None, 2)}))},
                        1)
                 .to(torch::kFloat)
                 .contiguous();
    return;
  }
  auto position = torch::arange(n, torch::kFloat).unsqueeze(1);
  auto div = torch::exp(torch::arange(0, d, 2, torch::kFloat) * (-std::log(10000.0) / static_cast<double>(d)));
  table_ = torch::zeros({n, d});
  table_.index_put_({torch::indexing::Slice(), torch::indexing::Slice(0, torch::indexing::None, 2)},
                    torch::sin(position * div));
  table_.index_put_({torch::indexing::Slice(), torch::indexing::Slice(1, torch::indexing::None, 2)},
                    torch::cos(position * div).narrow(1, 0, d / 2));
  // Not a registered buffer: it is a pure function of (max_len, d) and would only bloat
  // every checkpoint; it follows the module's device lazily in forward.
}

torch::Tensor PositionalEncodingImpl::forward(int64_t length, int64_t offset) {
  TORCH_CHECK(offset + length <= options.max_len(), "sequence longer than max_positions (", options.max_len(), ")");
  return table_.narrow(0, offset, length);
}

// ---------------------------------------------------------------------------------------
EncoderLayerImpl::EncoderLayerImpl(TransformerLayerOptions options_) : options(options_) {
  self_attn_ = register_module(
      "self_attn", MultiHeadAttention(MultiHeadAttentionOptions(options.d_model(), options.heads())
                                          .dropout(options.attention_dropout())));
  ffn_ = register_module("ffn", FeedForward(FeedForwardOptions(options.d_model(), options.ffn())
                                                .dropout(options.activation_dropout())
                                                .activation(options.activation())));
  norm1_ = register_module("norm1", torch::nn::LayerNorm(torch::nn::LayerNormOptions({options.d_model()})));
  norm2_ = register_module("norm2", torch::nn::LayerNorm(torch::nn::LayerNormOptions({options.d_model()})));
  dropout_ = register_module("dropout", torch::nn::Dropout(options.dropout()));
}

torch::Tensor EncoderLayerImpl::forward(const torch::Tensor& x_in, const torch::Tensor& src_mask) {
  torch::Tensor x = x_in;
  if (options.pre_norm()) {
    x = x + dropout_(self_attn_->forward_self(norm1_(x), src_mask));
    x = x + dropout_(ffn_(norm2_(x)));
  } else {
    x = norm1_(x + dropout_(self_attn_->forward_self(x, src_mask)));
    x = norm2_(x + dropout_(ffn_(x)));
  }
  return x;
}

// ---------------------------------------------------------------------------------------
DecoderLayerImpl::DecoderLayerImpl(TransformerLayerOptions options_) : options(options_) {
  auto mha = MultiHeadAttentionOptions(options.d_model(), options.heads()).dropout(options.attention_dropout());
  self_attn_ = register_module("self_attn", MultiHeadAttention(mha));
  cross_attn_ = register_module("cross_attn", MultiHeadAttention(mha.self_attention(false)));
  ffn_ = register_module("ffn", FeedForward(FeedForwardOptions(options.d_model(), options.ffn())
                                                .dropout(options.activation_dropout())
                                                .activation(options.activation())));
  norm1_ = register_module("norm1", torch::nn::LayerNorm(torch::nn::LayerNormOptions({options.d_model()})));
  norm2_ = register_module("norm2", torch::nn::LayerNorm(torch::nn::LayerNormOptions({options.d_model()})));
  norm3_ = register_module("norm3", torch::nn::LayerNorm(torch::nn::LayerNormOptions({options.d_model()})));
  dropout_ = register_module("dropout", torch::nn::Dropout(options.dropout()));
}

template <typename SelfAttention, typename CrossAttention>
torch::Tensor DecoderLayerImpl::block(const torch::Tensor& x_in, SelfAttention&& self_attention,
                                      CrossAttention&& cross_attention) {
  torch::Tensor x = x_in;
  if (options.pre_norm()) {
    x = x + dropout_(self_attention(norm1_(x)));
    x = x + dropout_(cross_attention(norm2_(x)));
    x = x + dropout_(ffn_(norm3_(x)));
  } else {
    x = norm1_(x + dropout_(self_attention(x)));
    x = norm2_(x + dropout_(cross_attention(x)));
    x = norm3_(x + dropout_(ffn_(x)));
  }
  return x;
}

torch::Tensor DecoderLayerImpl::forward(const torch::Tensor& x, const torch::Tensor& memory,
                                        const torch::Tensor& causal_mask, const torch::Tensor& src_mask,
                                        torch::Tensor* cross_weights) {
  auto [k, v] = cross_attn_->project_memory(memory);
  return block(
      x, [&](const torch::Tensor& h) { return self_attn_->forward_self(h, causal_mask); },
      [&](const torch::Tensor& h) { return cross_attn_->forward_cross(h, k, v, src_mask, cross_weights); });
}

torch::Tensor DecoderLayerImpl::step(const torch::Tensor& x, DecoderLayerState& state, const torch::Tensor& src_mask,
                                     torch::Tensor* cross_weights) {
  return block(
      x, [&](const torch::Tensor& h) { return self_attn_->forward_self_step(h, state.self_steps, state.origins); },
      [&](const torch::Tensor& h) {
        return cross_attn_->forward_cross(h, state.cross_k, state.cross_v, src_mask, cross_weights);
      });
}

// ---------------------------------------------------------------------------------------
EmbeddingsImpl::EmbeddingsImpl(torch::nn::Embedding table_, PositionalEncoding positions, double dropout, bool scale)
    : table(table_), positions_(positions) {
  // The table is registered by the owning model, not here: with tied vocabularies it is
  // shared, and LibTorch's parameters() does not deduplicate, so registering it twice would
  // make the optimizer step the same weight twice.
  register_module("positions", positions_);
  dropout_ = register_module("dropout", torch::nn::Dropout(dropout));
  scale_ = scale ? std::sqrt(static_cast<double>(table->options.embedding_dim())) : 1.0;
}

torch::Tensor EmbeddingsImpl::forward(const torch::Tensor& tokens, int64_t offset) {
  auto pe = positions_(tokens.size(1), offset);
  if (pe.device() != tokens.device()) pe = pe.to(tokens.device());
  return dropout_((scale_ == 1.0 ? table(tokens) : table(tokens) * scale_) + pe);
}

// ---------------------------------------------------------------------------------------
namespace {
TransformerLayerOptions layer_options(const ModelConfig& c) {
  const TransformerConfig& t = c.get<TransformerConfig>();
  return TransformerLayerOptions(t.d_model, t.heads, t.ffn)
      .dropout(c.dropout)
      .attention_dropout(c.attention_dropout)
      .activation_dropout(t.activation_dropout)
      .pre_norm(t.pre_norm)
      .activation(t.activation);
}
}  // namespace

EncoderImpl::EncoderImpl(const ModelConfig& config, Embeddings embeddings) : embeddings_(embeddings) {
  const TransformerConfig& t = config.get<TransformerConfig>();
  register_module("embeddings", embeddings_);
  layers_ = register_module("layers", torch::nn::ModuleList());
  for (int64_t i = 0; i < t.encoder_layers; ++i) layers_->push_back(EncoderLayer(layer_options(config)));
  if (t.pre_norm)
    final_norm_ = register_module("final_norm", torch::nn::LayerNorm(torch::nn::LayerNormOptions({t.d_model})));
}

torch::Tensor EncoderImpl::forward(const torch::Tensor& src, const torch::Tensor& src_mask) {
  auto x = embeddings_(src);
  for (const auto& layer : *layers_) x = layer->as<EncoderLayer>()->forward(x, src_mask);
  if (!final_norm_.is_empty()) x = final_norm_(x);
  return x;
}

DecoderImpl::DecoderImpl(const ModelConfig& config, Embeddings embeddings) : embeddings_(embeddings) {
  const TransformerConfig& t = config.get<TransformerConfig>();
  register_module("embeddings", embeddings_);
  layers_ = register_module("layers", torch::nn::ModuleList());
  for (int64_t i = 0; i < t.decoder_layers; ++i) layers_->push_back(DecoderLayer(layer_options(config)));
  if (t.pre_norm)
    final_norm_ = register_module("final_norm", torch::nn::LayerNorm(torch::nn::LayerNormOptions({t.d_model})));
}

torch::Tensor DecoderImpl::causal_mask(int64_t length) {
  // Built once and sliced: position i may see positions <= i.
  if (!causal_table_.defined() || causal_table_.size(0) < length) {
    // A normal tensor even when first built under InferenceMode (validation before the first
    // update, as --init-from does): LibTorch 2.x refuses inference tensors in a later
    // training forward pass.
    c10::InferenceMode normal_tensors(false);
    const int64_t n = std::max<int64_t>(length, 256);
    causal_table_ = torch::full({n, n}, kMaskValue).triu(1);
  }
  return causal_table_.narrow(0, 0, length).narrow(1, 0, length);
}

torch::Tensor DecoderImpl::forward(const torch::Tensor& tgt_in, const torch::Tensor& memory,
                                   const torch::Tensor& src_mask) {
  auto x = embeddings_(tgt_in);
  auto mask = causal_mask(tgt_in.size(1));
  if (mask.device() != x.device()) {
    c10::InferenceMode normal_tensors(false);
    causal_table_ = causal_table_.to(x.device());
    mask = causal_mask(tgt_in.size(1));
  }
  for (const auto& layer : *layers_) x = layer->as<DecoderLayer>()->forward(x, memory, mask, src_mask);
  if (!final_norm_.is_empty()) x = final_norm_(x);
  return x;
}

std::vector<DecoderLayerState> DecoderImpl::start(const torch::Tensor& memory) {
  std::vector<DecoderLayerState> states(layers_->size());
  for (size_t i = 0; i < layers_->size(); ++i) {
    auto [k, v] = layers_->ptr<DecoderLayerImpl>(i)->project_memory(memory);
    states[i].cross_k = k.contiguous();
    states[i].cross_v = v.contiguous();
  }
  return states;
}

torch::Tensor DecoderImpl::step(const torch::Tensor& tokens, int64_t position, std::vector<DecoderLayerState>& states,
                                const torch::Tensor& src_mask, torch::Tensor* attention, Alignment alignment) {
  auto x = embeddings_(tokens.unsqueeze(1), position);
  const int64_t n = num_layers();
  const int64_t record = !attention ? -1 : alignment.layer < 0 ? n - 1 : std::min(alignment.layer, n - 1);
  for (int64_t i = 0; i < n; ++i) {
    torch::Tensor weights;
    x = layers_->ptr<DecoderLayerImpl>(i)->step(x, states[i], src_mask, i == record ? &weights : nullptr);
    if (i == record) {
      weights = weights.squeeze(2);  // [B,H,S]
      *attention = alignment.head < 0 ? weights.mean(1) : weights.select(1, std::min(alignment.head, weights.size(1) - 1));
    }
  }
  if (!final_norm_.is_empty()) x = final_norm_(x);
  return x.squeeze(1);
}

// ---------------------------------------------------------------------------------------
TransformerImpl::TransformerImpl(const ModelConfig& config) : config_(config) {
  const TransformerConfig& t = config.get<TransformerConfig>();
  for (int64_t i = 0; i < t.decoder_layers; ++i)
    entry_names_.push_back({"layer" + std::to_string(i) + ".cross_keys", "layer" + std::to_string(i) + ".cross_values",
                            "layer" + std::to_string(i) + ".self_projections"});
  auto make_table = [&](int64_t vocab) {
    auto table = torch::nn::Embedding(torch::nn::EmbeddingOptions(vocab, t.d_model).padding_idx(kPadId));
    if (WeightsFromFileGuard::active()) return table;
    torch::nn::init::normal_(table->weight, 0.0, std::pow(static_cast<double>(t.d_model), -0.5));
    torch::NoGradGuard no_grad;
    table->weight[kPadId].zero_();
    return table;
  };
  const bool shared = (config.shared_vocab || config.tie_embeddings) && config.src_vocab == config.tgt_vocab;
  src_table_ = register_module("src_embedding", make_table(config.src_vocab));
  tgt_table_ = shared ? src_table_ : register_module("tgt_embedding", make_table(config.tgt_vocab));
  auto positions = PositionalEncoding(PositionalEncodingOptions(t.d_model, config.max_positions)
                                          .concatenated(t.positions == "concatenated"));
  encoder_ = register_module(
      "encoder", Encoder(config, Embeddings(src_table_, positions, config.dropout, t.scale_embedding)));
  decoder_ = register_module(
      "decoder", Decoder(config, Embeddings(tgt_table_, positions, config.dropout, t.scale_embedding)));
  if (!config.tie_output) {
    output_ = register_module(
        "output", QuantizableLinear(torch::nn::LinearOptions(t.d_model, config.tgt_vocab).bias(t.output_bias)));
    init_linear(output_);
  } else if (t.output_bias) {
    output_bias_ = register_parameter("output_bias", torch::zeros({config.tgt_vocab}));
  }
}

torch::Tensor TransformerImpl::additive_mask(const torch::Tensor& src_mask) {
  auto keep = src_mask.view({src_mask.size(0), 1, 1, src_mask.size(1)});
  return torch::zeros(keep.sizes(), torch::TensorOptions().device(src_mask.device())).masked_fill_(keep.logical_not(), kMaskValue);
}

void TransformerImpl::quantize_tied_output() {
  if (config_.tie_output) tied_output_ = quantized_copy(tgt_table_->weight);
}

torch::Tensor TransformerImpl::project(const torch::Tensor& hidden) {
  // The int8 copy on the CPU only: it is not registered, so it does not follow the model to CUDA.
  if (!config_.tie_output) return output_(hidden);
  auto logits = tied_output_ && !is_training() && hidden.device().is_cpu() ? tied_output_(hidden)
                                                                            : F::linear(hidden, tgt_table_->weight);
  return output_bias_.defined() ? logits + output_bias_ : logits;
}

torch::Tensor TransformerImpl::forward(const torch::Tensor& src, const torch::Tensor& src_mask,
                                       const torch::Tensor& tgt_in) {
  auto mask = additive_mask(src_mask);
  auto memory = encoder_(src, mask);
  return project(decoder_(tgt_in, memory, mask));
}

torch::Tensor TransformerImpl::encode(const torch::Tensor& src, const torch::Tensor& src_mask) {
  return encoder_(src, additive_mask(src_mask));
}

// State entries: the additive source mask and each layer's cross-attention keys and values
// follow the source sentence; "origins" (see DecoderLayerState; undefined before the first
// step) follows the row; each layer's self-attention projections are a history list, one
// tensor per step, never copied.
DecoderState TransformerImpl::start(const torch::Tensor& memory, const torch::Tensor& src_mask) {
  using Rows = DecoderState::Rows;
  DecoderState state;
  state.add("source_mask", additive_mask(src_mask), Rows::kPerSource);
  const auto layers = decoder_->start(memory);
  for (size_t i = 0; i < layers.size(); ++i) {
    state.add(entry_names_[i].cross_keys, layers[i].cross_k, Rows::kPerSource);
    state.add(entry_names_[i].cross_values, layers[i].cross_v, Rows::kPerSource);
  }
  state.add("origins", torch::Tensor(), Rows::kPerRow);
  return state;
}

torch::Tensor TransformerImpl::step(const torch::Tensor& prev_tokens, DecoderState& state) {
  const int64_t n = decoder_->num_layers(), rows = prev_tokens.size(0);
  // Each row's own position t lives in its row of this step's projection.
  auto& origins = state.at("origins");
  auto here = torch::arange(rows, torch::TensorOptions().dtype(torch::kLong).device(prev_tokens.device())).unsqueeze(1);
  origins = origins.defined() ? torch::cat({origins, here}, 1) : here;
  std::vector<DecoderLayerState> layers(n);
  for (int64_t i = 0; i < n; ++i) {
    const auto& names = entry_names_[static_cast<size_t>(i)];
    layers[i].cross_k = state.at(names.cross_keys);
    layers[i].cross_v = state.at(names.cross_values);
    layers[i].origins = origins;
    layers[i].self_steps = std::move(state.history(names.self_projections));  // moved in and back: no copies
  }
  auto hidden = decoder_->step(prev_tokens, state.position, layers, state.at("source_mask"),
                               state.record_attention ? &state.attention : nullptr, state.alignment);
  for (int64_t i = 0; i < n; ++i)
    state.history(entry_names_[static_cast<size_t>(i)].self_projections) = std::move(layers[i].self_steps);
  TORCH_CHECK(state.history(entry_names_[0].self_projections).size() == static_cast<size_t>(state.position + 1),
              "Transformer::step: not this model's state");
  state.position += 1;
  return project(hidden);
}

// ---------------------------------------------------------------------------------------
Seq2SeqModel make_transformer_module(const ModelConfig& config) { return std::make_shared<TransformerImpl>(config); }

}  // namespace nmt::models
