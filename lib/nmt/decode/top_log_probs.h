#pragma once
// The few most probable next tokens of every row, with their log-probabilities, without
// materialising the log-softmax over the vocabulary.
#include <torch/torch.h>

namespace nmt::decode {

struct TopLogProbs {
  torch::Tensor log_probs;  // double [rows, k], CPU, best first
  torch::Tensor tokens;     // int64 [rows, k], CPU; equal logits: the lower id first
};

// logits: [rows, V] of any device and floating type; 1 <= k <= V. On the CPU with float
// logits, one fused pass per row (top-k, then the log-sum-exp with a vectorised exp);
// elsewhere, topk and logsumexp on the logits' device.
TopLogProbs top_log_probs(const torch::Tensor& logits, int64_t k);

// The log-probability of tokens[r] (int64 [rows]) under row r of `logits` [rows, V]: double
// [rows] on the CPU, computed as top_log_probs computes it.
torch::Tensor token_log_probs(const torch::Tensor& logits, const torch::Tensor& tokens);

// The log-probability of tokens[i] under row rows[i] of `logits` [rows, V], computed as
// top_log_probs computes it (each row's normaliser once, however many of its tokens are asked).
std::vector<double> log_probs_at(const torch::Tensor& logits, const std::vector<int64_t>& rows,
                                 const std::vector<int64_t>& tokens);

}  // namespace nmt::decode
