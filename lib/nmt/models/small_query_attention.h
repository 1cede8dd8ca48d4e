#pragma once
// Attention for decoding steps on the CPU: a few query positions per (batch, head).
#include <vector>

#include <torch/torch.h>

namespace nmt::models {

// True when small_query_attention can replace softmax(q kᵀ·scale + mask) v: no gradient is
// being recorded, every tensor is a float CPU tensor, q has at most 16 positions per (batch,
// head) and the mask, if any, is additive.
bool small_query_attention_applies(const torch::Tensor& q, const torch::Tensor& k, const torch::Tensor& v,
                                   const torch::Tensor& mask);

// q [B,H,T,dk], k [B,H,S,dk], v [B,H,S,dv] (any strides), mask broadcastable to [B,H,T,S] or
// undefined. Returns [B,H,T,dv], a view of a [B,T,H,dv] buffer so that merging the heads
// afterwards copies nothing; the weights [B,H,T,S] go to *weights when it is non-null.
torch::Tensor small_query_attention(const torch::Tensor& q, const torch::Tensor& k, const torch::Tensor& v,
                                    const torch::Tensor& mask, double scale, torch::Tensor* weights);

// Self-attention of one decoding step over the decoder's history, without gathering it:
// steps[τ] is step τ's fused projection [rows_τ, 3·H·dk] (queries, then keys, then values,
// heads of dk side by side in each), origins int64 [rows, t] names, for each current row,
// the row of steps[τ] that holds its position τ (beam search reorders rows, finished
// sentences leave), and q [rows,H,1,dk] is this step's queries. Returns [rows,H,1,dk] as
// small_query_attention does.
bool history_attention_applies(const torch::Tensor& q, const std::vector<torch::Tensor>& steps,
                               const torch::Tensor& origins);
torch::Tensor history_attention(const torch::Tensor& q, const std::vector<torch::Tensor>& steps,
                                const torch::Tensor& origins, double scale);

// The same history as keys and values [rows,H,t,dk] for LibTorch's ops (any device, with
// gradients): one concatenation of the steps and one gather per call, so O(t) copying per
// step where history_attention copies nothing.
std::pair<torch::Tensor, torch::Tensor> gather_history(const std::vector<torch::Tensor>& steps,
                                                       const torch::Tensor& origins, int64_t heads);

}  // namespace nmt::models
