#include "nmt/train/loss.h"

namespace nmt::train {

LossSums label_smoothed_loss(const torch::Tensor& logits, const torch::Tensor& target, double epsilon,
                             int64_t pad_id) {
  const int64_t V = logits.size(-1);
  auto flat_target = target.reshape({-1});
  auto keep = flat_target.ne(pad_id);
  // Only real positions go through log_softmax: padding costs nothing beyond the projection.
  auto index = keep.nonzero().squeeze(1);
  auto lprobs = torch::log_softmax(logits.reshape({-1, V}).index_select(0, index), -1);
  auto tgt = flat_target.index_select(0, index);
  auto nll = -lprobs.gather(1, tgt.unsqueeze(1)).squeeze(1).sum();
  if (epsilon <= 0) return {nll, nll.detach()};
  auto smooth = -lprobs.sum();
  const double eps_i = epsilon / static_cast<double>(V - 1);
  auto loss = (1.0 - epsilon - eps_i) * nll + eps_i * smooth;
  return {loss, nll.detach()};
}

}  // namespace nmt::train
