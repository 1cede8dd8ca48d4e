#include "nmt/models/gru_bahdanau.h"
#include "nmt/models/fused_recurrent.h"
#include "nmt/models/init.h"

#include <algorithm>
#include <cmath>

namespace nmt::models {
namespace F = torch::nn::functional;

namespace {

torch::nn::GRUOptions gru_options(int64_t input, int64_t hidden, int64_t layers, double dropout, bool bidirectional) {
  auto o = torch::nn::GRUOptions(input, hidden).num_layers(layers).batch_first(true).bidirectional(bidirectional);
  // LibTorch warns when dropout is set on a single layer (it would do nothing).
  if (layers > 1) o.dropout(dropout);
  return o;
}

// One layer's (and direction's) weights of a torch::nn::GRU, by its parameter names, for the
// stepwise paths, which look them up once per batch; with layer normalisation, the gains its
// owner registered beside it (undefined without).
struct GruLayerWeights {
  torch::Tensor w_ih, b_ih, w_hh, b_hh;
  torch::Tensor input_gain, hidden_gain;
};

std::string layer_suffix(int64_t layer, bool reverse) {
  return "_l" + std::to_string(layer) + (reverse ? "_reverse" : "");
}

GruLayerWeights gru_layer_weights(torch::nn::GRU& gru, const torch::nn::Module& owner, int64_t layer,
                                  bool reverse = false) {
  auto named = gru->named_parameters(/*recurse=*/false);
  const std::string suffix = layer_suffix(layer, reverse);
  GruLayerWeights w{named["weight_ih" + suffix], named["bias_ih" + suffix], named["weight_hh" + suffix],
                    named["bias_hh" + suffix], {}, {}};
  auto own = owner.named_parameters(/*recurse=*/false);
  if (const auto* gain = own.find("ln_input" + suffix)) w.input_gain = *gain;
  if (const auto* gain = own.find("ln_hidden" + suffix)) w.hidden_gain = *gain;
  return w;
}

// Registers the gains of each layer's (and direction's) normalised gate products on `owner`,
// 1 to start with (the normalised products as they are).
void register_layer_norm_gains(torch::nn::Module& owner, int64_t hidden, int64_t layers, bool bidirectional) {
  for (int64_t l = 0; l < layers; ++l)
    for (bool reverse : {false, true}) {
      if (reverse && !bidirectional) continue;
      owner.register_parameter("ln_input" + layer_suffix(l, reverse), torch::ones({3 * hidden}));
      owner.register_parameter("ln_hidden" + layer_suffix(l, reverse), torch::ones({3 * hidden}));
    }
}

// Gate products [rows, 3H] without their bias, layer-normalised over the 3H gates: × gain, + bias.
torch::Tensor normalised(const torch::Tensor& products, const torch::Tensor& gain, const torch::Tensor& bias) {
  return torch::layer_norm(products, {products.size(-1)}, gain, bias);
}

// x Wᵀ + b, normalised where there is a gain (the layer's input or recurrent product).
torch::Tensor gate_products(const torch::Tensor& x, const torch::Tensor& weight, const torch::Tensor& bias,
                            const torch::Tensor& gain) {
  return gain.defined() ? normalised(F::linear(x, weight), gain, bias) : F::linear(x, weight, bias);
}
torch::Tensor input_gates_of(const torch::Tensor& x, const GruLayerWeights& w) {
  return gate_products(x, w.w_ih, w.b_ih, w.input_gain);
}
torch::Tensor hidden_gates_of(const torch::Tensor& h, const GruLayerWeights& w) {
  return gate_products(h, w.w_hh, w.b_hh, w.hidden_gain);
}

// torch::nn::GRU's cell in ATen's operations, from its two gate products (r, z, n); rows whose
// `active` flag (uint8 [rows], optional) is 0 keep h.
torch::Tensor aten_gru_cell(const torch::Tensor& input_gates, const torch::Tensor& hidden_gates, const torch::Tensor& h,
                            const torch::Tensor& active) {
  auto in = input_gates.chunk(3, -1), rec = hidden_gates.chunk(3, -1);
  auto r = torch::sigmoid(in[0] + rec[0]);
  auto z = torch::sigmoid(in[1] + rec[1]);
  auto n = torch::tanh(in[2] + r * rec[2]);
  auto next = n + z * (h - n);  // (1 - z) n + z h
  if (active.defined() && active.numel() > 0) next = torch::where(active.to(torch::kBool).unsqueeze(-1), next, h);
  return next;
}

// The fused cell where it applies (training on the CPU), ATen's otherwise.
torch::Tensor gru_cell(bool fused, const torch::Tensor& input_gates, const torch::Tensor& hidden_gates,
                       const torch::Tensor& h, const torch::Tensor& active = {}) {
  return fused ? fused_gru_cell(input_gates, hidden_gates, h, active)
               : aten_gru_cell(input_gates, hidden_gates, h, active);
}
}  // namespace

// ---------------------------------------------------------------------------------------
AdditiveAttentionImpl::AdditiveAttentionImpl(AdditiveAttentionOptions options_) : options(options_) {
  const int64_t h = options.hidden_size();
  w_q_ = register_module("w_q", QuantizableLinear(torch::nn::LinearOptions(options.query_size(), h).bias(false)));
  w_k_ = register_module("w_k", QuantizableLinear(torch::nn::LinearOptions(options.key_size(), h).bias(false)));
  v_ = register_module("v", torch::nn::Linear(torch::nn::LinearOptions(h, 1).bias(false)));
  init_linear(w_q_);
  init_linear(w_k_);
  init_linear(v_);
  dropout_ = register_module("dropout", torch::nn::Dropout(options.dropout()));
}

torch::Tensor AdditiveAttentionImpl::additive_mask(const torch::Tensor& src_mask) {
  return torch::zeros(src_mask.sizes(), torch::TensorOptions().device(src_mask.device()))
      .masked_fill_(src_mask.logical_not(), kMaskValue);
}

torch::Tensor AdditiveAttentionImpl::project_keys(const torch::Tensor& keys) { return w_k_(keys); }

torch::Tensor AdditiveAttentionImpl::forward(const torch::Tensor& query, const torch::Tensor& projected_keys,
                                             const torch::Tensor& values, const torch::Tensor& mask,
                                             torch::Tensor* weights) {
  // [B,1,h] + [B,S,h] → tanh → v → [B,S]. In beam search the keys may be stored once per
  // source for `beams` consecutive query rows: [N,beams,1,h] + [N,1,S,h] → [N,beams,S].
  const int64_t rows = query.size(0), sources = projected_keys.size(0);
  TORCH_CHECK(rows % sources == 0, "additive attention: ", rows, " queries for ", sources, " sources");
  const int64_t beams = rows / sources;
  if (beams == 1 && fused_recurrence_applies(projected_keys)) {
    auto scores = fused_additive_scores(w_q_(query), projected_keys, v_->weight);
    if (mask.defined()) scores = scores + mask;
    auto attn = torch::softmax(scores, -1);
    if (weights) *weights = attn;
    if (options.dropout() > 0 && is_training()) attn = dropout_(attn);
    return torch::bmm(attn.unsqueeze(1), values).view({rows, -1});
  }
  auto features = torch::tanh(w_q_(query).view({sources, beams, 1, -1}) + projected_keys.unsqueeze(1));
  auto scores = v_(features).squeeze(-1);
  if (mask.defined()) scores = scores + mask.unsqueeze(1);
  auto attn = torch::softmax(scores, -1);
  if (weights) *weights = attn.view({rows, -1});
  if (options.dropout() > 0 && is_training()) attn = dropout_(attn);
  return torch::bmm(attn, values).view({rows, -1});
}

// ---------------------------------------------------------------------------------------
GruEncoderImpl::GruEncoderImpl(GruEncoderOptions options_, torch::nn::Embedding table)
    : options(options_), table_(table) {
  gru_ = register_module("gru", torch::nn::GRU(gru_options(options.embedding(), options.hidden(), options.layers(),
                                                           options.dropout(), options.bidirectional())));
  if (options.bidirectional()) {
    projection_ = register_module("projection", QuantizableLinear(2 * options.hidden(), options.hidden()));
    init_linear(projection_);
  }
  if (options.layer_norm())
    register_layer_norm_gains(*this, options.hidden(), options.layers(), options.bidirectional());
  dropout_ = register_module("dropout", torch::nn::Dropout(options.dropout()));
}

torch::Tensor GruEncoderImpl::forward(const torch::Tensor& src, const torch::Tensor& src_mask) {
  namespace rnn = torch::nn::utils::rnn;
  if (options.layer_norm() || fused_recurrence_applies(table_->weight)) return forward_stepwise(src, src_mask);
  const int64_t S = src.size(1);
  auto x = dropout_(table_(src));
  // Packing runs each sentence over its real tokens only. A fully padded row (length 0,
  // which packing refuses) runs one step over padding; its outputs are zeroed below.
  auto lengths = src_mask.sum(1).clamp_min(1).to(torch::kCPU, torch::kLong);
  auto packed = rnn::pack_padded_sequence(x, lengths, /*batch_first=*/true, /*enforce_sorted=*/false);
  auto packed_out = std::get<0>(gru_->forward_with_packed_input(packed));
  auto out = std::get<0>(rnn::pad_packed_sequence(packed_out, /*batch_first=*/true, 0.0, S));
  if (options.bidirectional()) out = projection_(out);
  return out * src_mask.unsqueeze(-1).to(out.dtype());
}

torch::Tensor GruEncoderImpl::packed_order_dropout(const torch::Tensor& x, const torch::Tensor& lengths) {
  namespace rnn = torch::nn::utils::rnn;
  const int64_t B = x.size(0), S = x.size(1), width = x.size(2);
  const double p = options.dropout();
  // Each padded position's flat index, packed: the packed order of the positions.
  auto positions = torch::arange(B * S, torch::kLong).view({B, S, 1});
  auto packed = rnn::pack_padded_sequence(positions, lengths, /*batch_first=*/true, /*enforce_sorted=*/false).data();
  // at::dropout's own draw (ATen's _dropout_impl): bernoulli_(1 - p), then divided by 1 - p.
  auto noise = torch::empty({packed.size(0), width}, x.options()).bernoulli_(1 - p).div_(1 - p);
  auto laid_out = torch::zeros({B * S, width}, x.options()).index_copy_(0, packed.view({-1}).to(x.device()), noise);
  return x * laid_out.view({B, S, width});
}

torch::Tensor GruEncoderImpl::forward_stepwise(const torch::Tensor& src, const torch::Tensor& src_mask) {
  const int64_t S = src.size(1), L = options.layers();
  const bool fused = fused_recurrence_applies(table_->weight);
  auto x = dropout_(table_(src));
  // As the packed path: a fully padded row runs one step over padding (zeroed at the end).
  auto lengths = src_mask.sum(1).clamp_min(1).to(torch::kCPU, torch::kLong);
  // [B,S], beside x: the stepwise path also runs on a GPU (a layer-normalised GRU).
  auto active = (torch::arange(S, torch::kLong).unsqueeze(0) < lengths.unsqueeze(1)).to(x.device(), torch::kUInt8);
  auto steps_active = active.t().contiguous();  // [S,B]: one row of flags per step
  const int64_t directions = options.bidirectional() ? 2 : 1;
  for (int64_t l = 0; l < L; ++l) {
    std::vector<torch::Tensor> direction_outputs;
    for (int64_t d = 0; d < directions; ++d) {
      const GruLayerWeights w = gru_layer_weights(gru_, *this, l, /*reverse=*/d == 1);
      auto input_gates = input_gates_of(x, w).unbind(1);
      auto h = torch::zeros({x.size(0), options.hidden()}, x.options());
      std::vector<torch::Tensor> states(static_cast<size_t>(S));
      for (int64_t i = 0; i < S; ++i) {
        const int64_t t = d == 1 ? S - 1 - i : i;
        h = gru_cell(fused, input_gates[static_cast<size_t>(t)], hidden_gates_of(h, w), h, steps_active[t]);
        states[static_cast<size_t>(t)] = h;
      }
      // A finished sentence's state is held, not output: its positions are zero, as unpacking gives.
      direction_outputs.push_back(torch::stack(states, 1) * active.unsqueeze(-1).to(x.dtype()));
    }
    x = directions == 1 ? direction_outputs[0] : torch::cat(direction_outputs, -1);
    if (l + 1 < L && options.dropout() > 0 && is_training()) x = packed_order_dropout(x, lengths);
  }
  if (options.bidirectional()) x = projection_(x);
  return x * src_mask.unsqueeze(-1).to(x.dtype());
}

// ---------------------------------------------------------------------------------------
BahdanauDecoderImpl::BahdanauDecoderImpl(BahdanauDecoderOptions options_, torch::nn::Embedding table)
    : options(options_), table_(table) {
  const int64_t E = options.embedding(), H = options.hidden(), L = options.layers();
  attention_ = register_module(
      "attention", AdditiveAttention(AdditiveAttentionOptions(H, H, H).dropout(options.attention_dropout())));
  gru_ = register_module("gru", torch::nn::GRU(gru_options(E + H, H, L, options.dropout(), false)));
  bridge_ = register_module("bridge", QuantizableLinear(2 * H, L * H));
  pre_output_ = register_module("pre_output", QuantizableLinear(H + H + E, E));
  init_linear(bridge_);
  init_linear(pre_output_);
  if (options.layer_norm()) register_layer_norm_gains(*this, H, L, /*bidirectional=*/false);
  dropout_ = register_module("dropout", torch::nn::Dropout(options.dropout()));
}

torch::Tensor BahdanauDecoderImpl::initial_state(const torch::Tensor& memory, const torch::Tensor& src_mask) {
  const int64_t B = memory.size(0), H = options.hidden();
  auto lengths = src_mask.sum(1);  // int64 [B]
  // The memory is zero on padding, so a plain sum is the masked sum.
  auto mean = memory.sum(1) / lengths.clamp_min(1).unsqueeze(1).to(memory.dtype());
  auto last_index = (lengths - 1).clamp_min(0).view({B, 1, 1}).expand({B, 1, H});
  auto last = memory.gather(1, last_index).squeeze(1);
  return torch::tanh(bridge_(torch::cat({mean, last}, -1))).view({B, options.layers(), H});
}

std::pair<torch::Tensor, torch::Tensor> BahdanauDecoderImpl::recur(const torch::Tensor& e, torch::Tensor& state,
                                                                   const torch::Tensor& projected_keys,
                                                                   const torch::Tensor& memory,
                                                                   const torch::Tensor& additive_mask,
                                                                   torch::Tensor* weights) {
  if (options.layer_norm()) return recur_normalised(e, state, projected_keys, memory, additive_mask, weights);
  // Query: the previous top-layer state. state is [layers,B,H].
  auto context = attention_->forward(state[options.layers() - 1], projected_keys, memory, additive_mask, weights);
  auto [out, next] = gru_->forward(torch::cat({e, context}, -1).unsqueeze(1), state);
  state = next;
  return {out.squeeze(1), context};
}

std::pair<torch::Tensor, torch::Tensor> BahdanauDecoderImpl::recur_normalised(
    const torch::Tensor& e, torch::Tensor& state, const torch::Tensor& projected_keys, const torch::Tensor& memory,
    const torch::Tensor& additive_mask, torch::Tensor* weights) {
  const int64_t L = options.layers();
  auto context = attention_->forward(state[L - 1], projected_keys, memory, additive_mask, weights);
  auto x = torch::cat({e, context}, -1);
  std::vector<torch::Tensor> next;
  for (int64_t l = 0; l < L; ++l) {
    // Looked up at each step rather than kept in the module: a clone()d replica would keep the
    // original's tensors.
    const GruLayerWeights w = gru_layer_weights(gru_, *this, l);
    // Between layers, as torch::nn::GRU applies it.
    if (l > 0 && options.dropout() > 0 && is_training()) x = F::dropout(x, F::DropoutFuncOptions().p(options.dropout()));
    x = aten_gru_cell(input_gates_of(x, w), hidden_gates_of(state[l], w), state[l], {});
    next.push_back(x);
  }
  state = torch::stack(next, 0);
  return {x, context};
}

torch::Tensor BahdanauDecoderImpl::deep_output(const torch::Tensor& s, const torch::Tensor& c, const torch::Tensor& e) {
  return dropout_(torch::tanh(pre_output_(torch::cat({s, c, e}, -1))));
}

torch::Tensor BahdanauDecoderImpl::forward(const torch::Tensor& tgt_in, const torch::Tensor& memory,
                                           const torch::Tensor& src_mask) {
  if (options.layer_norm() || fused_recurrence_applies(memory)) return forward_stepwise(tgt_in, memory, src_mask);
  const int64_t T = tgt_in.size(1);
  auto keys = attention_->project_keys(memory);                 // once per sentence
  auto mask = AdditiveAttentionImpl::additive_mask(src_mask);
  auto embedded = dropout_(table_(tgt_in));                     // all positions at once
  auto state = initial_state(memory, src_mask).transpose(0, 1).contiguous();
  std::vector<torch::Tensor> outputs, contexts;
  outputs.reserve(T);
  contexts.reserve(T);
  for (int64_t t = 0; t < T; ++t) {
    auto [s, c] = recur(embedded.select(1, t), state, keys, memory, mask, nullptr);
    outputs.push_back(s);
    contexts.push_back(c);
  }
  // The deep output needs no recurrence: one batched matmul over all positions.
  return deep_output(torch::stack(outputs, 1), torch::stack(contexts, 1), embedded);
}

torch::Tensor BahdanauDecoderImpl::forward_stepwise(const torch::Tensor& tgt_in, const torch::Tensor& memory,
                                                    const torch::Tensor& src_mask) {
  const int64_t T = tgt_in.size(1), E = options.embedding(), H = options.hidden(), L = options.layers();
  const bool fused = fused_recurrence_applies(memory);
  auto keys = attention_->project_keys(memory);
  auto mask = AdditiveAttentionImpl::additive_mask(src_mask);
  auto embedded = dropout_(table_(tgt_in));
  auto initial = initial_state(memory, src_mask);  // [B,L,H]
  std::vector<torch::Tensor> h(static_cast<size_t>(L));
  for (int64_t l = 0; l < L; ++l) h[static_cast<size_t>(l)] = initial.select(1, l);
  // Each layer's weights, looked up once per batch rather than at every position.
  std::vector<GruLayerWeights> layer;
  for (int64_t l = 0; l < L; ++l) layer.push_back(gru_layer_weights(gru_, *this, l));
  // The first layer's input is [e_t ; c_t]: e_t's share of its gates (and the bias) for every
  // position at once; unbind makes one backward node for all the positions. Normalised, the
  // bias comes after the normalisation of the whole product, at each step.
  const auto& w_ih0 = layer[0].w_ih;
  const bool normalised_input = layer[0].input_gain.defined();
  auto embedded_gates = (normalised_input ? F::linear(embedded, w_ih0.narrow(1, 0, E))
                                    : F::linear(embedded, w_ih0.narrow(1, 0, E), layer[0].b_ih))
                            .unbind(1);
  auto w_context = w_ih0.narrow(1, E, H).t();
  const double between_layers = L > 1 ? options.dropout() : 0.0;  // as torch::nn::GRU applies it
  std::vector<torch::Tensor> outputs, contexts;
  outputs.reserve(T);
  contexts.reserve(T);
  for (int64_t t = 0; t < T; ++t) {
    auto context = attention_->forward(h.back(), keys, memory, mask, nullptr);
    auto input_gates = torch::addmm(embedded_gates[static_cast<size_t>(t)], context, w_context);
    if (normalised_input) input_gates = normalised(input_gates, layer[0].input_gain, layer[0].b_ih);
    for (int64_t l = 0; l < L; ++l) {
      auto& state = h[static_cast<size_t>(l)];
      const auto& w = layer[static_cast<size_t>(l)];
      if (l > 0) {
        auto below = h[static_cast<size_t>(l - 1)];
        if (between_layers > 0 && is_training()) below = F::dropout(below, F::DropoutFuncOptions().p(between_layers));
        input_gates = input_gates_of(below, w);
      }
      state = gru_cell(fused, input_gates, hidden_gates_of(state, w), state);
    }
    outputs.push_back(h.back());
    contexts.push_back(context);
  }
  return deep_output(torch::stack(outputs, 1), torch::stack(contexts, 1), embedded);
}

torch::Tensor BahdanauDecoderImpl::step(const torch::Tensor& tokens, torch::Tensor& state,
                                        const torch::Tensor& projected_keys, const torch::Tensor& memory,
                                        const torch::Tensor& additive_mask, torch::Tensor* weights) {
  auto e = dropout_(table_(tokens));
  auto [s, c] = recur(e, state, projected_keys, memory, additive_mask, weights);
  return deep_output(s, c, e);
}

// ---------------------------------------------------------------------------------------
GruBahdanauImpl::GruBahdanauImpl(const ModelConfig& config) : config_(config) {
  const GruConfig& sizes = config.get<GruConfig>();
  const int64_t E = sizes.embedding, H = sizes.hidden, L = sizes.rnn_layers;
  TORCH_CHECK(E > 0 && H > 0 && L > 0, "gru: embedding, hidden and rnn_layers must be positive");
  auto make_table = [&](int64_t vocab) {
    auto table = torch::nn::Embedding(torch::nn::EmbeddingOptions(vocab, E).padding_idx(kPadId));
    if (WeightsFromFileGuard::active()) return table;
    // Scaled like the Transformer's: with a tied output, logits = o·Eᵀ with |o_i| ≤ 1 stay O(1).
    torch::nn::init::normal_(table->weight, 0.0, std::pow(static_cast<double>(E), -0.5));
    torch::NoGradGuard no_grad;
    table->weight[kPadId].zero_();
    return table;
  };
  const bool shared = (config.shared_vocab || config.tie_embeddings) && config.src_vocab == config.tgt_vocab;
  // Registered once here (and only once when shared): parameters() does not deduplicate.
  src_table_ = register_module("src_embedding", make_table(config.src_vocab));
  tgt_table_ = shared ? src_table_ : register_module("tgt_embedding", make_table(config.tgt_vocab));
  encoder_ = register_module(
      "encoder",
      GruEncoder(GruEncoderOptions(E, H, L)
                     .bidirectional(sizes.bidirectional)
                     .dropout(config.dropout)
                     .layer_norm(sizes.rnn_layer_norm),
                 src_table_));
  decoder_ = register_module(
      "decoder",
      BahdanauDecoder(
          BahdanauDecoderOptions(E, H, L)
              .dropout(config.dropout)
              .attention_dropout(config.attention_dropout)
              .layer_norm(sizes.rnn_layer_norm),
          tgt_table_));
  if (!config.tie_output) {
    output_ = register_module("output", QuantizableLinear(torch::nn::LinearOptions(E, config.tgt_vocab).bias(false)));
    init_linear(output_);
  }
}

void GruBahdanauImpl::quantize_tied_output() {
  if (config_.tie_output) tied_output_ = quantized_copy(tgt_table_->weight);
}

torch::Tensor GruBahdanauImpl::project(const torch::Tensor& deep_output) {
  // The int8 copy on the CPU only: it is not registered, so it does not follow the model to CUDA.
  if (tied_output_ && !is_training() && deep_output.device().is_cpu()) return tied_output_(deep_output);
  return config_.tie_output ? F::linear(deep_output, tgt_table_->weight) : output_(deep_output);
}

torch::Tensor GruBahdanauImpl::forward(const torch::Tensor& src, const torch::Tensor& src_mask,
                                       const torch::Tensor& tgt_in) {
  auto memory = encoder_(src, src_mask);
  return project(decoder_(tgt_in, memory, src_mask));
}

torch::Tensor GruBahdanauImpl::encode(const torch::Tensor& src, const torch::Tensor& src_mask) {
  return encoder_(src, src_mask);
}

// State entries: the attention keys (the projected memory), the memory itself and the source
// mask follow the source sentence; the GRU's hidden state [B,L,H] follows the row.
DecoderState GruBahdanauImpl::start(const torch::Tensor& memory, const torch::Tensor& src_mask) {
  using Rows = DecoderState::Rows;
  DecoderState state;
  state.add("attention_keys", decoder_->project_keys(memory).contiguous(), Rows::kPerSource);
  state.add("memory", memory.contiguous(), Rows::kPerSource);
  state.add("source_mask", AdditiveAttentionImpl::additive_mask(src_mask), Rows::kPerSource);
  state.add("hidden", decoder_->initial_state(memory, src_mask).contiguous(), Rows::kPerRow);
  return state;
}

torch::Tensor GruBahdanauImpl::step(const torch::Tensor& prev_tokens, DecoderState& state) {
  torch::Tensor& hidden_rows = state.at("hidden");
  auto hidden = hidden_rows.transpose(0, 1).contiguous();  // [B,L,H] → the GRU's [L,B,H]
  torch::Tensor weights;
  auto out = decoder_->step(prev_tokens, hidden, state.at("attention_keys"), state.at("memory"),
                            state.at("source_mask"), state.record_attention ? &weights : nullptr);
  hidden_rows = hidden.transpose(0, 1).contiguous();
  if (state.record_attention) state.attention = weights;
  state.position += 1;
  return project(out);
}

// ---------------------------------------------------------------------------------------
Seq2SeqModel make_gru_module(const ModelConfig& config) { return std::make_shared<GruBahdanauImpl>(config); }

}  // namespace nmt::models
