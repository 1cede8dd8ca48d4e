#pragma once
// Small randomly initialised models and inputs shared by the decoding tests.
#include <string>
#include <vector>

#include <torch/torch.h>

#include "nmt/models/gru_config.h"
#include "nmt/models/model.h"
#include "nmt/models/transformer_config.h"
#include "nmt/tensor/batch.h"

namespace nmt::test {

// A 12-word Transformer or GRU with two layers, seeded, in evaluation mode.
inline models::Seq2SeqModel random_model(const std::string& type, uint64_t seed = 5) {
  torch::manual_seed(seed);
  models::ModelConfig c;
  c.type = type;
  c.src_vocab = c.tgt_vocab = 12;
  auto& t = c.get<models::TransformerConfig>();
  t.d_model = 16; t.heads = 2; t.ffn = 32; t.encoder_layers = 2; t.decoder_layers = 2;
  auto& g = c.get<models::GruConfig>();
  g.embedding = 16; g.hidden = 16; g.rnn_layers = 2;
  c.dropout = 0.0;
  auto m = models::make_model(c);
  m->eval();
  return m;
}

// Four sources of different lengths (ids 4..11).
inline std::vector<text::TokenIds> sources() { return {{4, 5, 6, 7}, {8, 9}, {10, 11, 4, 5, 6, 7, 8}, {9}}; }

}  // namespace nmt::test
