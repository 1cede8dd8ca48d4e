#pragma once
// The tensors of a tiny MarianMTModel's model.safetensors (one encoder and one decoder layer,
// shared embeddings), named and shaped as transformers writes them: what the tests that make one
// fill with random values (tests/cli/import_test.cc, tests/tools/random_model.cc).
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace nmt::test {

inline std::vector<std::pair<std::string, std::vector<int64_t>>> marian_tensors(int64_t vocab, int64_t d, int64_t ffn) {
  std::vector<std::pair<std::string, std::vector<int64_t>>> t = {{"model.shared.weight", {vocab, d}},
                                                                 {"final_logits_bias", {1, vocab}}};
  for (const std::string stack : {"encoder", "decoder"}) {
    const std::string p = "model." + stack + ".layers.0.";
    std::vector<std::string> attentions{"self_attn"};
    if (stack == "decoder") attentions.push_back("encoder_attn");
    for (const auto& a : attentions) {
      for (const char* proj : {"q_proj", "k_proj", "v_proj", "out_proj"}) {
        t.push_back({p + a + "." + proj + ".weight", {d, d}});
        t.push_back({p + a + "." + proj + ".bias", {d}});
      }
      t.push_back({p + a + "_layer_norm.weight", {d}});
      t.push_back({p + a + "_layer_norm.bias", {d}});
    }
    t.push_back({p + "fc1.weight", {ffn, d}});
    t.push_back({p + "fc1.bias", {ffn}});
    t.push_back({p + "fc2.weight", {d, ffn}});
    t.push_back({p + "fc2.bias", {d}});
    t.push_back({p + "final_layer_norm.weight", {d}});
    t.push_back({p + "final_layer_norm.bias", {d}});
  }
  return t;
}

}  // namespace nmt::test
