#pragma once
// What a search strategy drives: the decoder of one model, or of an ensemble of models that
// share the target vocabulary, behind one interface.
#include <memory>
#include <vector>

#include "nmt/models/model.h"

namespace nmt::decode {

// A search reads the models through start() and step(), both const: the strategies, and so
// serve's workers decoding at the same time, hold the model const; every per-search choice lives
// in the DecoderState and the DecodeOptions. (The models are held by reference: LibTorch's
// forward methods are not const, so constness here is the interface's promise, kept by start
// and step writing only the DecoderState.)
class DecodingModel {
 public:
  virtual ~DecodingModel() = default;
  // Encodes a source batch (src int64 [B,S], src_mask bool [B,S]) and starts the decoder.
  virtual models::DecoderState start(const torch::Tensor& src, const torch::Tensor& src_mask) const = 0;
  // Next-token scores [rows, V] whose log-softmax is the next-token distribution: one model's
  // logits, or an ensemble's mean log-probabilities.
  virtual torch::Tensor step(const torch::Tensor& prev_tokens, models::DecoderState& state) const = 0;
  // The longest output (without EOS) every model can produce: its positional limit.
  virtual int64_t max_target_len() const = 0;
  virtual torch::Device device() const = 0;
  // The models, for switching to evaluation mode during a search.
  virtual std::vector<models::Seq2SeqModelImpl*> models() = 0;
};

class SingleModel final : public DecodingModel {
 public:
  explicit SingleModel(models::Seq2SeqModelImpl& model) : model_(model) {}
  models::DecoderState start(const torch::Tensor& src, const torch::Tensor& src_mask) const override;
  torch::Tensor step(const torch::Tensor& prev_tokens, models::DecoderState& state) const override;
  int64_t max_target_len() const override;
  torch::Device device() const override;
  std::vector<models::Seq2SeqModelImpl*> models() override { return {&model_}; }

 private:
  models::Seq2SeqModelImpl& model_;
};

// Several models decoding together (Marian's and fairseq's ensembles): each step averages the
// members' log-probabilities (log-softmax of each model's logits), and the search takes the
// log-softmax of that mean, i.e. the normalised geometric mean of the members' distributions.
// The recorded attention is the mean of the members' attentions. Each member keeps its own
// decoder state (DecoderState::members), reordered with the ensemble's.
class Ensemble final : public DecodingModel {
 public:
  // Every model must produce the same target vocabulary (checked by the caller, which knows
  // the subword models) and live on one device.
  explicit Ensemble(std::vector<models::Seq2SeqModelImpl*> members);
  models::DecoderState start(const torch::Tensor& src, const torch::Tensor& src_mask) const override;
  torch::Tensor step(const torch::Tensor& prev_tokens, models::DecoderState& state) const override;
  int64_t max_target_len() const override;
  torch::Device device() const override;
  std::vector<models::Seq2SeqModelImpl*> models() override { return members_; }

 private:
  std::vector<models::Seq2SeqModelImpl*> members_;
};

// An ensemble of one model is that model: the same arithmetic, bit for bit.
std::unique_ptr<DecodingModel> make_decoding_model(const std::vector<models::Seq2SeqModelImpl*>& models);

}  // namespace nmt::decode
