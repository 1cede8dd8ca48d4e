#include "nmt/decode/decoding_model.h"

#include <algorithm>

namespace nmt::decode {

models::DecoderState SingleModel::start(const torch::Tensor& src, const torch::Tensor& src_mask) const {
  return model_.start(model_.encode(src, src_mask), src_mask);
}

torch::Tensor SingleModel::step(const torch::Tensor& prev_tokens, models::DecoderState& state) const {
  return model_.step(prev_tokens, state);
}

int64_t SingleModel::max_target_len() const {
  return model_.config().max_positions - 1;  // BOS takes a position
}

torch::Device SingleModel::device() const { return model_.parameters().front().device(); }

Ensemble::Ensemble(std::vector<models::Seq2SeqModelImpl*> members) : members_(std::move(members)) {
  TORCH_CHECK(!members_.empty(), "Ensemble: no models");
  const int64_t vocab = members_.front()->config().tgt_vocab;
  const torch::Device device = members_.front()->parameters().front().device();
  for (auto* m : members_) {
    TORCH_CHECK(m->config().tgt_vocab == vocab, "Ensemble: the models' target vocabularies differ in size");
    TORCH_CHECK(m->parameters().front().device() == device, "Ensemble: the models are on different devices");
  }
}

models::DecoderState Ensemble::start(const torch::Tensor& src, const torch::Tensor& src_mask) const {
  models::DecoderState state;
  for (auto* m : members_) state.members().push_back(m->start(m->encode(src, src_mask), src_mask));
  return state;
}

torch::Tensor Ensemble::step(const torch::Tensor& prev_tokens, models::DecoderState& state) const {
  torch::Tensor sum, attention;
  auto& members = state.members();
  for (size_t i = 0; i < members_.size(); ++i) {
    members[i].record_attention = state.record_attention;
    members[i].alignment = state.alignment;
    auto log_probs = torch::log_softmax(members_[i]->step(prev_tokens, members[i]).to(torch::kFloat), -1);
    sum = sum.defined() ? sum.add_(log_probs) : log_probs;
    if (state.record_attention) attention = attention.defined() ? attention.add_(members[i].attention) : members[i].attention.clone();
  }
  const double n = static_cast<double>(members_.size());
  if (state.record_attention) state.attention = attention.div_(n);
  state.position += 1;
  return sum.div_(n);
}

int64_t Ensemble::max_target_len() const {
  int64_t len = members_.front()->config().max_positions - 1;
  for (auto* m : members_) len = std::min<int64_t>(len, m->config().max_positions - 1);
  return len;
}

torch::Device Ensemble::device() const { return members_.front()->parameters().front().device(); }

std::unique_ptr<DecodingModel> make_decoding_model(const std::vector<models::Seq2SeqModelImpl*>& models) {
  if (models.size() == 1) return std::make_unique<SingleModel>(*models.front());
  return std::make_unique<Ensemble>(models);
}

}  // namespace nmt::decode
