#pragma once
// nmt's Transformer (models/transformer.h) for decoding on the CPU without LibTorch: the same
// arithmetic on the same weights, laid out for decoding. Read-only once built, so decoding
// threads share one; what a decoding call writes lives in its DecoderRun.
//
// How it differs from the LibTorch module, each for speed and none in what it computes:
//  * the sources of a batch are concatenated, not padded: every product runs on real tokens
//    only, and self-attention runs within each sentence;
//  * Q/K/V are one product; the encoder's keys and values for every decoder layer are computed
//    once per batch; bias, activation and residual are fused into the products (linear.h);
//  * each step's self-attention keys and values are written once and reached through a table of
//    row origins (as models/transformer.h does), so reordering beams copies ints, not vectors;
//  * buffers are kept by the DecoderRun and reused: no allocation per step once warm.
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "nmt/engine/linear.h"
#include "nmt/engine/model.h"
#include "nmt/engine/ops.h"
#include "nmt/engine/weights.h"
#include "nmt/text/token_ids.h"

namespace nmt::engine {

// The hyper-parameters the engine reads (config.json's "model" for a Transformer).
struct TransformerSpec {
  int64_t d_model = 256, heads = 4, ffn = 1024, encoder_layers = 3, decoder_layers = 3;
  int64_t src_vocab = 0, tgt_vocab = 0, max_positions = 256;
  bool pre_norm = false;
  Activation activation = Activation::kRelu;
  bool concatenated_positions = false;  // sines then cosines (Marian), not interleaved
  bool scale_embedding = true;
  bool output_bias = false;
  bool tie_output = true;        // the output projection is the target embedding
  bool shared_embeddings = true; // one table for source and target
};

struct AttentionWeights {
  Linear qkv;      // self-attention: [3d, d]
  Linear q, kv;    // cross-attention: [d, d] and [2d, d]
  Linear out;
};

struct EncoderLayerWeights {
  AttentionWeights self;
  Linear fc1, fc2;
  LayerNorm norm1, norm2;
};

struct DecoderLayerWeights {
  AttentionWeights self, cross;
  Linear fc1, fc2;
  LayerNorm norm1, norm2, norm3;
};

class TransformerRun;

class Transformer final : public Model {
 public:
  // The weights named as the LibTorch module's state dict names them; `int8`: float32 weights
  // of the products quantised on load (int8 copies in the source are used as they are).
  Transformer(const TransformerSpec& spec, const WeightSource& weights, bool int8 = false);
  const TransformerSpec& spec() const { return spec_; }
  std::unique_ptr<ModelRun> new_run() const override;
  int64_t tgt_vocab() const override { return spec_.tgt_vocab; }
  int64_t max_target_len() const override { return spec_.max_positions - 1; }  // BOS takes a position

 private:
  friend class TransformerRun;
  TransformerSpec spec_;
  std::vector<float> src_embedding_, tgt_embedding_;  // [V, d]; tgt_ empty when shared
  std::vector<float> positions_;                      // [max_positions, d]
  std::vector<EncoderLayerWeights> encoder_;
  std::vector<DecoderLayerWeights> decoder_;
  LayerNorm encoder_norm_, decoder_norm_;  // pre-norm only
  Linear output_;
  const float* target_table() const { return tgt_embedding_.empty() ? src_embedding_.data() : tgt_embedding_.data(); }
};

// One batch being decoded: the encoder's output, each row's source and past, and the buffers.
// Rows start as one per source; select() keeps, reorders and repeats them (beam search).
class TransformerRun final : public ModelRun {
 public:
  explicit TransformerRun(const Transformer& model) : model_(model) {}
  void start(const std::vector<const text::TokenIds*>& sources) override;
  // The cross-attention of decoder layer `layer` (-1: last), head `head` (-1: mean of heads).
  void step(const std::vector<int32_t>& tokens, std::vector<float>& logits, std::vector<float>* attention,
            int64_t layer, int64_t head) override;
  void select(const std::vector<int64_t>& rows) override;
  int64_t rows() const { return static_cast<int64_t>(row_source_.size()); }
  int64_t position() const { return position_; }
  int64_t source_length(int64_t row) const;  // tokens, EOS included
  int64_t longest_source() const override { return longest_source_; }
  int64_t vocab() const override { return model_.spec().tgt_vocab; }

 private:
  void encoder_self_attention(const float* qkv, float* out);
  void self_attention(int64_t layer, const float* qkv, float* out);
  void cross_attention(int64_t layer, const float* q, float* out, float* record, int64_t head);

  const Transformer& model_;
  GemmCache gemm_;
  // The batch's sources, concatenated: source s holds rows [source_start_[s], source_start_[s+1]).
  std::vector<int64_t> source_start_;
  int64_t longest_source_ = 0;
  std::vector<std::vector<float>> memory_kv_;  // per decoder layer: [source tokens][2d]
  std::vector<int64_t> row_source_;            // row → source
  int64_t position_ = 0;
  // Per decoder layer, per step τ: that step's keys and values [rows at τ][2d]; origins_[τ][r]:
  // the row of step τ that holds current row r's past.
  std::vector<std::vector<std::vector<float>>> self_kv_;
  std::vector<std::vector<int64_t>> origins_;
  std::vector<float> x_, h_, qkv_, attn_, ffn_;
  std::vector<int64_t> scratch_positions_, scratch_rows_;
};

}  // namespace nmt::engine
