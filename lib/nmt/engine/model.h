#pragma once
// What the CPU engine decodes: a model (read-only once built, shared by every decoding thread)
// and a run of it (one batch being decoded: its encoder output, each row's state, its buffers),
// as CTranslate2 keeps a const model and a per-worker replica. The Transformer
// (engine/transformer.h) and the GRU with Bahdanau attention (engine/gru.h) are the two kinds.
#include <cstdint>
#include <memory>
#include <vector>

#include "nmt/text/token_ids.h"

namespace nmt::engine {

// One batch being decoded. Rows start as one per source; select() keeps, reorders and repeats
// them (beam search).
class ModelRun {
 public:
  virtual ~ModelRun() = default;
  // Encodes the sources (each already ending in EOS) and starts one row per source.
  virtual void start(const std::vector<const text::TokenIds*>& sources) = 0;
  // Feeds each row's previous token; writes the next-token logits [rows][vocab] into `logits`.
  // With `attention`, also each row's attention over its source [rows][longest source] (zeros
  // past each row's source): for a Transformer decoder layer `layer` (-1: last), head `head`
  // (-1: mean of heads); a model with one attention ignores both.
  virtual void step(const std::vector<int32_t>& tokens, std::vector<float>& logits, std::vector<float>* attention,
                    int64_t layer, int64_t head) = 0;
  // Row i of the next step is row rows[i] of this one.
  virtual void select(const std::vector<int64_t>& rows) = 0;
  virtual int64_t longest_source() const = 0;
  virtual int64_t vocab() const = 0;
};

class Model {
 public:
  virtual ~Model() = default;
  // A run with its own buffers; it refers to this model, which must outlive it.
  virtual std::unique_ptr<ModelRun> new_run() const = 0;
  virtual int64_t tgt_vocab() const = 0;
  // The longest output the model takes, BOS aside (config.json's max_positions - 1).
  virtual int64_t max_target_len() const = 0;
};

}  // namespace nmt::engine
