#include "nmt/decode/top_log_probs.h"

#include <ATen/Parallel.h>

#include "nmt/decode/row_log_probs.h"

#include <vector>


namespace nmt::decode {

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
    lp[r] = static_cast<double>(row[id[r]]) - row_log_sum_exp(row, V, exps.data());
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
      lse = row_log_sum_exp(row, V, exps.data());
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
      row_top_log_probs(in + r * V, V, k, log_probs + r * k, tokens + r * k, exps.data(), top.data());
    }
  });
  return out;
}

}  // namespace nmt::decode
