// `nmt import` of Hugging Face MarianMTModel directories: what a user's directory may get wrong,
// each refused in one line naming the file, with nothing written. (Token-for-token equality with
// transformers' generate() is tests/equivalence/marian_import.sh, which needs Python's transformers.)
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <fstream>

#include <nlohmann/json.hpp>

#include "nmt/data/corpus.h"
#include "nmt/text/subword.h"
#include "marian_layout.h"
#include "test_support.h"

namespace fs = std::filesystem;
using nmt::test::run_command;
using nmt::test::TempDir;

namespace {

constexpr int64_t kD = 8, kFfn = 16;

// model.safetensors as transformers writes it: a little-endian header size, a JSON header,
// then the tensors' float32 bytes.
void write_safetensors(const std::string& path, const std::map<std::string, torch::Tensor>& tensors) {
  nlohmann::json header = nlohmann::json::object();
  std::string data;
  for (const auto& [name, t] : tensors) {
    const auto c = t.contiguous().to(torch::kFloat);
    const size_t begin = data.size();
    data.append(static_cast<const char*>(c.data_ptr()), static_cast<size_t>(c.numel()) * 4);
    header[name] = {{"dtype", "F32"}, {"shape", c.sizes().vec()}, {"data_offsets", {begin, data.size()}}};
  }
  const std::string h = header.dump();
  const uint64_t n = h.size();
  std::ofstream out(path, std::ios::binary);
  out.write(reinterpret_cast<const char*>(&n), 8);
  out << h << data;
}

// A tiny MarianMTModel directory: SentencePiece models trained on the fixture (any layout
// will do: only their pieces and scores are read), vocab.json the union of their pieces in
// Marian's order (</s> 0, <unk> 1, ..., <pad> last), random weights of every tensor.
struct MarianDir {
  explicit MarianDir(const std::string& dir) : path(dir) {
    fs::create_directories(dir);
    auto r = nmt::data::read_parallel(nmt::test::fixture("tiny"), "en", "fr");
    nmt::text::SubwordOptions o;
    o.vocab_size = 60;
    o.hard_vocab_limit = false;
    nmt::text::SubwordModel::train(r.corpus.source, o, dir + "/source.spm");
    nmt::text::SubwordModel::train(r.corpus.target, o, dir + "/target.spm");
    nlohmann::json vocab = {{"</s>", 0}, {"<unk>", 1}};
    for (const char* side : {"source.spm", "target.spm"}) {
      const auto m = nmt::text::SubwordModel::load(dir + "/" + side);
      for (int id = 4; id < m.vocab_size(); ++id) {
        const std::string piece = m.pieces({id}).front();
        if (!vocab.contains(piece)) vocab[piece] = vocab.size();
      }
    }
    vocab["<pad>"] = vocab.size();
    V = static_cast<int64_t>(vocab.size());
    nmt::test::write_bytes(dir + "/vocab.json", vocab.dump());
    config = {{"model_type", "marian"}, {"architectures", {"MarianMTModel"}}, {"d_model", kD},
              {"encoder_layers", 1}, {"decoder_layers", 1}, {"encoder_attention_heads", 2},
              {"decoder_attention_heads", 2}, {"encoder_ffn_dim", kFfn}, {"decoder_ffn_dim", kFfn},
              {"activation_function", "swish"}, {"scale_embedding", true}, {"max_position_embeddings", 64},
              {"vocab_size", V}, {"decoder_vocab_size", V}, {"pad_token_id", V - 1}, {"eos_token_id", 0},
              {"decoder_start_token_id", V - 1}};
    write_config();
    torch::manual_seed(5);
    auto add = [&](const std::string& name, std::vector<int64_t> shape) { weights[name] = torch::randn(shape) * 0.3; };
    for (const auto& [name, shape] : nmt::test::marian_tensors(V, kD, kFfn)) add(name, shape);
    write_weights();
  }
  void write_config() const { nmt::test::write_bytes(path + "/config.json", config.dump()); }
  void write_weights() const { write_safetensors(path + "/model.safetensors", weights); }
  std::string path;
  int64_t V = 0;
  nlohmann::json config;
  std::map<std::string, torch::Tensor> weights;
};

nmt::test::CommandResult import(const std::string& from, const std::string& to, const std::string& extra = "") {
  return run_command(nmt::test::nmt_binary() + " import -q " + from + " -o " + to + extra);
}

class MarianImport : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string why;
    if (!nmt::text::SubwordModel::available(&why)) GTEST_SKIP() << why;
  }
  TempDir tmp{"nmt-import"};
};

TEST_F(MarianImport, AnImportedModelTranslatesAndReportsItsPieces) {
  MarianDir hf(tmp.file("hf"));
  auto r = import(hf.path, tmp.file("out"));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  for (const char* f : {"config.json", "model.pt", "spm.model", "spm.src.model"}) EXPECT_TRUE(fs::exists(tmp.file("out/") + f)) << f;
  auto t = run_command("echo 'a man with a dog' | " + nmt::test::nmt_binary() + " translate -m " + tmp.file("out") +
                       " --json --max-len-a 0 --max-len-b 5");
  ASSERT_EQ(t.exit_code, 0) << t.err;
  const auto j = nlohmann::json::parse(t.out);
  EXPECT_LE(j["tokens"].size(), 5u);
  for (const auto& piece : j["tokens"]) EXPECT_TRUE(piece != "<pad>" && piece != "<s>") << piece;  // never produced
  // An existing output needs --force.
  r = import(hf.path, tmp.file("out"));
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("already exists (--force replaces it)"), std::string::npos) << r.err;
  EXPECT_EQ(import(hf.path, tmp.file("out"), " --force").exit_code, 0);
}

// Each mistake: exit 1, one line naming the file, no output directory (and no hidden one) left.
TEST_F(MarianImport, BadDirectoriesAreOneLineErrorsNamingTheFileAndWriteNothing) {
  MarianDir hf(tmp.file("hf"));
  auto expect_refused = [&](const std::string& what, const std::string& fragment) {
    const auto r = import(hf.path, tmp.file("out"));
    EXPECT_EQ(r.exit_code, 1) << what << ": " << r.err;
    EXPECT_NE(r.err.find(fragment), std::string::npos) << what << ": " << r.err;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << what << ": " << r.err;
    for (const auto& e : fs::directory_iterator(tmp.path()))
      EXPECT_EQ(e.path().filename(), "hf") << what << ": left " << e.path();
  };
  fs::rename(hf.path + "/target.spm", hf.path + "/target.spm.aside");
  expect_refused("missing file", "hf/target.spm: missing");
  fs::rename(hf.path + "/target.spm.aside", hf.path + "/target.spm");

  hf.config["model_type"] = "bart";
  hf.config["architectures"] = {"BartForConditionalGeneration"};
  hf.write_config();
  expect_refused("another architecture", "hf/config.json: model_type 'bart' (\"BartForConditionalGeneration\")");
  hf.config["model_type"] = "marian";
  hf.write_config();

  // Another model's vocabulary: the pieces do not match the SentencePiece models.
  const std::string vocab = nmt::test::slurp(hf.path + "/vocab.json");
  nlohmann::json other = {{"</s>", 0}, {"<unk>", 1}};
  for (int64_t i = 2; i < hf.V - 1; ++i) other["▁w" + std::to_string(i)] = i;
  other["<pad>"] = hf.V - 1;
  nmt::test::write_bytes(hf.path + "/vocab.json", other.dump());
  expect_refused("foreign vocabulary", "the vocabulary is not this SentencePiece model's");
  nlohmann::json short_vocab = nlohmann::json::parse(vocab);
  short_vocab.erase("<unk>");
  nmt::test::write_bytes(hf.path + "/vocab.json", short_vocab.dump());
  expect_refused("vocabulary of another size", "hf/vocab.json: " + std::to_string(hf.V - 1) + " pieces, but config.json");
  nmt::test::write_bytes(hf.path + "/vocab.json", vocab);

  const std::string weights = nmt::test::slurp(hf.path + "/model.safetensors");
  nmt::test::write_bytes(hf.path + "/model.safetensors", weights.substr(0, weights.size() / 2));
  expect_refused("truncated weights", "hf/model.safetensors: tensor");
  nmt::test::write_bytes(hf.path + "/model.safetensors", weights.substr(0, 5));
  expect_refused("truncated header", "hf/model.safetensors: truncated");
  hf.weights.erase("model.decoder.layers.0.fc2.bias");
  hf.write_weights();
  expect_refused("missing tensor", "hf/model.safetensors: no tensor 'decoder.layers.0.fc2.bias'");
  hf.weights["model.decoder.layers.0.fc2.bias"] = torch::zeros({kD + 1});
  hf.write_weights();
  expect_refused("wrong shape", "'decoder.layers.0.fc2.bias' has shape 9, config.json makes it 8");
}

}  // namespace
