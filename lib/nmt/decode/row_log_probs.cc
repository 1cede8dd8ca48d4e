#include "nmt/decode/row_log_probs.h"

#include <cmath>
#include <cstring>
#include <limits>

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

double row_log_sum_exp(const float* row, int64_t n, float* scratch) { return log_sum_exp(row, n, row_max(row, n), scratch); }

void row_top_log_probs(const float* row, int64_t n, int64_t k, double* log_probs, int64_t* tokens, float* scratch,
                       float* top) {
  top_k(row, n, k, top, tokens);
  const double lse = log_sum_exp(row, n, top[0], scratch);
  for (int64_t c = 0; c < k; ++c) log_probs[c] = static_cast<double>(top[c]) - lse;
}

}  // namespace nmt::decode
