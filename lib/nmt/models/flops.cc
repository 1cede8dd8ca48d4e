#include "nmt/models/flops.h"

namespace nmt::models {

double forward_matmul_flops(const ModelConfig& c, int64_t batch, int64_t src_len, int64_t tgt_len) {
  const double B = static_cast<double>(batch), S = static_cast<double>(src_len), T = static_cast<double>(tgt_len);
  const double V = static_cast<double>(c.tgt_vocab);
  if (c.type == "transformer") {
    const double d = static_cast<double>(c.d_model), f = static_cast<double>(c.ffn);
    // Self-attention: fused QKV, QKᵀ, weights·V, output projection; feed-forward: two layers.
    const double enc_layer = 2 * B * S * d * 3 * d + 2 * 2 * B * S * S * d + 2 * B * S * d * d + 2 * 2 * B * S * d * f;
    const double dec_layer = 2 * B * T * d * 3 * d + 2 * 2 * B * T * T * d + 2 * B * T * d * d  // self-attention
                             + 2 * B * T * d * d + 2 * B * S * d * 2 * d + 2 * 2 * B * T * S * d +
                             2 * B * T * d * d                                                   // cross-attention
                             + 2 * 2 * B * T * d * f;                                            // feed-forward
    return c.encoder_layers * enc_layer + c.decoder_layers * dec_layer + 2 * B * T * d * V;
  }
  // GRU encoder + Bahdanau decoder (gru_bahdanau.cc): 3 gates of input and recurrent products.
  const double E = static_cast<double>(c.embedding), H = static_cast<double>(c.hidden);
  const double D = c.bidirectional ? 2 : 1;
  const double L = static_cast<double>(c.rnn_layers);
  double enc = B * S * D * 2 * 3 * H * (E + H);
  if (L > 1) enc += (L - 1) * B * S * D * 2 * 3 * H * (D * H + H);
  const double keys = 2 * B * S * D * H * H;
  const double per_step = 2 * B * H * H                 // query projection
                          + 2 * B * S * H + 2 * B * S * D * H  // scores (v·tanh) and context
                          + 2 * B * 3 * H * (E + H + H)       // first decoder GRU layer
                          + (L - 1) * 2 * B * 3 * H * 2 * H   // further layers
                          + 2 * B * (2 * H + E) * E           // deep output
                          + 2 * B * E * V;                     // vocabulary projection
  return enc + keys + T * per_step;
}

}  // namespace nmt::models
