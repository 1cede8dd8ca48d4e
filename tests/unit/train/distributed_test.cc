// Data-parallel training over c10d (TCPStore + Gloo on loopback): 2 ranks give the weights of
// 1 process accumulating the same batches, resume works with the same world size and is
// refused with another, a rank that dies makes the other fail with one clear line instead of
// hanging, and non-zero ranks never write into --out.
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <filesystem>

#include "nmt/models/model_io.h"
#include "nmt/models/transformer.h"
#include "nmt/tensor/device.h"
#include "nmt/util/error.h"
#include "test_support.h"

namespace fs = std::filesystem;
using nmt::test::fixture;
using nmt::test::run_command;

namespace {

// A TCP port that was free a moment ago (the kernel's pick for port 0).
int free_port() {
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = 0;
  ::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr);
  socklen_t len = sizeof addr;
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len);
  const int port = ntohs(addr.sin_port);
  ::close(fd);
  return port;
}

// Dropout off: each rank draws its own dropout masks, so only dropout-free runs can match a
// single process exactly. A small --max-tokens gives several batches per epoch (an odd number,
// so the last update of an epoch has a batch for rank 0 only).
std::string train_command(const std::string& out, int steps, const std::string& extra, bool quiet = true) {
  return nmt::test::nmt_binary() + " train --preset transformer-tiny --train " + fixture("tiny") + " --valid " +
         fixture("tiny") + " --out " + out + " --max-steps " + std::to_string(steps) +
         " --max-tokens 56 --dropout 0 --attention-dropout 0 --activation-dropout 0 --valid-every 1000 "
         "--valid-bleu false --seed 5 --threads 1 " +
         (quiet ? "-q " : "") + extra;
}

// Runs the two ranks of one job side by side; returns "rc0 rc1" and both stderr streams.
nmt::test::CommandResult run_two_ranks(const std::string& out0, const std::string& out1, int steps,
                                       const std::string& extra = "") {
  const std::string common = " --dist-world-size 2 --dist-port " + std::to_string(free_port()) +
                             " --dist-timeout 30 " + extra;
  const std::string script = "(" + train_command(out0, steps, "--dist-rank 0" + common) + ") & p0=$!; (" +
                             train_command(out1, steps, "--dist-rank 1" + common) + "); r1=$?; wait $p0; r0=$?; " +
                             "echo \"$r0 $r1\"";
  return run_command("bash -c '" + script + "'");
}

std::string checkpoint_weights(int steps) {
  char name[48];
  std::snprintf(name, sizeof name, "checkpoints/step-%08d/model.pt", steps);
  return name;
}

// The largest absolute difference between two runs' weights at the same step.
double max_weight_difference(const std::string& dir_a, const std::string& dir_b, int steps) {
  auto a = nmt::models::load_model(dir_a, checkpoint_weights(steps));
  auto b = nmt::models::load_model(dir_b, checkpoint_weights(steps));
  auto pa = a.model->named_parameters(), pb = b.model->named_parameters();
  EXPECT_EQ(pa.size(), pb.size());
  double worst = 0;
  for (const auto& p : pa) worst = std::max(worst, (p.value() - pb[p.key()]).abs().max().item<double>());
  return worst;
}

TEST(Distributed, TwoRanksMatchOneProcessAccumulatingTheSameBatches) {
  nmt::test::TempDir dir;
  const int steps = 6;
  auto two = run_two_ranks(dir.file("two"), dir.file("rank1-out"), steps);
  ASSERT_EQ(two.out, "0 0\n") << two.err;
  auto one = run_command(train_command(dir.file("one"), steps, "--accum-steps 2"));
  ASSERT_EQ(one.exit_code, 0) << one.err;
  const double difference = max_weight_difference(dir.file("two"), dir.file("one"), steps);
  EXPECT_LE(difference, 1e-5);
  char shown[32];
  std::snprintf(shown, sizeof shown, "%.3g", difference);
  RecordProperty("max_weight_difference", shown);
  // Rank 1 was given its own --out: it must not have written anything there.
  EXPECT_FALSE(fs::exists(dir.file("rank1-out")));
  // Sanity: the comparison can fail (a plain 1-process run sees half the batches per update).
  auto plain = run_command(train_command(dir.file("plain"), steps, ""));
  ASSERT_EQ(plain.exit_code, 0) << plain.err;
  EXPECT_GT(max_weight_difference(dir.file("two"), dir.file("plain"), steps), 1e-4);
}

TEST(Distributed, ResumesWithTheSameWorldSizeAndRefusesAnother) {
  nmt::test::TempDir dir;
  auto straight = run_two_ranks(dir.file("straight"), dir.file("r1"), 6);
  ASSERT_EQ(straight.out, "0 0\n") << straight.err;
  auto first = run_two_ranks(dir.file("resumed"), dir.file("r1"), 3, "--save-every 3");
  ASSERT_EQ(first.out, "0 0\n") << first.err;
  auto second = run_two_ranks(dir.file("resumed"), dir.file("r1"), 6, "--resume");
  ASSERT_EQ(second.out, "0 0\n") << second.err;
  EXPECT_LE(max_weight_difference(dir.file("straight"), dir.file("resumed"), 6), 1e-6);

  // One process cannot continue a 2-process run: the data positions would not line up.
  auto single = run_command(train_command(dir.file("resumed"), 9, "--resume --accum-steps 2"));
  EXPECT_EQ(single.exit_code, 2) << single.err;
  EXPECT_NE(single.err.find("checkpoint made with 2 process(es)"), std::string::npos) << single.err;
}

TEST(Distributed, ARankThatDiesMakesTheOtherFailWithOneClearLine) {
  nmt::test::TempDir dir;
  const std::string common = " --dist-world-size 2 --dist-port " + std::to_string(free_port()) + " --dist-timeout 5";
  // Rank 1 is killed (SIGKILL) once rank 0 reports that training has started; rank 0 must then
  // exit non-zero by itself well within the watchdog's 60 s.
  const std::string rank0 = train_command(dir.file("out0"), 1000000, "--dist-rank 0 --log-every 1" + common, false);
  const std::string rank1 = train_command(dir.file("out1"), 1000000, "--dist-rank 1" + common);
  const std::string script =
      "(" + rank0 + ") 2>" + dir.file("err0") + " & p0=$!; (exec " + rank1 + ") & p1=$!; " +
      "for i in $(seq 600); do grep -q \"model:\" " + dir.file("err0") + " && break; sleep 0.1; done; sleep 1; " +
      "kill -9 $p1; start=$(date +%s); " +
      "for i in $(seq 600); do kill -0 $p0 2>/dev/null || break; sleep 0.1; done; " +
      "if kill -0 $p0 2>/dev/null; then kill -9 $p0; echo hung; fi; wait $p0; echo \"rc=$? after $(( $(date +%s) - start ))s\"";
  const auto started = std::chrono::steady_clock::now();
  auto r = run_command("bash -c '" + script + "'");
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  EXPECT_EQ(r.out.find("hung"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("rc=1 "), std::string::npos) << r.out << nmt::test::slurp(dir.file("err0"));
  EXPECT_LT(seconds, 90);
  const std::string err = nmt::test::slurp(dir.file("err0"));
  const auto line_start = err.find("nmt: error: distributed rank 0 of 2");
  ASSERT_NE(line_start, std::string::npos) << err;
  EXPECT_EQ(err.find('\n', line_start), err.size() - 1) << "the error must be one last line: " << err;
}

TEST(Distributed, BadLauncherVariablesAreUsageErrors) {
  nmt::test::TempDir dir;
  auto r = run_command("WORLD_SIZE=2 RANK=2 " + train_command(dir.file("out"), 1, ""));
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find("RANK"), std::string::npos) << r.err;
  auto bad = run_command("WORLD_SIZE=two " + train_command(dir.file("out"), 1, ""));
  EXPECT_EQ(bad.exit_code, 2) << bad.err;
  EXPECT_NE(bad.err.find("WORLD_SIZE"), std::string::npos) << bad.err;
}

TEST(Devices, FusedAttentionMatchesTheHandWrittenOne) {
  if (!nmt::models::fused_attention_available())
    GTEST_SKIP() << "LibTorch < 2.0 has no scaled_dot_product_attention: only the hand-written attention exists";
  torch::manual_seed(3);
  nmt::models::ScaledDotProductAttention attention;
  attention->eval();
  auto q = torch::randn({2, 4, 5, 8}), k = torch::randn({2, 4, 7, 8}), v = torch::randn({2, 4, 7, 8});
  auto mask = torch::zeros({2, 1, 1, 7});
  mask.index_put_({1, 0, 0, torch::indexing::Slice(4)}, -1e9);
  nmt::models::set_fused_attention(false);
  auto hand = attention->forward(q, k, v, mask);
  nmt::models::set_fused_attention(true);
  auto fused = attention->forward(q, k, v, mask);
  EXPECT_LE((hand - fused).abs().max().item<double>(), 1e-5);
}

TEST(Devices, DeviceOptionIsCheckedWithOneClearLine) {
  EXPECT_EQ(nmt::resolve_device("cpu"), torch::Device(torch::kCPU));
  nmt::test::expect_error<nmt::UsageError>([] { nmt::resolve_device("gpu"); }, {"--device 'gpu'", "cpu, cuda or cuda:N"});
  if (!torch::cuda::is_available()) {
    EXPECT_EQ(nmt::resolve_device(""), torch::Device(torch::kCPU));
    nmt::test::expect_error<nmt::UsageError>([] { nmt::resolve_device("cuda:0"); }, {"--device cuda:0", "no GPU"});
  }
}

}  // namespace
