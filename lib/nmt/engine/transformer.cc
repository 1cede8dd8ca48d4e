#include "nmt/engine/transformer.h"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "nmt/engine/load.h"
#include "nmt/engine/ops.h"
#include "nmt/util/error.h"

namespace nmt::engine {
namespace {

// The sinusoids models/transformer.cc builds, computed the same way (float, or double rounded
// once for the concatenated layout).
std::vector<float> position_table(int64_t n, int64_t d, bool concatenated) {
  std::vector<float> table(static_cast<size_t>(n * d));
  for (int64_t p = 0; p < n; ++p) {
    float* row = table.data() + p * d;
    if (concatenated) {
      for (int64_t j = 0; j < d; ++j) {
        const double angle = static_cast<double>(p) / std::pow(10000.0, 2 * std::floor(j / 2.0) / static_cast<double>(d));
        if (j % 2 == 0) row[j / 2] = static_cast<float>(std::sin(angle));
        else row[d / 2 + (d % 2) + j / 2] = static_cast<float>(std::cos(angle));
      }
      continue;
    }
    const float step = static_cast<float>(-std::log(10000.0) / static_cast<double>(d));
    for (int64_t i = 0; 2 * i < d; ++i) {
      const float angle = static_cast<float>(p) * std::exp(static_cast<float>(2 * i) * step);
      row[2 * i] = std::sin(angle);
      if (2 * i + 1 < d) row[2 * i + 1] = std::cos(angle);
    }
  }
  return table;
}

// x[r] = table[tokens[r]] · scale + positions[position of r].
void embed(const float* table, const float* positions, const int32_t* tokens, const int64_t* at, int64_t rows, int64_t d,
           float scale, float* x) {
  for (int64_t r = 0; r < rows; ++r) {
    const float* e = table + static_cast<int64_t>(tokens[r]) * d;
    const float* p = positions + at[r] * d;
    float* y = x + r * d;
    for (int64_t i = 0; i < d; ++i) y[i] = e[i] * scale + p[i];
  }
}

}  // namespace

Transformer::Transformer(const TransformerSpec& spec, const WeightSource& w, bool int8) : spec_(spec) {
  const int64_t d = spec.d_model, f = spec.ffn;
  if (spec.heads < 1 || d % spec.heads != 0)
    throw RuntimeError(fmt::format("{}: d_model {} is not a multiple of heads {}", w.description(), d, spec.heads));
  src_embedding_ = copy_of(w, "src_embedding.weight", {spec.src_vocab, d});
  if (!spec.shared_embeddings) tgt_embedding_ = copy_of(w, "tgt_embedding.weight", {spec.tgt_vocab, d});
  positions_ = position_table(spec.max_positions, d, spec.concatenated_positions);
  for (int64_t i = 0; i < spec.encoder_layers; ++i) {
    const std::string p = fmt::format("encoder.layers.{}.", i);
    EncoderLayerWeights l;
    l.self.qkv = linear_of(w, p + "self_attn.qkv_proj", 3 * d, d, int8);
    l.self.out = linear_of(w, p + "self_attn.out_proj", d, d, int8);
    l.fc1 = linear_of(w, p + "ffn.fc1", f, d, int8);
    l.fc2 = linear_of(w, p + "ffn.fc2", d, f, int8);
    l.norm1 = norm_of(w, p + "norm1", d);
    l.norm2 = norm_of(w, p + "norm2", d);
    encoder_.push_back(std::move(l));
  }
  for (int64_t i = 0; i < spec.decoder_layers; ++i) {
    const std::string p = fmt::format("decoder.layers.{}.", i);
    DecoderLayerWeights l;
    l.self.qkv = linear_of(w, p + "self_attn.qkv_proj", 3 * d, d, int8);
    l.self.out = linear_of(w, p + "self_attn.out_proj", d, d, int8);
    l.cross.q = linear_of(w, p + "cross_attn.q_proj", d, d, int8);
    l.cross.kv = linear_of(w, p + "cross_attn.kv_proj", 2 * d, d, int8);
    l.cross.out = linear_of(w, p + "cross_attn.out_proj", d, d, int8);
    l.fc1 = linear_of(w, p + "ffn.fc1", f, d, int8);
    l.fc2 = linear_of(w, p + "ffn.fc2", d, f, int8);
    l.norm1 = norm_of(w, p + "norm1", d);
    l.norm2 = norm_of(w, p + "norm2", d);
    l.norm3 = norm_of(w, p + "norm3", d);
    decoder_.push_back(std::move(l));
  }
  if (spec.pre_norm) {
    encoder_norm_ = norm_of(w, "encoder.final_norm", d);
    decoder_norm_ = norm_of(w, "decoder.final_norm", d);
  }
  if (!spec.tie_output) {
    output_ = linear_of(w, "output", spec.tgt_vocab, d, int8, spec.output_bias);
  } else {
    const float* bias = spec.output_bias ? w.f32("output_bias", {spec.tgt_vocab}) : nullptr;
    output_ = int8 ? Linear::int8(quant::quantize_weight(target_table(), spec.tgt_vocab, d), bias)
                   : Linear::float32(target_table(), bias, spec.tgt_vocab, d);
  }
}

std::unique_ptr<ModelRun> Transformer::new_run() const { return std::make_unique<TransformerRun>(*this); }

// ---------------------------------------------------------------------------------------

int64_t TransformerRun::source_length(int64_t row) const {
  const int64_t s = row_source_[static_cast<size_t>(row)];
  return source_start_[static_cast<size_t>(s) + 1] - source_start_[static_cast<size_t>(s)];
}

void TransformerRun::start(const std::vector<const text::TokenIds*>& sources) {
  const Transformer& m = model_;
  const TransformerSpec& spec = m.spec_;
  const int64_t d = spec.d_model;
  source_start_.assign(1, 0);
  longest_source_ = 0;
  std::vector<int32_t> tokens;
  std::vector<int64_t> at;
  for (const text::TokenIds* s : sources) {
    if (static_cast<int64_t>(s->size()) > spec.max_positions)
      throw RuntimeError(fmt::format("a source of {} tokens is longer than the model's {} positions", s->size(),
                                     spec.max_positions));
    for (size_t p = 0; p < s->size(); ++p) {
      tokens.push_back((*s)[p]);
      at.push_back(static_cast<int64_t>(p));
    }
    source_start_.push_back(static_cast<int64_t>(tokens.size()));
    longest_source_ = std::max<int64_t>(longest_source_, static_cast<int64_t>(s->size()));
  }
  const int64_t n = static_cast<int64_t>(tokens.size());
  const float scale = spec.scale_embedding ? static_cast<float>(std::sqrt(static_cast<double>(d))) : 1.0f;
  grow(x_, n * d);
  grow(h_, n * d);
  grow(qkv_, n * 3 * d);
  grow(attn_, n * d);
  grow(ffn_, n * spec.ffn);
  embed(m.src_embedding_.data(), m.positions_.data(), tokens.data(), at.data(), n, d, scale, x_.data());
  for (const EncoderLayerWeights& l : m.encoder_) {
    const float* in = x_.data();
    if (spec.pre_norm) {
      std::copy(x_.begin(), x_.begin() + n * d, h_.begin());
      layer_norm(h_.data(), n, d, l.norm1.gain.data(), l.norm1.bias.data());
      in = h_.data();
    }
    l.self.qkv.forward(in, n, qkv_.data(), gemm_);
    encoder_self_attention(qkv_.data(), attn_.data());
    l.self.out.forward(attn_.data(), n, x_.data(), gemm_, {Activation::kNone, true});
    if (!spec.pre_norm) layer_norm(x_.data(), n, d, l.norm1.gain.data(), l.norm1.bias.data());
    in = x_.data();
    if (spec.pre_norm) {
      std::copy(x_.begin(), x_.begin() + n * d, h_.begin());
      layer_norm(h_.data(), n, d, l.norm2.gain.data(), l.norm2.bias.data());
      in = h_.data();
    }
    l.fc1.forward(in, n, ffn_.data(), gemm_, {spec.activation, false});
    l.fc2.forward(ffn_.data(), n, x_.data(), gemm_, {Activation::kNone, true});
    if (!spec.pre_norm) layer_norm(x_.data(), n, d, l.norm2.gain.data(), l.norm2.bias.data());
  }
  if (spec.pre_norm) layer_norm(x_.data(), n, d, m.encoder_norm_.gain.data(), m.encoder_norm_.bias.data());
  memory_kv_.resize(m.decoder_.size());
  for (size_t i = 0; i < m.decoder_.size(); ++i) {
    grow(memory_kv_[i], n * 2 * d);
    m.decoder_[i].cross.kv.forward(x_.data(), n, memory_kv_[i].data(), gemm_);
  }
  row_source_.resize(sources.size());
  for (size_t r = 0; r < sources.size(); ++r) row_source_[r] = static_cast<int64_t>(r);
  position_ = 0;
  self_kv_.resize(m.decoder_.size());
}

void TransformerRun::encoder_self_attention(const float* qkv, float* out) {
  const int64_t d = model_.spec_.d_model, H = model_.spec_.heads, dk = d / H;
  const float scale = 1.0f / std::sqrt(static_cast<float>(dk));
  const int64_t sources = static_cast<int64_t>(source_start_.size()) - 1;
#pragma omp parallel for schedule(dynamic)
  for (int64_t s = 0; s < sources; ++s) {
    const int64_t begin = source_start_[static_cast<size_t>(s)], len = source_start_[static_cast<size_t>(s) + 1] - begin;
    std::vector<float> scores(static_cast<size_t>(len));
    for (int64_t i = begin; i < begin + len; ++i)
      for (int64_t h = 0; h < H; ++h) {
        const float* q = qkv + i * 3 * d + h * dk;
        for (int64_t j = 0; j < len; ++j) scores[static_cast<size_t>(j)] = dot(q, qkv + (begin + j) * 3 * d + d + h * dk, dk) * scale;
        softmax(scores.data(), len);
        float* o = out + i * d + h * dk;
        std::fill(o, o + dk, 0.0f);
        for (int64_t j = 0; j < len; ++j) axpy(scores[static_cast<size_t>(j)], qkv + (begin + j) * 3 * d + 2 * d + h * dk, o, dk);
      }
  }
}

void TransformerRun::self_attention(int64_t layer, const float* qkv, float* out) {
  const int64_t d = model_.spec_.d_model, H = model_.spec_.heads, dk = d / H, R = rows(), steps = position_ + 1;
  const float scale = 1.0f / std::sqrt(static_cast<float>(dk));
  auto& kv = self_kv_[static_cast<size_t>(layer)];
#pragma omp parallel for schedule(static) if (R > 1)
  for (int64_t r = 0; r < R; ++r) {
    ScoreScratch scratch(steps);
    float* sc = scratch.data();
    for (int64_t h = 0; h < H; ++h) {
      const float* q = qkv + r * 3 * d + h * dk;
      for (int64_t t = 0; t < steps; ++t) {
        const int64_t row = origins_[static_cast<size_t>(t)][static_cast<size_t>(r)];
        sc[t] = dot(q, kv[static_cast<size_t>(t)].data() + row * 2 * d + h * dk, dk) * scale;
      }
      softmax(sc, steps);
      float* o = out + r * d + h * dk;
      std::fill(o, o + dk, 0.0f);
      for (int64_t t = 0; t < steps; ++t) {
        const int64_t row = origins_[static_cast<size_t>(t)][static_cast<size_t>(r)];
        axpy(sc[t], kv[static_cast<size_t>(t)].data() + row * 2 * d + d + h * dk, o, dk);
      }
    }
  }
}

void TransformerRun::cross_attention(int64_t layer, const float* q_all, float* out, float* record, int64_t head) {
  const int64_t d = model_.spec_.d_model, H = model_.spec_.heads, dk = d / H, R = rows();
  const float scale = 1.0f / std::sqrt(static_cast<float>(dk));
  const float* kv = memory_kv_[static_cast<size_t>(layer)].data();
#pragma omp parallel for schedule(static) if (R > 1)
  for (int64_t r = 0; r < R; ++r) {
    const int64_t s = row_source_[static_cast<size_t>(r)];
    const int64_t begin = source_start_[static_cast<size_t>(s)], len = source_start_[static_cast<size_t>(s) + 1] - begin;
    ScoreScratch scratch(len);
    float* scores = scratch.data();
    float* rec = record ? record + r * longest_source_ : nullptr;
    if (rec) std::fill(rec, rec + longest_source_, 0.0f);
    for (int64_t h = 0; h < H; ++h) {
      const float* q = q_all + r * d + h * dk;
      for (int64_t j = 0; j < len; ++j) scores[j] = dot(q, kv + (begin + j) * 2 * d + h * dk, dk) * scale;
      softmax(scores, len);
      if (rec && (head < 0 || head == h))
        for (int64_t j = 0; j < len; ++j) rec[j] += head < 0 ? scores[j] / static_cast<float>(H) : scores[j];
      float* o = out + r * d + h * dk;
      std::fill(o, o + dk, 0.0f);
      for (int64_t j = 0; j < len; ++j) axpy(scores[j], kv + (begin + j) * 2 * d + d + h * dk, o, dk);
    }
  }
}

void TransformerRun::step(const std::vector<int32_t>& tokens, std::vector<float>& logits, std::vector<float>* attention,
                          int64_t layer, int64_t head) {
  const Transformer& m = model_;
  const TransformerSpec& spec = m.spec_;
  const int64_t d = spec.d_model, R = rows(), L = static_cast<int64_t>(m.decoder_.size());
  if (static_cast<int64_t>(tokens.size()) != R) throw RuntimeError("TransformerRun::step: one token per row");
  if (position_ >= spec.max_positions) throw RuntimeError("TransformerRun::step: past the model's positions");
  grow(origins_, position_ + 1);
  auto& here = origins_[static_cast<size_t>(position_)];
  here.resize(static_cast<size_t>(R));
  for (int64_t r = 0; r < R; ++r) here[static_cast<size_t>(r)] = r;
  grow(x_, R * d);
  grow(h_, R * d);
  grow(qkv_, R * 3 * d);
  grow(attn_, R * d);
  grow(ffn_, R * spec.ffn);
  std::vector<int64_t>& at = scratch_positions_;
  at.assign(static_cast<size_t>(R), position_);
  const float scale = spec.scale_embedding ? static_cast<float>(std::sqrt(static_cast<double>(d))) : 1.0f;
  embed(m.target_table(), m.positions_.data(), tokens.data(), at.data(), R, d, scale, x_.data());
  // As models/transformer.cc: out-of-range choices clamped to the last layer and head.
  const int64_t record = attention ? (layer < 0 ? L - 1 : std::min(layer, L - 1)) : -1;
  if (head >= spec.heads) head = spec.heads - 1;
  if (attention) attention->resize(static_cast<size_t>(R * longest_source_));
  const auto normed = [&](const LayerNorm& n) -> const float* {
    if (!spec.pre_norm) return x_.data();
    std::copy(x_.begin(), x_.begin() + R * d, h_.begin());
    layer_norm(h_.data(), R, d, n.gain.data(), n.bias.data());
    return h_.data();
  };
  const auto post_norm = [&](const LayerNorm& n) {
    if (!spec.pre_norm) layer_norm(x_.data(), R, d, n.gain.data(), n.bias.data());
  };
  for (int64_t i = 0; i < L; ++i) {
    const DecoderLayerWeights& l = m.decoder_[static_cast<size_t>(i)];
    l.self.qkv.forward(normed(l.norm1), R, qkv_.data(), gemm_);
    auto& steps = self_kv_[static_cast<size_t>(i)];
    grow(steps, position_ + 1);
    auto& kv = steps[static_cast<size_t>(position_)];
    kv.resize(static_cast<size_t>(R * 2 * d));
    for (int64_t r = 0; r < R; ++r) std::copy(qkv_.begin() + r * 3 * d + d, qkv_.begin() + (r + 1) * 3 * d, kv.begin() + r * 2 * d);
    self_attention(i, qkv_.data(), attn_.data());
    l.self.out.forward(attn_.data(), R, x_.data(), gemm_, {Activation::kNone, true});
    post_norm(l.norm1);
    l.cross.q.forward(normed(l.norm2), R, qkv_.data(), gemm_);
    cross_attention(i, qkv_.data(), attn_.data(), i == record ? attention->data() : nullptr, head);
    l.cross.out.forward(attn_.data(), R, x_.data(), gemm_, {Activation::kNone, true});
    post_norm(l.norm2);
    l.fc1.forward(normed(l.norm3), R, ffn_.data(), gemm_, {spec.activation, false});
    l.fc2.forward(ffn_.data(), R, x_.data(), gemm_, {Activation::kNone, true});
    post_norm(l.norm3);
  }
  if (spec.pre_norm) layer_norm(x_.data(), R, d, m.decoder_norm_.gain.data(), m.decoder_norm_.bias.data());
  logits.resize(static_cast<size_t>(R * spec.tgt_vocab));
  m.output_.forward(x_.data(), R, logits.data(), gemm_);
  position_ += 1;
}

// Copied back rather than swapped: each vector keeps the capacity it has grown to, so a warm run
// reorders without allocating.
void TransformerRun::select(const std::vector<int64_t>& rows) {
  std::vector<int64_t>& picked = scratch_rows_;
  const auto reorder = [&](std::vector<int64_t>& v) {
    picked.resize(rows.size());
    for (size_t i = 0; i < rows.size(); ++i) picked[i] = v[static_cast<size_t>(rows[i])];
    v.assign(picked.begin(), picked.end());
  };
  for (int64_t t = 0; t < position_; ++t) reorder(origins_[static_cast<size_t>(t)]);
  reorder(row_source_);
}

}  // namespace nmt::engine
