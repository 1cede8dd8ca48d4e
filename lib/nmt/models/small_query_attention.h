#pragma once
// Attention for decoding steps on the CPU: a few query positions per (batch, head).
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

}  // namespace nmt::models
