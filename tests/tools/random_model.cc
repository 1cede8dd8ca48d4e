// nmt_random_model DIR TYPE TEXT...: a model directory with random weights, written without
// LibTorch, for the tests of the build without it (NMT_LIBTORCH=none), where nothing can train a
// model: a joint SentencePiece model trained on the TEXT files, config.json for a small TYPE
// (transformer or gru) model, and model.safetensors holding every tensor the CPU engine reads,
// drawn from a fixed seed. Its translations are nonsense, but the same on every run.
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "nmt/decode/cpu_engine.h"
#include "nmt/models/gru_config.h"
#include "nmt/models/model_dir.h"
#include "nmt/models/transformer_config.h"
#include "nmt/util/io.h"
#include "nmt/util/safetensors.h"

namespace {

// Answers every tensor the engine asks for with random values, and remembers them.
class RandomWeights final : public nmt::engine::WeightSource {
 public:
  const float* f32(const std::string& name, const std::vector<int64_t>& shape) const override {
    int64_t n = 1;
    for (int64_t d : shape) n *= d;
    auto& t = tensors_[name];
    t.shape = shape;
    std::normal_distribution<float> normal(0.0f, 0.1f);
    t.values.resize(static_cast<size_t>(n));
    for (float& v : t.values) v = name.find("norm") != std::string::npos && name.find("weight") != std::string::npos
                                      ? 1.0f + normal(rng_)
                                      : normal(rng_);
    return t.values.data();
  }
  bool contains(const std::string&) const override { return false; }  // no optional tensors
  std::string description() const override { return "random weights"; }

  void write(const std::string& path) const {
    std::vector<nmt::safetensors::TensorToWrite> out;
    for (const auto& [name, t] : tensors_) out.push_back({name, nmt::safetensors::DType::kF32, t.shape, t.values.data()});
    nmt::safetensors::write_file(path, out, {{nmt::safetensors::kChecksumKey, nmt::safetensors::checksum(out)}});
  }

 private:
  struct Tensor {
    std::vector<int64_t> shape;
    std::vector<float> values;
  };
  mutable std::map<std::string, Tensor> tensors_;
  mutable std::mt19937 rng_{1234};
};

nmt::models::ModelConfig small_config(const std::string& type, int64_t vocab) {
  nmt::models::ModelConfig c;
  c.type = type;
  c.src_vocab = c.tgt_vocab = vocab;
  c.max_positions = 64;
  if (type == "gru") {
    auto& g = c.get<nmt::models::GruConfig>();
    g.embedding = 16;
    g.hidden = 24;
  } else {
    auto& t = c.get<nmt::models::TransformerConfig>();
    t.d_model = 16;
    t.heads = 2;
    t.ffn = 32;
    t.encoder_layers = t.decoder_layers = 2;
  }
  return c;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 4) {
    std::fprintf(stderr, "usage: nmt_random_model DIR transformer|gru TEXT...\n");
    return 2;
  }
  try {
    const std::filesystem::path dir = argv[1];
    std::filesystem::create_directories(dir);
    std::vector<std::string> sentences;
    for (int i = 3; i < argc; ++i)
      for (auto& line : nmt::read_lines(argv[i])) sentences.push_back(std::move(line));
    nmt::text::SubwordOptions spm;
    spm.vocab_size = 64;
    spm.hard_vocab_limit = false;
    nmt::text::SubwordModel::train(sentences, spm, (dir / nmt::models::kSubwordFile).string());
    const auto subwords = nmt::text::SubwordModel::load((dir / nmt::models::kSubwordFile).string());
    const nmt::models::ModelConfig config = small_config(argv[2], subwords.vocab_size());
    RandomWeights weights;
    if (config.type == "gru") nmt::engine::GruBahdanau(nmt::decode::gru_spec(config), weights, false);
    else nmt::engine::Transformer(nmt::decode::transformer_spec(config), weights, false);
    weights.write((dir / nmt::models::kSafetensorsFile).string());
    nmt::write_file_atomic((dir / nmt::models::kConfigFile).string(),
                           nmt::models::model_directory_config(config.to_json(), nlohmann::json::object()).dump(2) + "\n");
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "nmt_random_model: %s\n", e.what());
    return 1;
  }
}
