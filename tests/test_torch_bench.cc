// `nmt bench`, the measurements behind scripts/bench.sh: the JSON it prints must describe the
// batches it dumped for the PyTorch reference, and translation must be timed on real output.
#include <cmath>
#include <filesystem>
#include <fstream>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

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

TEST(Bench, TranslateCountsSentencesAndDumpsIds) {
  nmt::test::TempDir t;
  ASSERT_EQ(run_command(nmt_binary() + " bench init --preset transformer-tiny --train " + fixture("tiny") + " --out " +
                        t.file("m"))
                .exit_code,
            0);
  auto r = run_command(nmt_binary() + " bench translate -m " + t.file("m") + " --src " + fixture("tiny.en") +
                       " --batch-size 3 --threads 1 --dump-ids " + t.file("ids.jsonl") + " --dump-hyp-ids " + t.file("hyp.jsonl"));
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
