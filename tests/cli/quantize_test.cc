// `nmt quantize` and int8 model directories end to end: what the command writes, int8 models
// translating as their fp32 models do (Transformer and GRU), `translate --int8`, every command
// taking an int8 model, and what it refuses (quantised Linears and int8 weights files in-process:
// tests/unit/models/quantize_test.cc).
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <nlohmann/json.hpp>

#include "nmt/decode/engine_quantize.h"
#include "nmt/models/model_io.h"
#include "nmt/quant/int8_gemm.h"
#include "nmt/util/error.h"
#include "nmt/util/safetensors.h"
#include "test_support.h"

namespace fs = std::filesystem;
using nmt::test::fixture;
using nmt::test::nmt_binary;
using nmt::test::run_command;
using nmt::test::slurp;

namespace {

// Two safetensors files hold the same tensors (names, dtypes, shapes and bytes) and metadata.
void expect_same_tensors(const std::string& a, const std::string& b) {
  const auto fa = nmt::safetensors::File::open(a), fb = nmt::safetensors::File::open(b);
  ASSERT_EQ(fa.tensors().size(), fb.tensors().size());
  for (const auto& t : fa.tensors()) {
    const auto* u = fb.find(t.name);
    ASSERT_NE(u, nullptr) << t.name;
    ASSERT_EQ(u->dtype, t.dtype) << t.name;
    ASSERT_EQ(u->shape, t.shape) << t.name;
    EXPECT_EQ(std::memcmp(fa.data(t), fb.data(*u), t.bytes), 0) << t.name;
  }
  EXPECT_EQ(fa.metadata(), fb.metadata());
}

// One tiny Transformer trained once; `nmt quantize` of it.
class QuantizeCli : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new nmt::test::TempDir("nmt-quantize");
    auto r = nmt::test::run_once_per_ctest(
        [](const std::string& out) {
          return nmt_binary() + " train --preset transformer-tiny --train " + fixture("tiny") + " --valid " +
                 fixture("tiny") + " --out " + out + " --max-steps 300 --valid-every 300 --lr 5e-3 --seed 3 --threads 1 -q";
        },
        fp32());
    ASSERT_EQ(r.exit_code, 0) << r.err;
    quantize_output_ = run_command(nmt_binary() + " quantize " + fp32() + " -o " + int8());
    ASSERT_EQ(quantize_output_.exit_code, 0) << quantize_output_.err;
    // A few dozen inputs: the training sentences and variations the model never saw.
    std::ifstream in(fixture("tiny.en"));
    std::string inputs;
    for (std::string line; std::getline(in, line);) {
      std::string lower = line;
      lower[0] = static_cast<char>(std::tolower(lower[0]));
      inputs += line + "\n" + lower + "\n" + line.substr(0, line.size() - 1) + "\n" +
                line.substr(0, line.find(' ', 8)) + "\n";
    }
    nmt::test::write_bytes(inputs_file(), inputs);
  }
  static void TearDownTestSuite() {
    delete dir_;
    dir_ = nullptr;
  }
  static std::string fp32() { return dir_->file("fp32"); }
  static std::string int8() { return dir_->file("int8"); }
  static std::string inputs_file() { return dir_->file("inputs.en"); }
  static std::string translate(const std::string& args) { return nmt_binary() + " translate --threads 1 " + args; }
  static std::vector<std::string> lines(const std::string& text) {
    std::vector<std::string> out;
    std::istringstream s(text);
    for (std::string l; std::getline(s, l);) out.push_back(l);
    return out;
  }
  // A copy of a model directory to break.
  static std::string copy_of(const std::string& model, const std::string& name) {
    const std::string copy = dir_->file(name);
    fs::remove_all(copy);
    fs::copy(model, copy, fs::copy_options::recursive);
    return copy;
  }
  static void expect_one_error_line(const nmt::test::CommandResult& r) {
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
    EXPECT_EQ(r.err.rfind("nmt: error: ", 0), 0u) << r.err;
  }
  static nmt::test::TempDir* dir_;
  static nmt::test::CommandResult quantize_output_;
};
nmt::test::TempDir* QuantizeCli::dir_ = nullptr;
nmt::test::CommandResult QuantizeCli::quantize_output_;

TEST_F(QuantizeCli, WritesAModelDirectoryMarkedInt8) {
  EXPECT_TRUE(fs::is_regular_file(int8() + "/model.int8.pt"));
  EXPECT_FALSE(fs::exists(int8() + "/model.pt"));
  EXPECT_EQ(slurp(int8() + "/spm.model"), slurp(fp32() + "/spm.model"));
  auto config = nlohmann::json::parse(slurp(int8() + "/config.json"));
  EXPECT_EQ(config["quantization"], "int8");
  EXPECT_EQ(config["model"], nlohmann::json::parse(slurp(fp32() + "/config.json"))["model"]);
  // Linear weights at one byte instead of four: the file is smaller than model.pt.
  EXPECT_LT(fs::file_size(int8() + "/model.int8.pt"), fs::file_size(fp32() + "/model.pt"));
  EXPECT_NE(quantize_output_.err.find("int8 kernel on this CPU: " + nmt::quant::kernel_name()), std::string::npos)
      << quantize_output_.err;
  // No temporary directory left beside it.
  for (const auto& entry : fs::directory_iterator(dir_->path()))
    EXPECT_EQ(entry.path().filename().string().find(".int8.tmp"), std::string::npos) << entry.path();
}

// The int8 model translates the sentences the model has learnt exactly as the fp32 model does,
// with greedy and beam search, and scores them at 100 BLEU.
TEST_F(QuantizeCli, Int8ModelTranslatesLearntSentencesLikeFp32) {
  for (const std::string& search : std::vector<std::string>{"", " --beam 5"}) {
    auto a = run_command(translate("-m " + fp32() + search + " --input " + fixture("tiny.en")));
    auto b = run_command(translate("-m " + int8() + search + " --input " + fixture("tiny.en")));
    ASSERT_EQ(a.exit_code, 0) << a.err;
    ASSERT_EQ(b.exit_code, 0) << b.err;
    EXPECT_EQ(b.out, a.out) << search;
    EXPECT_EQ(b.out, slurp(fixture("tiny.fr"))) << search;
  }
  auto e = run_command(nmt_binary() + " eval --threads 1 --no-record -m " + int8() + " --src " + fixture("tiny.en") +
                       " --ref " + fixture("tiny.fr") + " --json");
  ASSERT_EQ(e.exit_code, 0) << e.err;
  EXPECT_GT(nlohmann::json::parse(e.out)["bleu"]["score"].get<double>(), 99.99);
}

// Along the fp32 model's own greedy translations of 32 lines (24 of them variants the model never
// saw, where it babbles and a whole line hangs on near-ties), the int8 model predicts the same
// next token at least 95% of the time. Teacher-forced, so one early difference is one
// disagreement, not a different rest of the line.
TEST_F(QuantizeCli, Int8PredictsTheNextTokensFp32Predicts) {
  auto reference = nmt::models::load_model(fp32());
  auto quantized = nmt::models::load_model(int8());
  ASSERT_EQ(quantized.quantization, "int8");
  torch::InferenceMode inference;
  size_t same = 0, total = 0;
  for (const auto& line : lines(slurp(inputs_file()))) {
    auto ids = reference.subwords.source.encode(line);
    ids.push_back(static_cast<int>(nmt::models::kEosId));
    auto src = torch::tensor(std::vector<int64_t>(ids.begin(), ids.end()), torch::kLong).unsqueeze(0);
    auto mask = src.ne(nmt::models::kPadId);
    auto a = reference.model->start(reference.model->encode(src, mask), mask);
    auto b = quantized.model->start(quantized.model->encode(src, mask), mask);
    int64_t token = nmt::models::kBosId;
    for (int t = 0; t < 60 && (t == 0 || token != nmt::models::kEosId); ++t) {
      const auto previous = torch::tensor({token}, torch::kLong);
      token = reference.model->step(previous, a).argmax(-1).item<int64_t>();
      same += quantized.model->step(previous, b).argmax(-1).item<int64_t>() == token;
      ++total;
    }
  }
  EXPECT_GT(total, 32u * 5);
  EXPECT_GE(same * 100, total * 95) << same << " of " << total;
  RecordProperty("next_token_agreement", std::to_string(same) + " of " + std::to_string(total));
}

// The GRU model too (its cells stay fp32): `nmt quantize` of a tiny trained GRU translates the
// learnt sentences as the fp32 model does.
TEST(QuantizeGruCli, Int8GruTranslatesLearntSentencesLikeFp32) {
  nmt::test::TempDir dir;
  auto r =
      run_command(nmt_binary() + " train --preset gru-tiny --train " + fixture("tiny") + " --valid " + fixture("tiny") +
                  " --out " + dir.file("fp32") + " --max-steps 300 --valid-every 300 --seed 3 --threads 1 -q");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto q = run_command(nmt_binary() + " quantize -q " + dir.file("fp32") + " -o " + dir.file("int8"));
  ASSERT_EQ(q.exit_code, 0) << q.err;
  // The build without LibTorch writes the same int8 weights (decode/engine_quantize.h).
  nmt::decode::quantize_on_engine(dir.file("fp32"), dir.file("engine-int8"), false);
  expect_same_tensors(dir.file("int8") + "/model.safetensors", dir.file("engine-int8") + "/model.safetensors");
  for (const std::string& search : std::vector<std::string>{"", " --beam 5"}) {
    auto a = run_command(nmt_binary() + " translate --threads 1 -m " + dir.file("fp32") + search + " --input " +
                         fixture("tiny.en"));
    auto b = run_command(nmt_binary() + " translate --threads 1 -m " + dir.file("int8") + search + " --input " +
                         fixture("tiny.en"));
    ASSERT_EQ(a.exit_code, 0) << a.err;
    ASSERT_EQ(b.exit_code, 0) << b.err;
    EXPECT_EQ(b.out, a.out) << search;
  }
}

// The build without LibTorch quantises from model.safetensors on the CPU engine's loaders
// (decode/engine_quantize.h): the same Linears, int8 values and scales as nmt quantize here, and
// the LibTorch path reads that directory (no model.int8.pt) from its model.safetensors.
TEST_F(QuantizeCli, WithoutLibTorchTheSameInt8CopyIsWritten) {
  const std::string out = dir_->file("engine-int8");
  fs::remove_all(out);
  const auto s = nmt::decode::quantize_on_engine(fp32(), out, false);
  EXPECT_NE(quantize_output_.err.find("quantized " + std::to_string(s.linears) + " Linear layers ("), std::string::npos)
      << quantize_output_.err;
  expect_same_tensors(int8() + "/model.safetensors", out + "/model.safetensors");
  EXPECT_FALSE(fs::exists(out + "/model.int8.pt"));
  EXPECT_EQ(nlohmann::json::parse(slurp(out + "/config.json"))["quantization"], "int8");
  auto a = run_command(translate("--engine torch -m " + int8() + " --beam 3 --input " + inputs_file()));
  auto b = run_command(translate("--engine torch -m " + out + " --beam 3 --input " + inputs_file()));
  ASSERT_EQ(b.exit_code, 0) << b.err;
  EXPECT_EQ(b.out, a.out);
  // A config.json that says fp32 over int8 weights is refused, naming the file.
  auto config = nlohmann::json::parse(slurp(out + "/config.json"));
  config.erase("quantization");
  nmt::test::write_bytes(out + "/config.json", config.dump());
  auto r = run_command(translate("--engine torch -m " + out + " --input " + fixture("tiny.en")));
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find(out + "/model.safetensors: int8 weights, but config.json says fp32"), std::string::npos) << r.err;
  expect_one_error_line(r);
}

// `translate --int8` quantises on load exactly as `nmt quantize` does.
TEST_F(QuantizeCli, Int8OnLoadTranslatesLikeTheInt8Directory) {
  auto a = run_command(translate("--int8 -m " + fp32() + " --beam 3 --nbest 3 --input " + inputs_file()));
  auto b = run_command(translate("-m " + int8() + " --beam 3 --nbest 3 --input " + inputs_file()));
  ASSERT_EQ(a.exit_code, 0) << a.err;
  ASSERT_EQ(b.exit_code, 0) << b.err;
  EXPECT_EQ(a.out, b.out);
}

// Every command that takes a model takes an int8 one; an ensemble may mix the two.
TEST_F(QuantizeCli, ScoreAndMixedEnsemblesAcceptInt8Models) {
  auto s = run_command(nmt_binary() + " score -m " + int8() + " --src " + fixture("tiny.en") + " --tgt " +
                       fixture("tiny.fr"));
  ASSERT_EQ(s.exit_code, 0) << s.err;
  EXPECT_EQ(lines(s.out).size(), 8u);
  auto mixed = run_command(translate("-m " + fp32() + " -m " + int8() + " --input " + fixture("tiny.en")));
  ASSERT_EQ(mixed.exit_code, 0) << mixed.err;
  EXPECT_EQ(mixed.out, slurp(fixture("tiny.fr")));
}

TEST_F(QuantizeCli, ExistingOutputIsNotClobberedWithoutForce) {
  const std::string out = dir_->file("taken");
  fs::create_directories(out);
  nmt::test::write_bytes(out + "/notes.txt", "mine");
  auto r = run_command(nmt_binary() + " quantize " + fp32() + " -o " + out);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find(out + ": already exists"), std::string::npos) << r.err;
  expect_one_error_line(r);
  EXPECT_EQ(slurp(out + "/notes.txt"), "mine");
  auto forced = run_command(nmt_binary() + " quantize --force -q " + fp32() + " -o " + out);
  ASSERT_EQ(forced.exit_code, 0) << forced.err;
  EXPECT_EQ(forced.err, "");
  EXPECT_FALSE(fs::exists(out + "/notes.txt"));
  EXPECT_EQ(slurp(out + "/model.int8.pt"), slurp(int8() + "/model.int8.pt"));  // deterministic
  // Never onto the model itself, --force or not.
  auto self = run_command(nmt_binary() + " quantize --force " + fp32() + " -o " + fp32() + "/");
  EXPECT_EQ(self.exit_code, 2);
  EXPECT_TRUE(fs::exists(fp32() + "/model.pt"));
}

// The LibTorch path reads model.pt or model.int8.pt (--engine torch); the engine reads
// model.safetensors, whose damage tests/unit/models/weights_file_test.cc covers.
TEST_F(QuantizeCli, Fp32WeightsWhereInt8BelongAreRefused) {
  const std::string broken = copy_of(int8(), "fp32-as-int8");
  fs::copy_file(fp32() + "/model.pt", broken + "/model.int8.pt", fs::copy_options::overwrite_existing);
  auto r = run_command(translate("--engine torch -m " + broken + " --input " + fixture("tiny.en")));
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find(broken + "/model.int8.pt: not an int8 weights file"), std::string::npos) << r.err;
  expect_one_error_line(r);
}

TEST_F(QuantizeCli, Int8WeightsWhereFp32BelongAreRefused) {
  const std::string broken = copy_of(fp32(), "int8-as-fp32");
  fs::copy_file(int8() + "/model.int8.pt", broken + "/model.pt", fs::copy_options::overwrite_existing);
  auto r = run_command(translate("--engine torch -m " + broken + " --input " + fixture("tiny.en")));
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find(broken + "/model.pt: int8 weights"), std::string::npos) << r.err;
  expect_one_error_line(r);
}

// The offset of the middle byte of a zip archive's largest stored record (0 if none is found).
size_t middle_of_largest_zip_record(const std::string& zip) {
  auto u16 = [&](size_t at) { return static_cast<size_t>(static_cast<uint8_t>(zip[at])) | static_cast<size_t>(static_cast<uint8_t>(zip[at + 1])) << 8; };
  auto u32 = [&](size_t at) { return u16(at) | u16(at + 2) << 16; };
  size_t best_size = 0, best_middle = 0;
  for (size_t at = zip.find("PK\x01\x02"); at != std::string::npos && at + 46 <= zip.size(); at = zip.find("PK\x01\x02", at + 4)) {
    const size_t size = u32(at + 20), local = u32(at + 42);
    if (size <= best_size || local + 30 > zip.size()) continue;
    const size_t data = local + 30 + u16(local + 26) + u16(local + 28);
    if (data + size > zip.size()) continue;
    best_size = size;
    best_middle = data + size / 2;
  }
  return best_middle;
}

TEST_F(QuantizeCli, TruncatedOrCorruptedInt8FilesAreRefused) {
  const std::string original = slurp(int8() + "/model.int8.pt");
  const std::string truncated = copy_of(int8(), "truncated");
  nmt::test::write_bytes(truncated + "/model.int8.pt", original.substr(0, original.size() / 2));
  // A flipped byte in the middle of the largest tensor's data (the zip stores tensors
  // uncompressed). Found through the zip's central directory: the middle of the file may be
  // padding or a header, depending on the LibTorch version's archive layout.
  const std::string corrupted = copy_of(int8(), "corrupted");
  std::string flipped = original;
  const size_t middle = middle_of_largest_zip_record(original);
  ASSERT_GT(middle, 0u);
  flipped[middle] = static_cast<char>(flipped[middle] ^ 0x40);
  nmt::test::write_bytes(corrupted + "/model.int8.pt", flipped);
  for (const auto& broken : {truncated, corrupted}) {
    auto r = run_command(translate("--engine torch -m " + broken + " --input " + fixture("tiny.en")));
    EXPECT_EQ(r.exit_code, 1) << broken;
    EXPECT_NE(r.err.find(broken + "/model.int8.pt: "), std::string::npos) << r.err;
    expect_one_error_line(r);
    EXPECT_EQ(r.out, "");
  }
}

TEST_F(QuantizeCli, WhatIsNotAnFp32ModelDirectoryIsRefused) {
  nmt::test::TempDir empty;
  auto r = run_command(nmt_binary() + " quantize " + empty.path() + " -o " + dir_->file("never"));
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find(empty.path() + "/config.json"), std::string::npos) << r.err;
  expect_one_error_line(r);
  auto again = run_command(nmt_binary() + " quantize " + int8() + " -o " + dir_->file("never"));
  EXPECT_EQ(again.exit_code, 1);
  EXPECT_NE(again.err.find(int8() + "/config.json: already an int8 model"), std::string::npos) << again.err;
  const std::string unknown = copy_of(int8(), "int4");
  auto config = nlohmann::json::parse(slurp(unknown + "/config.json"));
  config["quantization"] = "int4";
  nmt::test::write_bytes(unknown + "/config.json", config.dump());
  auto t = run_command(translate("-m " + unknown + " --input " + fixture("tiny.en")));
  EXPECT_EQ(t.exit_code, 1);
  EXPECT_NE(t.err.find(unknown + "/config.json: 'quantization' is \"int4\""), std::string::npos) << t.err;
  EXPECT_FALSE(fs::exists(dir_->file("never")));
}

// NMT_INT8_KERNEL runs the kernel it names (every kernel computes the same sums, so the portable
// one translates exactly as the fastest does); a name that is no kernel is refused in one line,
// exit 2, before any translation.
TEST_F(QuantizeCli, Int8KernelChosenByTheEnvironmentTranslatesTheSame) {
  auto fastest = run_command(translate("-m " + int8() + " --beam 3 --input " + inputs_file()));
  auto portable =
      run_command("NMT_INT8_KERNEL=portable " + translate("-m " + int8() + " --beam 3 --input " + inputs_file()));
  ASSERT_EQ(fastest.exit_code, 0) << fastest.err;
  ASSERT_EQ(portable.exit_code, 0) << portable.err;
  EXPECT_EQ(portable.out, fastest.out);
  auto on_load =
      run_command("NMT_INT8_KERNEL=portable " + translate("--int8 -m " + fp32() + " --beam 3 --input " + inputs_file()));
  ASSERT_EQ(on_load.exit_code, 0) << on_load.err;
  EXPECT_EQ(on_load.out, fastest.out);
  for (const std::string& model : {"-m " + int8(), "--int8 -m " + fp32()}) {
    auto bad = run_command("NMT_INT8_KERNEL=avx3 " + translate(model + " --input " + inputs_file()));
    EXPECT_EQ(bad.exit_code, 2) << bad.err;
    expect_one_error_line(bad);
    EXPECT_NE(bad.err.find("NMT_INT8_KERNEL=avx3: not one of avx512-vnni, avx-vnni, avx2, portable"), std::string::npos)
        << bad.err;
    EXPECT_EQ(bad.out, "");
  }
}

TEST_F(QuantizeCli, UsageErrorsExitTwo) {
  for (const std::string& args : std::vector<std::string>{"quantize " + fp32(), "quantize -o " + dir_->file("never"),
                                 "quantize " + fp32() + " -o " + dir_->file("never") + " --no-such-option"}) {
    auto r = run_command(nmt_binary() + " " + args);
    EXPECT_EQ(r.exit_code, 2) << args;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  }
  EXPECT_FALSE(fs::exists(dir_->file("never")));
}

}  // namespace
