#include "nmt/engine/gru.h"

#include <algorithm>
#include <cmath>
#include <numeric>

#include <fmt/format.h>

#include "nmt/engine/load.h"
#include "nmt/kernels/recurrent.h"
#include "nmt/util/error.h"

namespace nmt::engine {
namespace {

// The sigmoids and tanhs of the cells and the attention are kernels/recurrent.h's (AVX2 where the
// CPU has it, about 1 ulp): libm's scalar tanhf took 29 % of a GRU's decoding time.
const kernels::RecurrentKernel kKernel = kernels::best_recurrent_kernel();

// One GRU layer (direction `suffix`: "_l0", "_l1_reverse", ...) of `module` ("encoder.", "decoder.").
GruLayerWeights gru_layer(const WeightSource& w, const std::string& module, const std::string& suffix, int64_t in,
                          int64_t H, bool layer_norm) {
  const std::string gru = module + "gru.";
  const float* w_ih = w.f32(gru + "weight_ih" + suffix, {3 * H, in});
  const float* w_hh = w.f32(gru + "weight_hh" + suffix, {3 * H, H});
  GruLayerWeights l;
  if (!layer_norm) {
    l.input = Linear::float32(w_ih, w.f32(gru + "bias_ih" + suffix, {3 * H}), 3 * H, in);
    l.recurrent = Linear::float32(w_hh, w.f32(gru + "bias_hh" + suffix, {3 * H}), 3 * H, H);
    return l;
  }
  l.input = Linear::float32(w_ih, nullptr, 3 * H, in);
  l.recurrent = Linear::float32(w_hh, nullptr, 3 * H, H);
  l.input_norm = {copy_of(w, module + "ln_input" + suffix, {3 * H}), copy_of(w, gru + "bias_ih" + suffix, {3 * H})};
  l.recurrent_norm = {copy_of(w, module + "ln_hidden" + suffix, {3 * H}), copy_of(w, gru + "bias_hh" + suffix, {3 * H})};
  return l;
}

std::string layer_suffix(int64_t layer, bool reverse) { return fmt::format("_l{}{}", layer, reverse ? "_reverse" : ""); }

void gather_rows(const float* table, const int32_t* ids, int64_t rows, int64_t width, float* out) {
  for (int64_t r = 0; r < rows; ++r) std::copy_n(table + static_cast<int64_t>(ids[r]) * width, width, out + r * width);
}

}  // namespace

GruBahdanau::GruBahdanau(const GruSpec& spec, const WeightSource& w, bool int8) : spec_(spec) {
  const int64_t E = spec.embedding, H = spec.hidden, L = spec.layers, D = spec.bidirectional ? 2 : 1;
  if (E < 1 || H < 1 || L < 1)
    throw RuntimeError(fmt::format("{}: a GRU needs positive embedding, hidden and layers", w.description()));
  src_embedding_ = copy_of(w, "src_embedding.weight", {spec.src_vocab, E});
  if (!spec.shared_embeddings) tgt_embedding_ = copy_of(w, "tgt_embedding.weight", {spec.tgt_vocab, E});
  for (int64_t l = 0; l < L; ++l) {
    encoder_.emplace_back();
    for (int64_t d = 0; d < D; ++d)
      encoder_.back().push_back(gru_layer(w, "encoder.", layer_suffix(l, d == 1), l == 0 ? E : D * H, H, spec.layer_norm));
  }
  if (spec.bidirectional) projection_ = linear_of(w, "encoder.projection", H, 2 * H, int8);
  for (int64_t l = 0; l < L; ++l)
    decoder_.push_back(gru_layer(w, "decoder.", layer_suffix(l, false), l == 0 ? E + H : H, H, spec.layer_norm));
  bridge_ = linear_of(w, "decoder.bridge", L * H, 2 * H, int8);
  w_q_ = linear_of(w, "decoder.attention.w_q", H, H, int8, /*bias=*/false);
  w_k_ = linear_of(w, "decoder.attention.w_k", H, H, int8, /*bias=*/false);
  v_ = copy_of(w, "decoder.attention.v.weight", {1, H});
  pre_output_ = linear_of(w, "decoder.pre_output", E, 2 * H + E, int8);
  if (!spec.tie_output) {
    output_ = linear_of(w, "output", spec.tgt_vocab, E, int8, /*bias=*/false);
  } else {
    output_ = int8 ? Linear::int8(quant::quantize_weight(target_table(), spec.tgt_vocab, E), nullptr)
                   : Linear::float32(target_table(), nullptr, spec.tgt_vocab, E);
  }
}

std::unique_ptr<ModelRun> GruBahdanau::new_run() const { return std::make_unique<GruRun>(*this); }

// ---------------------------------------------------------------------------------------

void GruRun::gates(const Linear& product, const LayerNorm& norm, const float* x, int64_t rows, float* out) {
  product.forward(x, rows, out, gemm_);
  if (!norm.gain.empty()) layer_norm(out, rows, product.out_features(), norm.gain.data(), norm.bias.data());
}

void GruRun::encode_direction(const GruLayerWeights& w, const float* x, bool reverse, float* out, int64_t width,
                              int64_t column) {
  const int64_t H = model_.spec_.hidden, B = static_cast<int64_t>(source_start_.size()) - 1;
  const int64_t n = source_start_.back();
  grow(gi_, n * 3 * H);
  gates(w.input, w.input_norm, x, n, gi_.data());  // every token's input gates at once
  // Sources longest first: those still running at step i are the first `active` ranks.
  std::vector<int64_t> order(static_cast<size_t>(B));
  std::iota(order.begin(), order.end(), 0);
  const auto length = [&](int64_t s) { return source_start_[static_cast<size_t>(s) + 1] - source_start_[static_cast<size_t>(s)]; };
  std::stable_sort(order.begin(), order.end(), [&](int64_t a, int64_t b) { return length(a) > length(b); });
  grow(h_, B * H);
  grow(gh_, B * 3 * H);
  grow(step_gi_, B * 3 * H);
  grow(next_h_, B * H);
  grow(cell_saved_, B * 4 * H);
  std::fill(h_.begin(), h_.begin() + B * H, 0.0f);
  int64_t active = B;
  for (int64_t i = 0; i < longest_source_; ++i) {
    while (active > 0 && length(order[static_cast<size_t>(active - 1)]) <= i) --active;
    gates(w.recurrent, w.recurrent_norm, h_.data(), active, gh_.data());
    const auto token_of = [&](int64_t k) {
      const int64_t s = order[static_cast<size_t>(k)];
      return source_start_[static_cast<size_t>(s)] + (reverse ? length(s) - 1 - i : i);
    };
    for (int64_t k = 0; k < active; ++k) std::copy_n(gi_.data() + token_of(k) * 3 * H, 3 * H, step_gi_.data() + k * 3 * H);
    kernels::gru_cell_forward(step_gi_.data(), gh_.data(), h_.data(), nullptr, H, 0, active, next_h_.data(),
                              cell_saved_.data(), kKernel);
    std::copy_n(next_h_.data(), active * H, h_.data());
    for (int64_t k = 0; k < active; ++k) std::copy_n(h_.data() + k * H, H, out + token_of(k) * width + column);
  }
}

void GruRun::start(const std::vector<const text::TokenIds*>& sources) {
  const GruBahdanau& m = model_;
  const GruSpec& spec = m.spec_;
  const int64_t E = spec.embedding, H = spec.hidden, L = spec.layers, D = spec.bidirectional ? 2 : 1;
  const int64_t B = static_cast<int64_t>(sources.size());
  source_start_.assign(1, 0);
  longest_source_ = 0;
  std::vector<int32_t> tokens;
  for (const text::TokenIds* s : sources) {
    if (s->empty()) throw RuntimeError("GruRun::start: an empty source (EOS expected)");
    tokens.insert(tokens.end(), s->begin(), s->end());
    source_start_.push_back(static_cast<int64_t>(tokens.size()));
    longest_source_ = std::max<int64_t>(longest_source_, static_cast<int64_t>(s->size()));
  }
  const int64_t n = static_cast<int64_t>(tokens.size());
  grow(x_, n * std::max(E, D * H));
  grow(deep_in_, n * D * H);
  gather_rows(m.src_embedding_.data(), tokens.data(), n, E, x_.data());
  float* in = x_.data();
  float* out = deep_in_.data();
  for (const auto& layer : m.encoder_) {
    for (int64_t d = 0; d < D; ++d) encode_direction(layer[static_cast<size_t>(d)], in, d == 1, out, D * H, d * H);
    std::swap(in, out);
  }
  grow(memory_, n * H);
  if (spec.bidirectional) m.projection_.forward(in, n, memory_.data(), gemm_);
  else std::copy_n(in, n * H, memory_.data());
  grow(keys_, n * H);
  m.w_k_.forward(memory_.data(), n, keys_.data(), gemm_);
  // The initial state: tanh(bridge([mean of the memory ; its last token])), one per layer.
  grow(deep_in_, B * 2 * H);
  for (int64_t s = 0; s < B; ++s) {
    const int64_t begin = source_start_[static_cast<size_t>(s)], len = source_start_[static_cast<size_t>(s) + 1] - begin;
    float* row = deep_in_.data() + s * 2 * H;
    std::fill(row, row + H, 0.0f);
    for (int64_t j = 0; j < len; ++j) axpy(1.0f, memory_.data() + (begin + j) * H, row, H);
    for (int64_t k = 0; k < H; ++k) row[k] /= static_cast<float>(len);
    std::copy_n(memory_.data() + (begin + len - 1) * H, H, row + H);
  }
  grow(h_, B * L * H);
  m.bridge_.forward(deep_in_.data(), B, h_.data(), gemm_);
  state_.resize(static_cast<size_t>(L));
  next_state_.resize(static_cast<size_t>(L));
  kernels::tanh_inplace(h_.data(), B * L * H, kKernel);
  for (int64_t l = 0; l < L; ++l) {
    auto& st = state_[static_cast<size_t>(l)];
    grow(st, B * H);
    for (int64_t s = 0; s < B; ++s) std::copy_n(h_.data() + s * L * H + l * H, H, st.data() + s * H);
  }
  row_source_.resize(sources.size());
  std::iota(row_source_.begin(), row_source_.end(), 0);
}

void GruRun::attend(const float* query, float* context, float* record) {
  const int64_t H = model_.spec_.hidden, R = rows();
  const float* v = model_.v_.data();
#pragma omp parallel for schedule(static) if (R > 1)
  for (int64_t r = 0; r < R; ++r) {
    const int64_t s = row_source_[static_cast<size_t>(r)];
    const int64_t begin = source_start_[static_cast<size_t>(s)], len = source_start_[static_cast<size_t>(s) + 1] - begin;
    ScoreScratch scratch(len);
    float* scores = scratch.data();
    const float* q = query + r * H;
    thread_local std::vector<float> features;  // grows once per thread
    grow(features, H);
    for (int64_t j = 0; j < len; ++j) {
      const float* k = keys_.data() + (begin + j) * H;
      for (int64_t i = 0; i < H; ++i) features[static_cast<size_t>(i)] = q[i] + k[i];
      kernels::tanh_inplace(features.data(), H, kKernel);
      scores[j] = dot(v, features.data(), H);
    }
    softmax(scores, len);
    float* c = context + r * H;
    std::fill(c, c + H, 0.0f);
    for (int64_t j = 0; j < len; ++j) axpy(scores[j], memory_.data() + (begin + j) * H, c, H);
    if (record) {
      float* rec = record + r * longest_source_;
      std::copy_n(scores, len, rec);
      std::fill(rec + len, rec + longest_source_, 0.0f);
    }
  }
}

void GruRun::step(const std::vector<int32_t>& tokens, std::vector<float>& logits, std::vector<float>* attention,
                  int64_t, int64_t) {
  const GruBahdanau& m = model_;
  const GruSpec& spec = m.spec_;
  const int64_t E = spec.embedding, H = spec.hidden, L = spec.layers, R = rows();
  if (static_cast<int64_t>(tokens.size()) != R) throw RuntimeError("GruRun::step: one token per row");
  // Layer 0's input [e ; context] and the deep output's [s ; context ; e], row by row.
  grow(x_, R * (E + H));
  grow(deep_in_, R * (2 * H + E));
  grow(query_, R * H);
  grow(context_, R * H);
  grow(gi_, R * 3 * H);
  grow(gh_, R * 3 * H);
  grow(deep_, R * E);
  m.w_q_.forward(state_[static_cast<size_t>(L - 1)].data(), R, query_.data(), gemm_);  // the previous top state
  if (attention) attention->resize(static_cast<size_t>(R * longest_source_));
  attend(query_.data(), context_.data(), attention ? attention->data() : nullptr);
  const float* table = m.target_table();
  for (int64_t r = 0; r < R; ++r) {
    const float* e = table + static_cast<int64_t>(tokens[static_cast<size_t>(r)]) * E;
    std::copy_n(e, E, x_.data() + r * (E + H));
    std::copy_n(context_.data() + r * H, H, x_.data() + r * (E + H) + E);
  }
  const float* in = x_.data();
  for (int64_t l = 0; l < L; ++l) {
    const GruLayerWeights& w = m.decoder_[static_cast<size_t>(l)];
    const auto& h = state_[static_cast<size_t>(l)];
    auto& next = next_state_[static_cast<size_t>(l)];
    grow(next, R * H);
    gates(w.input, w.input_norm, in, R, gi_.data());
    gates(w.recurrent, w.recurrent_norm, h.data(), R, gh_.data());
    grow(cell_saved_, R * 4 * H);
    kernels::gru_cell_forward(gi_.data(), gh_.data(), h.data(), nullptr, H, 0, R, next.data(), cell_saved_.data(), kKernel);
    in = next.data();
  }
  state_.swap(next_state_);
  const float* top = state_[static_cast<size_t>(L - 1)].data();
  for (int64_t r = 0; r < R; ++r) {
    float* row = deep_in_.data() + r * (2 * H + E);
    std::copy_n(top + r * H, H, row);
    std::copy_n(context_.data() + r * H, H, row + H);
    std::copy_n(x_.data() + r * (E + H), E, row + 2 * H);
  }
  m.pre_output_.forward(deep_in_.data(), R, deep_.data(), gemm_);
  kernels::tanh_inplace(deep_.data(), R * E, kKernel);
  logits.resize(static_cast<size_t>(R * spec.tgt_vocab));
  m.output_.forward(deep_.data(), R, logits.data(), gemm_);
}

void GruRun::select(const std::vector<int64_t>& rows) {
  const int64_t H = model_.spec_.hidden;
  const int64_t n = static_cast<int64_t>(rows.size());
  for (size_t l = 0; l < state_.size(); ++l) {
    auto& to = next_state_[l];
    grow(to, n * H);
    for (int64_t i = 0; i < n; ++i) std::copy_n(state_[l].data() + rows[static_cast<size_t>(i)] * H, H, to.data() + i * H);
    state_[l].swap(to);
  }
  scratch_rows_.resize(rows.size());
  for (size_t i = 0; i < rows.size(); ++i) scratch_rows_[i] = row_source_[static_cast<size_t>(rows[i])];
  row_source_.assign(scratch_rows_.begin(), scratch_rows_.end());
}

}  // namespace nmt::engine
