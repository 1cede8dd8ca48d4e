#include "nmt/models/small_query_attention.h"

#include <ATen/Parallel.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "nmt/util/vectorize.h"

namespace nmt::models {

// Why a kernel of our own: LibTorch 1.13's CPU bmm runs one GEMM call per (batch, head)
// whenever a product has 400 or more entries, and a decoding step's q kᵀ is 1 × dk × t per
// (row, head). At 64 rows × 4 heads × 2 products × 6 attention layers that is ~3,000 BLAS
// calls of a few hundred FLOPs each per step, plus the copies matmul makes of the strided
// q: more time than the step's real matrix products. Here one loop nest per (batch, head)
// does the dot products, the softmax and the weighted sum, reading keys and values through
// pointers, which also lets self-attention read the decoder's history where it lies.

namespace {

// One (batch, head): T queries over S keys/values given as pointers to unit-stride vectors,
// so the dot products and the weighted sums vectorise; the AVX2 clone is picked at load
// time. masks[t] (null: no mask) holds the additive mask of query t, mask_stride apart.
NMT_AVX2_CLONE
void attend(int64_t T, const float* const* queries, int64_t S, const float* const* keys, const float* const* values,
            const float* const* masks, int64_t mask_stride, int64_t dk, int64_t dv, float scale, float* scores,
            float* const* outputs, float* const* weights) {
  constexpr int kLanes = 8;
  for (int64_t t = 0; t < T; ++t) {
    const float* q = queries[t];
    const float* m = masks ? masks[t] : nullptr;
    float max = -INFINITY;
    for (int64_t s = 0; s < S; ++s) {
      const float* key = keys[s];
      float lanes[kLanes] = {};
      int64_t i = 0;
      for (; i + kLanes <= dk; i += kLanes)
        for (int j = 0; j < kLanes; ++j) lanes[j] += q[i + j] * key[i + j];
      float dot = 0;
      for (; i < dk; ++i) dot += q[i] * key[i];
      for (float lane : lanes) dot += lane;
      float score = dot * scale;
      if (m) score += m[s * mask_stride];
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
      const float* value = values[s];
      for (int64_t i = 0; i < dv; ++i) out[i] += p * value[i];
    }
  }
}

struct View4 {  // a float tensor's data pointer and strides, dims [B,H,T,X]
  const float* data;
  int64_t s0, s1, s2;
  explicit View4(const torch::Tensor& t) : data(t.data_ptr<float>()), s0(t.stride(0)), s1(t.stride(1)), s2(t.stride(2)) {}
  const float* at(int64_t b, int64_t h, int64_t t) const { return data + b * s0 + h * s1 + t * s2; }
};

bool float_cpu(const torch::Tensor& t) { return t.device().is_cpu() && t.scalar_type() == torch::kFloat; }

// Unit stride along the feature dimension (true of every view the model passes).
torch::Tensor unit_stride(const torch::Tensor& t) { return t.stride(-1) == 1 ? t : t.contiguous(); }

}  // namespace

bool small_query_attention_applies(const torch::Tensor& q, const torch::Tensor& k, const torch::Tensor& v,
                                   const torch::Tensor& mask) {
  if (torch::GradMode::is_enabled() || q.dim() != 4 || k.dim() != 4 || v.dim() != 4) return false;
  if (!float_cpu(q) || !float_cpu(k) || !float_cpu(v) || (mask.defined() && !float_cpu(mask))) return false;
  return q.size(2) <= 16 && k.size(0) == q.size(0) && k.size(1) == q.size(1) &&
         v.sizes().slice(0, 3) == k.sizes().slice(0, 3);
}

torch::Tensor small_query_attention(const torch::Tensor& q_in, const torch::Tensor& k_in, const torch::Tensor& v_in,
                                    const torch::Tensor& mask_in, double scale, torch::Tensor* weights) {
  const auto q = unit_stride(q_in), k = unit_stride(k_in), v = unit_stride(v_in);
  const int64_t B = q.size(0), H = q.size(1), T = q.size(2), S = k.size(2), dk = q.size(3), dv = v.size(3);
  auto out = torch::empty({B, T, H, dv}, q.options());
  if (weights) *weights = torch::empty({B, H, T, S}, q.options());
  const torch::Tensor mask = mask_in.defined() ? mask_in.expand({B, H, T, S}) : mask_in;
  const View4 qv(q), kv(k), vv(v);
  float* out_data = out.data_ptr<float>();
  float* weight_data = weights ? weights->data_ptr<float>() : nullptr;
  const float* mask_data = mask.defined() ? mask.data_ptr<float>() : nullptr;
  at::parallel_for(0, B * H, /*grain_size=*/8, [&](int64_t begin, int64_t end) {
    std::vector<float> scores(S);
    std::vector<const float*> queries(T), keys(S), values(S), masks(T);
    std::vector<float*> outputs(T), weight_rows(T);
    for (int64_t bh = begin; bh < end; ++bh) {
      const int64_t b = bh / H, h = bh % H;
      for (int64_t t = 0; t < T; ++t) {
        queries[t] = qv.at(b, h, t);
        outputs[t] = out_data + ((b * T + t) * H + h) * dv;
        if (weight_data) weight_rows[t] = weight_data + ((b * H + h) * T + t) * S;
        if (mask_data) masks[t] = mask_data + b * mask.stride(0) + h * mask.stride(1) + t * mask.stride(2);
      }
      for (int64_t s = 0; s < S; ++s) {
        keys[s] = kv.at(b, h, s);
        values[s] = vv.at(b, h, s);
      }
      attend(T, queries.data(), S, keys.data(), values.data(), mask_data ? masks.data() : nullptr,
             mask_data ? mask.stride(3) : 0, dk, dv, static_cast<float>(scale), scores.data(), outputs.data(),
             weight_data ? weight_rows.data() : nullptr);
    }
  });
  return out.permute({0, 2, 1, 3});
}

bool history_attention_applies(const torch::Tensor& q, const std::vector<torch::Tensor>& steps,
                               const torch::Tensor& origins) {
  if (torch::GradMode::is_enabled() || q.dim() != 4 || q.size(2) != 1 || !float_cpu(q)) return false;
  if (!origins.device().is_cpu() || origins.scalar_type() != torch::kLong) return false;
  return std::all_of(steps.begin(), steps.end(), [](const torch::Tensor& s) { return float_cpu(s) && s.is_contiguous(); });
}

torch::Tensor history_attention(const torch::Tensor& q_in, const std::vector<torch::Tensor>& steps,
                                const torch::Tensor& origins_in, double scale) {
  const auto q = unit_stride(q_in);
  const auto origins = origins_in.contiguous();
  const int64_t B = q.size(0), H = q.size(1), dk = q.size(3), d = H * dk, S = static_cast<int64_t>(steps.size());
  TORCH_CHECK(origins.size(0) == B && origins.size(1) == S, "history_attention: origins ", origins.sizes(), " for ",
              B, " rows and ", S, " steps");
  std::vector<const float*> step_data(S);
  for (int64_t s = 0; s < S; ++s) step_data[s] = steps[s].data_ptr<float>();
  auto out = torch::empty({B, 1, H, dk}, q.options());
  const View4 qv(q);
  const int64_t* origin = origins.data_ptr<int64_t>();
  float* out_data = out.data_ptr<float>();
  at::parallel_for(0, B * H, /*grain_size=*/8, [&](int64_t begin, int64_t end) {
    std::vector<float> scores(S);
    std::vector<const float*> keys(S), values(S);
    for (int64_t bh = begin; bh < end; ++bh) {
      const int64_t b = bh / H, h = bh % H;
      for (int64_t s = 0; s < S; ++s) {
        const float* row = step_data[s] + origin[b * S + s] * 3 * d + h * dk;  // [q | k | v] of row
        keys[s] = row + d;
        values[s] = row + 2 * d;
      }
      const float* query = qv.at(b, h, 0);
      float* output = out_data + (b * H + h) * dk;
      attend(1, &query, S, keys.data(), values.data(), nullptr, 0, dk, dk, static_cast<float>(scale), scores.data(),
             &output, nullptr);
    }
  });
  return out.permute({0, 2, 1, 3});
}

std::pair<torch::Tensor, torch::Tensor> gather_history(const std::vector<torch::Tensor>& steps,
                                                       const torch::Tensor& origins, int64_t heads) {
  const int64_t B = origins.size(0), S = origins.size(1), d = steps.front().size(1) / 3;
  std::vector<int64_t> offsets(S);  // where step s starts in the concatenation
  for (int64_t s = 1; s < S; ++s) offsets[s] = offsets[s - 1] + steps[s - 1].size(0);
  auto index = origins + torch::tensor(offsets, origins.options()).unsqueeze(0);
  auto rows = torch::cat(steps, 0).index_select(0, index.view(-1)).view({B, S, 3, heads, d / heads});
  return {rows.select(2, 1).transpose(1, 2), rows.select(2, 2).transpose(1, 2)};
}

}  // namespace nmt::models
