#include "nmt/models/small_query_attention.h"

#include <ATen/Parallel.h>

#include <algorithm>
#include <cmath>
#include <memory>
#include <vector>

namespace nmt::models {

// Why a kernel of our own: LibTorch 1.13's CPU bmm runs one GEMM call per (batch, head)
// whenever a product has 400 or more entries, and a decoding step's q kᵀ is 1 × dk × t per
// (row, head). At 64 rows × 4 heads × 2 products × 6 attention layers that is ~3,000 BLAS
// calls of a few hundred FLOPs each per step, plus the copies matmul makes of the strided
// q: more time than the step's real matrix products. Here one loop nest per (batch, head)
// does the dot products, the softmax and the weighted sum.

namespace {

struct View4 {  // a float tensor's data pointer and strides, dims [B,H,T,X]
  const float* data;
  int64_t s0, s1, s2, s3;
  explicit View4(const torch::Tensor& t)
      : data(t.data_ptr<float>()), s0(t.stride(0)), s1(t.stride(1)), s2(t.stride(2)), s3(t.stride(3)) {}
  const float* at(int64_t b, int64_t h, int64_t t) const { return data + b * s0 + h * s1 + t * s2; }
};

// One (batch, head): T queries over S keys. Vectors are unit-stride (the caller makes sure),
// so the dot products and the weighted sums vectorise; the AVX2 clone is picked at load time.
#if defined(__GNUC__) && defined(__x86_64__) && !defined(__clang__)
__attribute__((target_clones("avx2", "default")))
#endif
void attend(const float* const* queries, const View4& k, const View4& v, const View4* mask, int64_t b, int64_t h,
            int64_t T, int64_t S, int64_t dk, int64_t dv, float scale, float* scores, float* const* outputs,
            float* const* weights) {
  constexpr int kLanes = 8;
  for (int64_t t = 0; t < T; ++t) {
    const float* q = queries[t];
    const float* m = mask ? mask->at(b, h, t) : nullptr;
    float max = -INFINITY;
    for (int64_t s = 0; s < S; ++s) {
      const float* key = k.at(b, h, s);
      float lanes[kLanes] = {};
      int64_t i = 0;
      for (; i + kLanes <= dk; i += kLanes)
        for (int j = 0; j < kLanes; ++j) lanes[j] += q[i + j] * key[i + j];
      float dot = 0;
      for (; i < dk; ++i) dot += q[i] * key[i];
      for (float lane : lanes) dot += lane;
      float score = dot * scale;
      if (m) score += m[s * mask->s3];
      scores[s] = score;
      max = std::max(max, score);
    }
    float total = 0;
    for (int64_t s = 0; s < S; ++s) {
      scores[s] = std::exp(scores[s] - max);
      total += scores[s];
    }
    const float inv = 1.0f / total;
    float* out = outputs[t];
    std::fill(out, out + dv, 0.0f);
    for (int64_t s = 0; s < S; ++s) {
      const float p = scores[s] * inv;
      if (weights) weights[t][s] = p;
      const float* value = v.at(b, h, s);
      for (int64_t i = 0; i < dv; ++i) out[i] += p * value[i];
    }
  }
}

}  // namespace

bool small_query_attention_applies(const torch::Tensor& q, const torch::Tensor& k, const torch::Tensor& v,
                                   const torch::Tensor& mask) {
  if (torch::GradMode::is_enabled() || q.dim() != 4 || k.dim() != 4 || v.dim() != 4) return false;
  for (const auto* t : {&q, &k, &v})
    if (!t->device().is_cpu() || t->scalar_type() != torch::kFloat) return false;
  if (mask.defined() && (!mask.device().is_cpu() || mask.scalar_type() != torch::kFloat)) return false;
  return q.size(2) <= 16 && k.size(0) == q.size(0) && k.size(1) == q.size(1) && v.sizes().slice(0, 3) == k.sizes().slice(0, 3);
}

torch::Tensor small_query_attention(const torch::Tensor& q_in, const torch::Tensor& k_in, const torch::Tensor& v_in,
                                    const torch::Tensor& mask_in, double scale, torch::Tensor* weights) {
  // Unit stride along the feature dimension (true of every view the model passes).
  auto unit = [](const torch::Tensor& t) { return t.stride(3) == 1 ? t : t.contiguous(); };
  const auto q = unit(q_in), k = unit(k_in), v = unit(v_in);
  const int64_t B = q.size(0), H = q.size(1), T = q.size(2), S = k.size(2), dk = q.size(3), dv = v.size(3);
  auto out = torch::empty({B, T, H, dv}, q.options());
  if (weights) *weights = torch::empty({B, H, T, S}, q.options());
  torch::Tensor mask;
  if (mask_in.defined()) mask = mask_in.expand({B, H, T, S});
  const View4 qv(q), kv(k), vv(v);
  std::unique_ptr<View4> mask_v = mask.defined() ? std::make_unique<View4>(mask) : nullptr;
  float* out_data = out.data_ptr<float>();
  float* weight_data = weights ? weights->data_ptr<float>() : nullptr;
  at::parallel_for(0, B * H, /*grain_size=*/8, [&](int64_t begin, int64_t end) {
    std::vector<float> scores(static_cast<size_t>(S));
    std::vector<const float*> queries(static_cast<size_t>(T));
    std::vector<float*> outputs(static_cast<size_t>(T)), weight_rows(static_cast<size_t>(T));
    for (int64_t bh = begin; bh < end; ++bh) {
      const int64_t b = bh / H, h = bh % H;
      for (int64_t t = 0; t < T; ++t) {
        queries[t] = qv.at(b, h, t);
        outputs[t] = out_data + ((b * T + t) * H + h) * dv;
        if (weight_data) weight_rows[t] = weight_data + ((b * H + h) * T + t) * S;
      }
      attend(queries.data(), kv, vv, mask_v.get(), b, h, T, S, dk, dv, static_cast<float>(scale), scores.data(),
             outputs.data(), weight_data ? weight_rows.data() : nullptr);
    }
  });
  return out.permute({0, 2, 1, 3});
}

}  // namespace nmt::models
