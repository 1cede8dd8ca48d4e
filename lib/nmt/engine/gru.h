#pragma once
// nmt's GRU with Bahdanau attention (models/gru_bahdanau.h) for decoding on the CPU without
// LibTorch: the same arithmetic on the same weights, as engine/transformer.h is for the
// Transformer. CTranslate2 has no recurrent models; Marian decodes them inside its own framework.
//
// How it differs from the LibTorch module, each for speed and none in what it computes:
//  * the sources of a batch are concatenated, not padded, and each GRU layer's input gates for
//    every token are one product; the recurrence then steps the sources longest first, so the
//    sentences still running are always the first rows (no gathering, no masking);
//  * the attention keys (W_k · memory) are computed once per batch; the recurrent state is a
//    dense [rows][hidden] array per layer, reordered in place by select();
//  * buffers are kept by the run and reused: no allocation per step once warm.
// The products that `nmt quantize` makes int8 (the bridge, the attention's W_q and W_k, the
// deep output, the bidirectional projection and the vocabulary projection) run on nmt's int8
// kernels in an int8 model; the GRUs' own gate products stay float32, as in LibTorch's module.
#include <cstdint>
#include <memory>
#include <vector>

#include "nmt/engine/linear.h"
#include "nmt/engine/model.h"
#include "nmt/engine/ops.h"
#include "nmt/engine/weights.h"

namespace nmt::engine {

// The hyper-parameters the engine reads (config.json's "model" for a gru).
struct GruSpec {
  int64_t embedding = 256, hidden = 256, layers = 2;
  bool bidirectional = false;  // the encoder's
  bool layer_norm = false;     // each gate product normalised (--rnn-layer-norm)
  int64_t src_vocab = 0, tgt_vocab = 0, max_positions = 256;
  bool tie_output = true;         // the output projection is the target embedding
  bool shared_embeddings = true;  // one table for source and target
};

// One GRU layer (and direction): gates r, z, n of the input and recurrent products, each
// layer-normalised over its 3·hidden values when the model is (the GRU's biases then the
// normalisations' shifts, as models/gru_bahdanau.cc computes them).
struct GruLayerWeights {
  Linear input, recurrent;               // [3H, in] and [3H, H]; biased unless normalised
  LayerNorm input_norm, recurrent_norm;  // empty unless normalised
};

class GruBahdanau final : public Model {
 public:
  // The weights named as the LibTorch module's state dict names them; `int8`: the products
  // `nmt quantize` quantises, quantised on load (int8 copies in the source are used as they are).
  GruBahdanau(const GruSpec& spec, const WeightSource& weights, bool int8 = false);
  const GruSpec& spec() const { return spec_; }
  std::unique_ptr<ModelRun> new_run() const override;
  int64_t tgt_vocab() const override { return spec_.tgt_vocab; }
  int64_t max_target_len() const override { return spec_.max_positions - 1; }

 private:
  friend class GruRun;
  GruSpec spec_;
  std::vector<float> src_embedding_, tgt_embedding_;  // [V, E]; tgt_ empty when shared
  std::vector<std::vector<GruLayerWeights>> encoder_;  // [layer][direction]
  Linear projection_;                                  // [H, 2H], bidirectional only
  std::vector<GruLayerWeights> decoder_;               // [layer]; layer 0's input is [e ; context]
  Linear bridge_;                                      // [L·H, 2H]: initial state from [mean ; last]
  Linear w_q_, w_k_;                                   // the attention's [H, H], no bias
  std::vector<float> v_;                               // the attention's v [H], float32
  Linear pre_output_;                                  // [E, 2H + E]: the deep output
  Linear output_;                                      // [V, E], no bias
  const float* target_table() const { return tgt_embedding_.empty() ? src_embedding_.data() : tgt_embedding_.data(); }
};

class GruRun final : public ModelRun {
 public:
  explicit GruRun(const GruBahdanau& model) : model_(model) {}
  void start(const std::vector<const text::TokenIds*>& sources) override;
  // One attention: `layer` and `head` are ignored.
  void step(const std::vector<int32_t>& tokens, std::vector<float>& logits, std::vector<float>* attention,
            int64_t layer, int64_t head) override;
  void select(const std::vector<int64_t>& rows) override;
  int64_t rows() const { return static_cast<int64_t>(row_source_.size()); }
  int64_t longest_source() const override { return longest_source_; }
  int64_t vocab() const override { return model_.spec().tgt_vocab; }

 private:
  // One layer and direction of the encoder over the concatenated inputs x [n][in] into
  // out [n][width] at column `column`.
  void encode_direction(const GruLayerWeights& w, const float* x, bool reverse, float* out, int64_t width,
                        int64_t column);
  // Gate products [rows][3H] of x through `product`, normalised where the layer is.
  void gates(const Linear& product, const LayerNorm& norm, const float* x, int64_t rows, float* out);
  void attend(const float* query, float* context, float* record);

  const GruBahdanau& model_;
  GemmCache gemm_;
  std::vector<int64_t> source_start_;  // source s holds tokens [source_start_[s], source_start_[s+1])
  int64_t longest_source_ = 0;
  std::vector<float> memory_, keys_;   // [source tokens][H]
  std::vector<int64_t> row_source_;    // row → source
  std::vector<std::vector<float>> state_, next_state_;  // per decoder layer: [rows][H]
  std::vector<float> x_, gi_, gh_, h_, query_, context_, deep_in_, deep_;
  std::vector<float> step_gi_, next_h_, cell_saved_;  // the encoder's cells: their gates, outputs, scratch
  std::vector<int64_t> scratch_rows_;
};

}  // namespace nmt::engine
