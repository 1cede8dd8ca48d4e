// `nmt bench`, the measurements behind scripts/bench/bench.sh: the JSON it prints must describe the
// batches it dumped for the PyTorch reference, and translation must be timed on real output. Its
// rates are its counts over its own seconds, its GFLOP/s the model's matrix-product work over
// them, and it names the kernels it measured. No test here holds a speed to a threshold: a loaded
// machine is slow, not wrong.
#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <set>
#include <string>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "nmt/quant/int8_gemm.h"
#include "test_support.h"

using nmt::test::fixture;
using nmt::test::nmt_binary;
using nmt::test::run_command;

namespace {

// The matrix-product operations of one teacher-forced forward pass of a Transformer (config.json's
// "model") over `batch` sentences padded to `src` source and `tgt` target positions, written out
// once more here rather than taken from the library: self-attention's fused QKV, QKᵀ, weights·V and
// output projection, cross-attention's, the feed-forward layers, and the output layer.
double transformer_forward_flops(const nlohmann::json& c, double batch, double src, double tgt) {
  const double d = c["d_model"].get<double>(), f = c["ffn"].get<double>(), V = c["tgt_vocab"].get<double>();
  const double B = batch, S = src, T = tgt;
  const double enc = 2 * B * S * d * 3 * d + 4 * B * S * S * d + 2 * B * S * d * d + 4 * B * S * d * f;
  const double dec = 2 * B * T * d * 3 * d + 4 * B * T * T * d + 2 * B * T * d * d + 2 * B * T * d * d +
                     4 * B * S * d * d + 4 * B * T * S * d + 2 * B * T * d * d + 4 * B * T * d * f;
  return c["encoder_layers"].get<double>() * enc + c["decoder_layers"].get<double>() * dec + 2 * B * T * d * V;
}

}  // namespace

TEST(Bench, TrainReportsTheTokensOfTheBatchesItDumps) {
  nmt::test::TempDir t;
  auto r = run_command(nmt_binary() + " bench train --preset transformer-tiny --train " + fixture("tiny") +
                       " --max-tokens 40 --warmup 1 --steps 2 --threads 1 --dump-batches " + t.file("b.jsonl") +
                       " --dump-config " + t.file("config.json"));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto j = nlohmann::json::parse(r.out);
  std::ifstream in(t.file("b.jsonl"));
  std::string line;
  std::vector<nlohmann::json> batches;
  while (std::getline(in, line)) batches.push_back(nlohmann::json::parse(line));
  ASSERT_EQ(batches.size(), 3u);  // warm-up + timed
  // Timed tokens: every source and target id plus one EOS per side, in batches 2 and 3.
  int64_t tokens = 0;
  for (size_t b = 1; b < 3; ++b)
    for (const char* side : {"src", "tgt"})
      for (const auto& ids : batches[b][side]) tokens += static_cast<int64_t>(ids.size()) + 1;
  EXPECT_EQ(j["tokens"].get<int64_t>(), tokens);
  EXPECT_GT(j["peak_rss_mb"].get<double>(), 10);
  EXPECT_TRUE(std::isfinite(j["final_loss"].get<double>()));
  auto config = nlohmann::json::parse(nmt::test::slurp(t.file("config.json")));
  EXPECT_EQ(config["model"]["type"], "transformer");
  EXPECT_GT(config["model"]["src_vocab"].get<int64_t>(), 4);  // the subword vocabulary, not the default 0
  EXPECT_EQ(config["train"]["max_tokens"], 40);
  // The run the line describes.
  EXPECT_EQ(j["impl"], "nmt");
  EXPECT_EQ(j["model"], "transformer");
  EXPECT_EQ(j["preset"], "transformer-tiny");
  EXPECT_EQ(j["steps"], 2);
  EXPECT_EQ(j["max_tokens"], 40);
  EXPECT_EQ(j["device"], "cpu");
  EXPECT_EQ(j["fused"], true);
  EXPECT_EQ(j["bf16"], false);
  EXPECT_GT(j["parameters"].get<int64_t>(), 0);
  // Its rates: the timed tokens over its seconds, and the matrix-product work of the timed updates
  // (forward and backward, 3 x the forward pass over each batch as padded: sources with their EOS,
  // targets with their BOS) over the same seconds.
  const double seconds = j["seconds"].get<double>();
  ASSERT_TRUE(std::isfinite(seconds) && seconds > 0) << seconds;
  EXPECT_NEAR(j["tokens_per_s"].get<double>() * seconds, static_cast<double>(tokens), 1e-9 * tokens);
  double flops = 0;
  for (size_t b = 1; b < 3; ++b) {
    size_t src_len = 0, tgt_len = 0;
    for (const auto& ids : batches[b]["src"]) src_len = std::max(src_len, ids.size());
    for (const auto& ids : batches[b]["tgt"]) tgt_len = std::max(tgt_len, ids.size());
    flops += 3 * transformer_forward_flops(config["model"], static_cast<double>(batches[b]["src"].size()),
                                           src_len + 1.0, tgt_len + 1.0);
  }
  ASSERT_GT(flops, 0);
  EXPECT_NEAR(j["matmul_flops"].get<double>(), flops, 1e-9 * flops);
  EXPECT_NEAR(j["gflops"].get<double>() * 1e9 * seconds, flops, 1e-9 * flops);
}

// `nmt bench translate` of a freshly initialised tiny Transformer (t/m) over the tiny fixture,
// dumping the source ids (t/ids.jsonl) and the greedy outputs (t/hyp.jsonl).
nmt::test::CommandResult translate_with_fresh_tiny_model(nmt::test::TempDir& t) {
  auto init = run_command(nmt_binary() + " bench init --preset transformer-tiny --train " + fixture("tiny") + " --out " +
                          t.file("m"));
  if (init.exit_code != 0) return init;
  return run_command(nmt_binary() + " bench translate -m " + t.file("m") + " --src " + fixture("tiny.en") +
                     " --batch-size 3 --threads 1 --dump-ids " + t.file("ids.jsonl") + " --dump-hyp-ids " + t.file("hyp.jsonl"));
}

TEST(Bench, TranslateCountsSentencesAndDumpsIds) {
  nmt::test::TempDir t;
  auto r = translate_with_fresh_tiny_model(t);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["sentences"], 8);
  int64_t produced = 0;
  std::ifstream hyp(t.file("hyp.jsonl"));
  std::string line;
  size_t lines = 0;
  while (std::getline(hyp, line)) produced += static_cast<int64_t>(nlohmann::json::parse(line).size()), ++lines;
  EXPECT_EQ(lines, 8u);
  EXPECT_EQ(j["target_tokens"].get<int64_t>(), produced);
  // The run the line describes: an fp32 model (so no int8 kernel), greedy, in batches of 3, timed
  // as a whole (no per-sentence latencies).
  EXPECT_EQ(j["impl"], "nmt");
  EXPECT_EQ(j["model"], "transformer");
  EXPECT_EQ(j["weights"], "fp32");
  EXPECT_TRUE(j.contains("int8_kernel") && j["int8_kernel"].is_null()) << j.dump();
  EXPECT_EQ(j["beam"], 1);
  EXPECT_EQ(j["batch_size"], 3);
  EXPECT_EQ(j["device"], "cpu");
  EXPECT_TRUE(j.contains("latency_ms") && j["latency_ms"].is_null()) << j.dump();
  EXPECT_GE(j["load_seconds"].get<double>(), 0);
  // Its rates are its counts over its own seconds.
  const double seconds = j["seconds"].get<double>();
  ASSERT_TRUE(std::isfinite(seconds) && seconds > 0) << seconds;
  EXPECT_NEAR(j["sentences_per_s"].get<double>() * seconds, 8.0, 1e-9 * 8);
  EXPECT_NEAR(j["target_tokens_per_s"].get<double>() * seconds, static_cast<double>(produced), 1e-9 * produced);
}

// scripts/bench/bench-ct2.sh sets each decoding row against the machine's matrix-product peak: the work
// counted must be that of one forward pass over each source and its translation, EOS included on
// both sides, by the Transformer's matrix products (the count below, written out once more).
TEST(Bench, TranslateReportsTheMatrixProductWorkOfItsOutput) {
  nmt::test::TempDir t;
  auto r = translate_with_fresh_tiny_model(t);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto j = nlohmann::json::parse(r.out);
  auto config = nlohmann::json::parse(nmt::test::slurp(t.file("m/config.json")));
  const auto& c = config.contains("model") ? config["model"] : config;
  std::ifstream ids(t.file("ids.jsonl")), hyp(t.file("hyp.jsonl"));
  std::string src_line, hyp_line;
  double expected = 0;
  while (std::getline(ids, src_line) && std::getline(hyp, hyp_line)) {
    const double S = nlohmann::json::parse(src_line).size() + 1.0, T = nlohmann::json::parse(hyp_line).size() + 1.0;
    expected += transformer_forward_flops(c, 1, S, T);
  }
  const double reported = j["output_matmul_gflops"].get<double>() * j["seconds"].get<double>() * 1e9;
  EXPECT_GT(expected, 0);
  EXPECT_NEAR(reported, expected, 1e-6 * expected);
}

// A decoding benchmark's int8 rows are a share of this peak: it must be measured on the kernel
// quantised decoding runs on this CPU (the one `bench translate` of an int8 model names), at
// every size the float32 peak is measured at, and each peak is the best of its sizes.
TEST(Bench, MatmulAlsoMeasuresTheInt8KernelQuantisedDecodingRuns) {
  auto r = run_command(nmt_binary() + " bench matmul --threads 1");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["int8_kernel"].get<std::string>(), nmt::quant::kernel_name());
  EXPECT_EQ(j["threads"], 1);
  EXPECT_TRUE(j["blas_core"].is_string()) << j.dump();  // the float32 kernels' name ("" if not OpenBLAS)
  const std::set<std::string> sizes = {"256", "512", "1024", "2048"};
  for (const char* table : {"by_size", "int8_by_size"}) {
    std::set<std::string> measured;
    double best = 0;
    for (const auto& [size, gflops] : j[table].items()) {
      measured.insert(size);
      EXPECT_TRUE(std::isfinite(gflops.get<double>()) && gflops.get<double>() > 0) << table << " " << size << ": " << gflops;
      best = std::max(best, gflops.get<double>());
    }
    EXPECT_EQ(measured, sizes) << table;
    EXPECT_DOUBLE_EQ(j[std::string(table) == "by_size" ? "peak_gflops" : "int8_peak_gflops"].get<double>(), best) << table;
  }
  // The kernel an int8 model decodes with, as `bench translate` reports it, is the one measured.
  nmt::test::TempDir t;
  auto init = run_command(nmt_binary() + " bench init --preset transformer-tiny --train " + fixture("tiny") + " --out " +
                          t.file("m"));
  ASSERT_EQ(init.exit_code, 0) << init.err;
  auto translate = run_command(nmt_binary() + " bench translate -m " + t.file("m") + " --src " + fixture("tiny.en") +
                               " --threads 1 --int8");
  ASSERT_EQ(translate.exit_code, 0) << translate.err;
  const auto tj = nlohmann::json::parse(translate.out);
  EXPECT_EQ(tj["weights"], "int8");
  EXPECT_EQ(tj["int8_kernel"], j["int8_kernel"]);
}

// Debian's OpenBLAS falls back to generic SSE3 kernels on CPUs it does not know (4x slower
// here); nmt must end up on kernels that use the CPU's vector units.
TEST(Bench, OpenBlasUsesTheCpusVectorKernels) {
  auto r = run_command(nmt_binary() + " bench matmul --threads 1");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::string core = nlohmann::json::parse(r.out)["blas_core"].get<std::string>();
  if (core.empty()) GTEST_SKIP() << "the BLAS is not OpenBLAS";
  __builtin_cpu_init();
  if (!__builtin_cpu_supports("avx2")) GTEST_SKIP() << "no AVX2 on this CPU";
  EXPECT_NE(core, "Prescott");
  EXPECT_NE(core, "prescott");
}
