// nmt_random_model DIR TYPE TEXT...: a model directory with random weights, written without
// LibTorch, for the tests of the build without it (NMT_LIBTORCH=none), where nothing can train a
// model: a joint SentencePiece model trained on the TEXT files, config.json for a small TYPE
// (transformer or gru) model, and model.safetensors holding every tensor the CPU engine reads,
// drawn from a fixed seed. Its translations are nonsense, but the same on every run.
// nmt_random_model DIR marian SOURCE_TEXT TARGET_TEXT: a tiny Hugging Face MarianMTModel
// directory instead (what `nmt import` reads), as tests/cli/import_test.cc's MarianDir makes one.
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <stdexcept>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "nmt/decode/cpu_engine.h"
#include "nmt/models/gru_config.h"
#include "nmt/models/model_dir.h"
#include "nmt/models/transformer_config.h"
#include "nmt/util/io.h"
#include "nmt/util/safetensors.h"
#include "marian_layout.h"

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

// source.spm and target.spm, vocab.json (their pieces in Marian's order: </s> 0, <unk> 1, ...,
// <pad> last), config.json and model.safetensors with a random value for every tensor.
void write_marian_directory(const std::filesystem::path& dir, const std::string& source_text,
                            const std::string& target_text) {
  constexpr int64_t kD = 8, kFfn = 16;
  nmt::text::SubwordOptions spm;
  spm.vocab_size = 60;
  spm.hard_vocab_limit = false;
  nlohmann::json vocab = {{"</s>", 0}, {"<unk>", 1}};
  for (const auto& [file, text] : {std::pair{"source.spm", source_text}, std::pair{"target.spm", target_text}}) {
    nmt::text::SubwordModel::train(nmt::read_lines(text), spm, (dir / file).string());
    const auto m = nmt::text::SubwordModel::load((dir / file).string());
    for (int id = 4; id < m.vocab_size(); ++id) {
      const std::string piece = m.pieces({id}).front();
      if (!vocab.contains(piece)) vocab[piece] = vocab.size();
    }
  }
  vocab["<pad>"] = vocab.size();
  const auto V = static_cast<int64_t>(vocab.size());
  nmt::write_file_atomic((dir / "vocab.json").string(), vocab.dump());
  const nlohmann::json config = {
      {"model_type", "marian"}, {"architectures", {"MarianMTModel"}}, {"d_model", kD}, {"encoder_layers", 1},
      {"decoder_layers", 1}, {"encoder_attention_heads", 2}, {"decoder_attention_heads", 2},
      {"encoder_ffn_dim", kFfn}, {"decoder_ffn_dim", kFfn}, {"activation_function", "swish"},
      {"scale_embedding", true}, {"max_position_embeddings", 64}, {"vocab_size", V}, {"decoder_vocab_size", V},
      {"pad_token_id", V - 1}, {"eos_token_id", 0}, {"decoder_start_token_id", V - 1}};
  nmt::write_file_atomic((dir / "config.json").string(), config.dump());
  RandomWeights w;
  for (const auto& [name, shape] : nmt::test::marian_tensors(V, kD, kFfn)) w.f32(name, shape);
  w.write((dir / "model.safetensors").string());
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 4) {
    std::fprintf(stderr, "usage: nmt_random_model DIR transformer|gru TEXT... | DIR marian SOURCE_TEXT TARGET_TEXT\n");
    return 2;
  }
  try {
    const std::filesystem::path dir = argv[1];
    std::filesystem::create_directories(dir);
    if (std::string(argv[2]) == "marian") {
      if (argc != 5) throw std::runtime_error("marian needs SOURCE_TEXT and TARGET_TEXT");
      write_marian_directory(dir, argv[3], argv[4]);
      return 0;
    }
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
