// `nmt bench`, the measurements behind scripts/bench/bench.sh: the JSON it prints must describe the
// batches it dumped for the PyTorch reference, and translation must be timed on real output.
#include <cmath>
#include <filesystem>
#include <fstream>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "nmt/quant/int8_gemm.h"
#include "test_support.h"

using nmt::test::fixture;
using nmt::test::nmt_binary;
using nmt::test::run_command;

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
  EXPECT_GT(j["tokens_per_s"].get<double>(), 0);
  EXPECT_GT(j["gflops"].get<double>(), 0);
  EXPECT_GT(j["peak_rss_mb"].get<double>(), 10);
  EXPECT_TRUE(std::isfinite(j["final_loss"].get<double>()));
  auto config = nlohmann::json::parse(nmt::test::slurp(t.file("config.json")));
  EXPECT_EQ(config["model"]["type"], "transformer");
  EXPECT_GT(config["model"]["src_vocab"].get<int64_t>(), 4);  // the subword vocabulary, not the default 0
  EXPECT_EQ(config["train"]["max_tokens"], 40);
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
  const double d = c["d_model"].get<double>(), f = c["ffn"].get<double>(), V = c["tgt_vocab"].get<double>();
  const double enc_layers = c["encoder_layers"].get<double>(), dec_layers = c["decoder_layers"].get<double>();
  std::ifstream ids(t.file("ids.jsonl")), hyp(t.file("hyp.jsonl"));
  std::string src_line, hyp_line;
  double expected = 0;
  while (std::getline(ids, src_line) && std::getline(hyp, hyp_line)) {
    const double S = nlohmann::json::parse(src_line).size() + 1.0, T = nlohmann::json::parse(hyp_line).size() + 1.0;
    const double enc = 2 * S * d * 3 * d + 4 * S * S * d + 2 * S * d * d + 4 * S * d * f;
    const double dec = 2 * T * d * 3 * d + 4 * T * T * d + 2 * T * d * d + 2 * T * d * d + 4 * S * d * d + 4 * T * S * d +
                       2 * T * d * d + 4 * T * d * f;
    expected += enc_layers * enc + dec_layers * dec + 2 * T * d * V;
  }
  const double reported = j["output_matmul_gflops"].get<double>() * j["seconds"].get<double>() * 1e9;
  EXPECT_GT(expected, 0);
  EXPECT_NEAR(reported, expected, 1e-6 * expected);
}

// A decoding benchmark's int8 rows are a share of this peak: it must be measured on the kernel
// quantised decoding runs on this CPU, at every size.
TEST(Bench, MatmulAlsoMeasuresTheInt8KernelQuantisedDecodingRuns) {
  auto r = run_command(nmt_binary() + " bench matmul --threads 1");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["int8_kernel"].get<std::string>(), nmt::quant::kernel_name());
  EXPECT_GT(j["int8_peak_gflops"].get<double>(), 0.1);
  ASSERT_EQ(j["int8_by_size"].size(), j["by_size"].size());
  for (const auto& [size, gflops] : j["int8_by_size"].items()) {
    EXPECT_GT(gflops.get<double>(), 0.0) << "size " << size;
    EXPECT_LE(gflops.get<double>(), j["int8_peak_gflops"].get<double>()) << "size " << size;
  }
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
  EXPECT_GT(nlohmann::json::parse(r.out)["peak_gflops"].get<double>(), 0.1);
}
