#include "nmt/decode/top_log_probs.h"

#include <ATen/Parallel.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <vector>

#include "nmt/util/vectorize.h"

namespace nmt::decode {
namespace {

// Beam search reads k ≈ 10 of V ≈ 8,000 logits per row but needs the row's log-sum-exp.
// LibTorch's topk + logsumexp copy each row into a sort buffer and make four passes with a
// temporary of rows × V; here, one read for the top k (most blocks skipped) and one for the sum.

// exp(x[i] - shift) for x[i] <= shift, Cephes' single-precision exp (relative error ~1e-7),
// written so that GCC vectorises it: this file is compiled with -fno-trapping-math, and the
// AVX2 clone is picked at load time where the CPU has it. Arguments below -87 give ~1e-38
// (the smallest normal float) instead of a denormal: nothing a sum of V terms can notice.
NMT_AVX2_CLONE
void exp_shifted(const float* __restrict x, float* __restrict out, int64_t n, float shift) {
  for (int64_t i = 0; i < n; ++i) {
    float v = x[i] - shift;
    v = v < -87.0f ? -87.0f : v;
    const float fn = (v * 1.44269504088896341f + 12582912.0f) - 12582912.0f;  // round(v / ln 2)
    const float r = v - fn * 0.693359375f + fn * 2.12194440e-4f;               // v - fn·ln 2
    float p = 1.9875691500e-4f;
    p = p * r + 1.3981999507e-3f;
    p = p * r + 8.3334519073e-3f;
    p = p * r + 4.1665795894e-2f;
    p = p * r + 1.6666665459e-1f;
    p = p * r + 5.0000001201e-1f;
    p = p * (r * r) + r + 1.0f;
    const int32_t bits = (static_cast<int32_t>(fn) + 127) << 23;  // 2^fn
    float scale;
    std::memcpy(&scale, &bits, sizeof scale);
    out[i] = p * scale;
  }
}

// Sixteen partial sums, so the additions vectorise without reassociating one long chain.
NMT_AVX2_CLONE
double sum(const float* __restrict x, int64_t n) {
  constexpr int kLanes = 16;
  float lanes[kLanes] = {};
  int64_t i = 0;
  for (; i + kLanes <= n; i += kLanes)
    for (int j = 0; j < kLanes; ++j) lanes[j] += x[i + j];
  double total = 0;
  for (; i < n; ++i) total += x[i];
  for (float lane : lanes) total += lane;
  return total;
}

// Whether any of x[0..16) exceeds `threshold`: branch-free, so it vectorises.
NMT_AVX2_CLONE
bool any_above(const float* __restrict x, float threshold) {
  int hits = 0;
  for (int j = 0; j < 16; ++j) hits |= x[j] > threshold;
  return hits != 0;
}

// Inserts (x, i) into the sorted top list of `filled` <= k entries.
inline void insert(float x, int64_t i, int64_t k, int64_t& filled, float* value, int64_t* index) {
  int64_t at = filled < k ? filled++ : k - 1;
  while (at > 0 && x > value[at - 1]) {  // strictly greater: on ties the lower id stays first
    value[at] = value[at - 1];
    index[at] = index[at - 1];
    --at;
  }
  value[at] = x;
  index[at] = i;
}

// The k largest of row[0..n) into (value, index) best first; NaN ranks below everything.
// Once k values are in, a block of 16 is read element by element only when one of its
// values beats the k-th best: after the first few blocks, almost never.
void top_k(const float* row, int64_t n, int64_t k, float* value, int64_t* index) {
  int64_t filled = 0;
  float threshold = -std::numeric_limits<float>::infinity();  // the k-th best so far
  auto consider = [&](int64_t i) {
    const float x = row[i];
    if (filled == k && !(x > threshold)) return;
    if (std::isnan(x)) return;
    insert(x, i, k, filled, value, index);
    threshold = value[filled - 1];
  };
  int64_t i = 0;
  for (; i + 16 <= n; i += 16)
    if (filled < k || any_above(row + i, threshold))
      for (int64_t j = i; j < i + 16; ++j) consider(j);
  for (; i < n; ++i) consider(i);
  // A row with fewer than k non-NaN logits: pad with the lowest ids not taken, at -inf.
  for (int64_t j = 0; filled < k && j < n; ++j)
    if (std::isnan(row[j])) {
      value[filled] = -std::numeric_limits<float>::infinity();
      index[filled++] = j;
    }
}

// log Σ exp(row[i]) given the row's largest value; 0 when that is ±inf or NaN (the logits are
// then left as they are).
double log_sum_exp(const float* row, int64_t n, float max, float* scratch) {
  if (!std::isfinite(max)) return 0;
  exp_shifted(row, scratch, n, max);
  return max + std::log(sum(scratch, n));
}

// The largest value of row[0..n), NaN skipped (what top_k's first entry is).
float row_max(const float* row, int64_t n) {
  float best = -std::numeric_limits<float>::infinity();
  for (int64_t i = 0; i < n; ++i)
    if (row[i] > best) best = row[i];
  return best;
}

}  // namespace

torch::Tensor token_log_probs(const torch::Tensor& logits, const torch::Tensor& tokens) {
  TORCH_CHECK(logits.dim() == 2 && tokens.dim() == 1 && tokens.size(0) == logits.size(0), "token_log_probs: bad shapes");
  const auto ids = tokens.to(torch::kCPU, torch::kLong).contiguous();
  if (!logits.device().is_cpu() || logits.scalar_type() != torch::kFloat) {
    auto picked = logits.gather(1, tokens.to(logits.device(), torch::kLong).unsqueeze(1)).squeeze(1);
    return (picked - logits.logsumexp(-1)).to(torch::kCPU, torch::kDouble).contiguous();
  }
  const auto x = logits.contiguous();
  const int64_t rows = x.size(0), V = x.size(1);
  auto out = torch::empty({rows}, torch::kDouble);
  const float* in = x.data_ptr<float>();
  const int64_t* id = ids.data_ptr<int64_t>();
  double* lp = out.data_ptr<double>();
  std::vector<float> exps(static_cast<size_t>(V));
  for (int64_t r = 0; r < rows; ++r) {
    const float* row = in + r * V;
    TORCH_CHECK(id[r] >= 0 && id[r] < V, "token_log_probs: token id out of range");
    // The same arithmetic as top_log_probs, so a forced token's log-probability equals the
    // one beam search computed for it.
    lp[r] = static_cast<double>(row[id[r]]) - log_sum_exp(row, V, row_max(row, V), exps.data());
  }
  return out;
}

std::vector<double> log_probs_at(const torch::Tensor& logits, const std::vector<int64_t>& rows,
                                 const std::vector<int64_t>& tokens) {
  TORCH_CHECK(logits.dim() == 2 && rows.size() == tokens.size(), "log_probs_at: bad shapes");
  if (rows.empty()) return {};
  if (!logits.device().is_cpu() || logits.scalar_type() != torch::kFloat) {
    const auto r = torch::tensor(rows, torch::kLong).to(logits.device());
    const auto t = torch::tensor(tokens, torch::kLong).to(logits.device());
    const auto lp = (logits.index({r, t}) - logits.index_select(0, r).logsumexp(-1)).to(torch::kCPU, torch::kDouble).contiguous();
    return std::vector<double>(lp.data_ptr<double>(), lp.data_ptr<double>() + lp.numel());
  }
  const auto x = logits.contiguous();
  const int64_t V = x.size(1);
  const float* in = x.data_ptr<float>();
  std::vector<float> exps(static_cast<size_t>(V));
  std::vector<double> out(rows.size());
  int64_t cached_row = -1;
  double lse = 0;
  for (size_t i = 0; i < rows.size(); ++i) {
    TORCH_CHECK(rows[i] >= 0 && rows[i] < x.size(0) && tokens[i] >= 0 && tokens[i] < V, "log_probs_at: out of range");
    const float* row = in + rows[i] * V;
    if (rows[i] != cached_row) {  // callers ask row by row
      lse = log_sum_exp(row, V, row_max(row, V), exps.data());
      cached_row = rows[i];
    }
    out[i] = static_cast<double>(row[tokens[i]]) - lse;
  }
  return out;
}

TopLogProbs top_log_probs(const torch::Tensor& logits, int64_t k) {
  TORCH_CHECK(logits.dim() == 2 && k >= 1 && k <= logits.size(1), "top_log_probs: bad shape or k");
  if (!logits.device().is_cpu() || logits.scalar_type() != torch::kFloat) {
    auto [values, tokens] = logits.topk(k, -1);
    auto log_probs = values - logits.logsumexp(-1, /*keepdim=*/true);
    return {log_probs.to(torch::kCPU, torch::kDouble).contiguous(), tokens.to(torch::kCPU).contiguous()};
  }
  const auto x = logits.contiguous();
  const int64_t rows = x.size(0), V = x.size(1);
  TopLogProbs out{torch::empty({rows, k}, torch::kDouble), torch::empty({rows, k}, torch::kLong)};
  const float* in = x.data_ptr<float>();
  double* log_probs = out.log_probs.data_ptr<double>();
  int64_t* tokens = out.tokens.data_ptr<int64_t>();
  at::parallel_for(0, rows, /*grain_size=*/16, [&](int64_t begin, int64_t end) {
    std::vector<float> exps(static_cast<size_t>(V)), top(static_cast<size_t>(k));
    for (int64_t r = begin; r < end; ++r) {
      const float* row = in + r * V;
      top_k(row, V, k, top.data(), tokens + r * k);
      const double lse = log_sum_exp(row, V, top[0], exps.data());
      for (int64_t c = 0; c < k; ++c) log_probs[r * k + c] = static_cast<double>(top[c]) - lse;
    }
  });
  return out;
}

}  // namespace nmt::decode
