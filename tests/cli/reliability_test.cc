// Reliability under a full disk, hostile files and concurrent runs (issue 20): every case
// either does its job or fails with one line on stderr and the documented exit code, never
// aborts, never leaves a temporary file, never empties or replaces a good file with a bad one.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

#include <nlohmann/json.hpp>
#include <torch/torch.h>

#include "nmt/models/model.h"
#include "nmt/models/model_io.h"
#include "nmt/train/checkpoint.h"
#include "nmt/util/error.h"
#include "nmt/util/io.h"
#include "nmt/util/lock.h"
#include "test_support.h"

namespace fs = std::filesystem;
using nmt::test::fixture;
using nmt::test::run_command;
using nmt::test::slurp;
using nmt::test::write_bytes;
using nmt::test::lines_of;

namespace {

std::string nmt_cmd(const std::string& args) { return nmt::test::nmt_binary() + " " + args; }

std::string train_args(const std::string& out) {
  return "train --preset transformer-tiny --train " + fixture("tiny") + " --valid " + fixture("tiny") + " --out " + out +
         " --max-steps 30 --save-every 10 --valid-bleu false -q --threads 1";
}

// stderr holds exactly one line, an nmt error.
void expect_one_error_line(const nmt::test::CommandResult& r) {
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  EXPECT_EQ(r.err.rfind("nmt: ", 0), 0u) << r.err;
}

// Files under `dir` (recursively) whose name ends in .tmp or starts with ".tmp".
std::vector<std::string> temporary_files(const std::string& dir) {
  std::vector<std::string> found;
  std::error_code ec;
  for (auto it = fs::recursive_directory_iterator(dir, ec); it != fs::recursive_directory_iterator(); it.increment(ec)) {
    const std::string name = it->path().filename().string();
    if ((name.size() > 4 && name.compare(name.size() - 4, 4, ".tmp") == 0) || name.rfind(".tmp", 0) == 0)
      found.push_back(it->path().string());
  }
  return found;
}

// Runs `command` with a file-size limit of `kib` KiB and SIGXFSZ ignored: every write past the
// limit fails with EFBIG, as on a full disk (ENOSPC), through the same code paths. Needs no
// root and no mount, unlike a small tmpfs.
std::string with_file_size_limit(int kib, const std::string& command) {
  return "bash -c 'trap \"\" XFSZ; ulimit -f " + std::to_string(kib) + "; exec " + command + "'";
}

class Reliability : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new nmt::test::TempDir("nmt-reliability");
    auto r = nmt::test::run_once_per_ctest([](const std::string& out) { return nmt_cmd(train_args(out)); }, model());
    ASSERT_EQ(r.exit_code, 0) << r.err;
  }
  static void TearDownTestSuite() { delete dir_; }
  static std::string model() { return dir_->file("model"); }
  // A copy of the trained run to damage.
  static std::string copy_of_model(const std::string& name) {
    const std::string to = dir_->file(name);
    fs::remove_all(to);
    fs::copy(model(), to, fs::copy_options::recursive);
    fs::remove(to + "/.lock");
    return to;
  }
  static std::string translate(const std::string& args, const std::string& m = "") {
    return nmt_cmd("translate -m " + (m.empty() ? model() : m) + " -q " + args);
  }
  static nmt::test::TempDir* dir_;
};
nmt::test::TempDir* Reliability::dir_ = nullptr;

bool have_dev_full() {
  struct stat st {};
  return ::stat("/dev/full", &st) == 0 && S_ISCHR(st.st_mode);
}

// ------------------------------------------------------------------------- 1. full disk

TEST_F(Reliability, TrainingOnAFullDiskFailsInOneLineWithoutTemporaryFiles) {
  // A limit just above spm.model (the largest file written before training) and a model wide
  // enough that its weights exceed it: saving them through LibTorch's serialiser, which used to
  // abort from a destructor (exit 134), is what fails.
  const int kib = static_cast<int>(fs::file_size(model() + "/spm.model") / 1024 + 8);
  const std::string out = dir_->file("full-train");
  auto r = run_command(with_file_size_limit(kib, nmt_cmd(train_args(out) + " --d-model 128 --ffn 256")));
  EXPECT_EQ(r.exit_code, 1) << r.err;  // not 134 (SIGABRT)
  expect_one_error_line(r);
  EXPECT_NE(r.err.find("model.safetensors: cannot write: File too large"), std::string::npos) << r.err;
  EXPECT_EQ(temporary_files(out), std::vector<std::string>{});
  EXPECT_FALSE(fs::exists(out + "/model.pt"));
}

TEST_F(Reliability, AveragingOnAFullDiskLeavesNoHalfDirectory) {
  const std::string parent = dir_->file("full-average");
  fs::create_directories(parent);
  const int kib = static_cast<int>(fs::file_size(model() + "/model.pt") / 2048);
  auto r = run_command(with_file_size_limit(kib, nmt_cmd("average " + model() + " --last 2 -o " + parent + "/avg")));
  EXPECT_EQ(r.exit_code, 1) << r.err;
  expect_one_error_line(r);
  EXPECT_NE(r.err.find("model.safetensors: cannot write: File too large"), std::string::npos) << r.err;
  EXPECT_TRUE(fs::is_empty(parent)) << "no avg/, no hidden temporary directory";
  // Without the limit it works, and the result loads.
  auto ok = run_command(nmt_cmd("average " + model() + " --last 2 -o " + parent + "/avg"));
  ASSERT_EQ(ok.exit_code, 0) << ok.err;
  EXPECT_EQ(run_command("echo 'A dog.' | " + translate("", parent + "/avg")).exit_code, 0);
}

TEST_F(Reliability, TranslateOutputOnAFullDiskKeepsTheOldFile) {
  std::string input;
  for (int i = 0; i < 300; ++i) input += "A man is walking with his dog in the park.\n";
  write_bytes(dir_->file("many.txt"), input);
  write_bytes(dir_->file("old.txt"), "the old translation\n");
  auto r = run_command(with_file_size_limit(1, translate("--input " + dir_->file("many.txt") + " --output " + dir_->file("old.txt"))));
  EXPECT_EQ(r.exit_code, 1) << r.err;
  expect_one_error_line(r);
  EXPECT_EQ(slurp(dir_->file("old.txt")), "the old translation\n");
  EXPECT_TRUE(temporary_files(dir_->path()).empty());
}

// ------------------------------------------------------------------------- 2. write errors

TEST_F(Reliability, EveryOutputToAFullDeviceIsAnError) {
  if (!have_dev_full()) GTEST_SKIP() << "no /dev/full";
  write_bytes(dir_->file("ref.txt"), "Un chien court.\n");
  write_bytes(dir_->file("src.txt"), "A dog runs.\n");
  const std::vector<std::string> commands = {
      "echo 'A dog runs.' | " + translate("--output /dev/full"),
      "echo 'A dog runs.' | " + translate("") + " > /dev/full",
      "echo 'A dog runs.' | " + translate("--beam 2 --nbest 2") + " > /dev/full",
      "echo 'A dog runs.' | " + translate("--attention /dev/full"),
      nmt_cmd("eval -m " + model() + " -q --no-record --src " + dir_->file("src.txt") + " --ref " + dir_->file("ref.txt")) +
          " > /dev/full",
      nmt_cmd("eval -m " + model() + " -q --no-record --src " + dir_->file("src.txt") + " --ref " + dir_->file("ref.txt") +
              " --save-hyp /dev/full"),
      nmt_cmd("bleu -r " + dir_->file("ref.txt") + " " + dir_->file("ref.txt")) + " > /dev/full",
      nmt_cmd("attention -m " + model() + " -q --text 'A dog runs.'") + " > /dev/full",
      nmt_cmd("attention -m " + model() + " -q -o /dev/full 'A dog runs.'") + " > /dev/null",
      nmt_cmd("plot " + model() + " -o /dev/full"),
  };
  for (const auto& c : commands) {
    auto r = run_command(c);
    EXPECT_EQ(r.exit_code, 1) << c << "\n" << r.err;
    expect_one_error_line(r);
    EXPECT_NE(r.err.find("No space left on device"), std::string::npos) << c << "\n" << r.err;
  }
}

// ------------------------------------------------------------------------- 3. special files, symlinks

TEST_F(Reliability, OutputsAreWrittenThroughSymlinksAndFifos) {
  write_bytes(dir_->file("target.svg"), "old");
  fs::remove(dir_->file("link.svg"));
  fs::create_symlink(dir_->file("target.svg"), dir_->file("link.svg"));
  auto r = run_command(nmt_cmd("plot " + model() + " -o " + dir_->file("link.svg")));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(fs::is_symlink(dir_->file("link.svg"))) << "the link stays a link";
  EXPECT_NE(slurp(dir_->file("target.svg")).find("<svg"), std::string::npos) << "its target holds the plot";

  const std::string fifo = dir_->file("plot.fifo");
  fs::remove(fifo);
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  auto through = run_command("cat " + fifo + " > " + dir_->file("from-fifo.svg") + " & " +
                             nmt_cmd("plot " + model() + " -o " + fifo) + "; wait");
  EXPECT_EQ(through.exit_code, 0) << through.err;
  struct stat st {};
  ASSERT_EQ(::lstat(fifo.c_str(), &st), 0);
  EXPECT_TRUE(S_ISFIFO(st.st_mode)) << "the FIFO is not replaced by a regular file";
  EXPECT_NE(slurp(dir_->file("from-fifo.svg")).find("<svg"), std::string::npos);

  auto null = run_command(nmt_cmd("plot " + model() + " -o /dev/null"));
  EXPECT_EQ(null.exit_code, 0) << null.err;
  ASSERT_EQ(::stat("/dev/null", &st), 0);
  EXPECT_TRUE(S_ISCHR(st.st_mode));
}

// ------------------------------------------------------------------------- 4. output kept until the input is good

TEST_F(Reliability, RefusedTranslationsLeaveTheOutputFileUntouched) {
  const std::string out = dir_->file("keep.txt");
  write_bytes(dir_->file("bad-utf8.txt"), "A dog runs.\nTwo cats.\nbad \xC3\x28 byte\n");
  write_bytes(dir_->file("good.txt"), "A dog runs.\n");
  const std::vector<std::pair<std::string, int>> cases = {
      {"--input " + dir_->file("bad-utf8.txt"), 1},
      {"--input /nonexistent/in.txt", 1},
      {"--input " + dir_->file("good.txt") + " --beam 1 --nbest 2", 2},
      {"--input " + dir_->file("good.txt") + " --sampling top-k:3 --beam 3 --attention " + dir_->file("att.jsonl"), 2},
      {"--input " + dir_->file("good.txt") + " --max-len-a nan", 2},
      {"--input " + dir_->file("good.txt") + " --attention-layer 7", 2},
  };
  for (const auto& [args, code] : cases) {
    write_bytes(out, "keep me\n");
    auto r = run_command(translate(args + " --output " + out));
    EXPECT_EQ(r.exit_code, code) << args << "\n" << r.err;
    expect_one_error_line(r);
    EXPECT_EQ(slurp(out), "keep me\n") << args;
  }
  EXPECT_FALSE(fs::exists(dir_->file("att.jsonl")));
}

TEST_F(Reliability, InputAndOutputBeingTheSameFileIsRefused) {
  const std::string f = dir_->file("same.txt");
  write_bytes(f, "A dog runs.\n");
  fs::remove(dir_->file("same-link.txt"));
  fs::create_symlink(f, dir_->file("same-link.txt"));
  for (const std::string& output : std::vector<std::string>{f, dir_->file("same-link.txt")}) {
    auto r = run_command(translate("--input " + f + " --output " + output));
    EXPECT_EQ(r.exit_code, 2) << r.err;
    expect_one_error_line(r);
    EXPECT_EQ(slurp(f), "A dog runs.\n");
  }
}

TEST_F(Reliability, InvalidUtf8InAnInputFileWritesTheLinesBeforeItToStdout) {
  write_bytes(dir_->file("bad3.txt"), "A dog runs.\nTwo cats.\nbad \xC3\x28 byte\nnever reached\n");
  auto r = run_command(translate("--input " + dir_->file("bad3.txt")));
  EXPECT_EQ(r.exit_code, 1);
  expect_one_error_line(r);
  EXPECT_NE(r.err.find(dir_->file("bad3.txt") + ":3: not valid UTF-8"), std::string::npos) << r.err;
  EXPECT_EQ(lines_of(r.out).size(), 2u) << r.out;
}

// ------------------------------------------------------------------------- 5. run directories

TEST_F(Reliability, ADirectoryInUseIsRefusedAtOnceAndAStaleLockIsNot) {
  const std::string out = dir_->file("locked");
  fs::create_directories(out);
  {
    nmt::DirectoryLock held(out);  // this test process plays the other nmt train
    const auto start = std::chrono::steady_clock::now();
    auto r = run_command(nmt_cmd(train_args(out)));
    const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    EXPECT_EQ(r.exit_code, 1) << r.err;
    expect_one_error_line(r);
    EXPECT_NE(r.err.find("in use by another nmt process (pid " + std::to_string(::getpid()) + ")"), std::string::npos) << r.err;
    EXPECT_LT(secs, 20) << "refused before any work";
    EXPECT_FALSE(fs::exists(out + "/spm.model"));
  }
  // The lock file left behind names a process that no longer holds it: not an owner.
  write_bytes(out + "/.lock", "999999\n");
  auto r = run_command(nmt_cmd(train_args(out)));
  EXPECT_EQ(r.exit_code, 0) << r.err;
}

// The lock file is there while a run holds the directory, not after: a finished run's folder
// holds what it wrote and nothing of the lock.
TEST_F(Reliability, ARunsLockFileIsGoneWhenTrainingEnds) {
  EXPECT_TRUE(fs::exists(model() + "/config.json"));
  EXPECT_FALSE(fs::exists(model() + "/.lock"));
}

// A training that fails before its first checkpoint leaves no --out folder behind that it
// made; a folder the user made stays.
TEST_F(Reliability, ATrainingThatFailsBeforeItsFirstCheckpointRemovesTheFolderItMade) {
  std::string command = train_args(dir_->file("never/run"));
  const std::string valid = " --valid " + fixture("tiny");
  const std::string with_empty_valid = command.replace(command.find(valid), valid.size(), " --valid " + dir_->file("empty"));
  write_bytes(dir_->file("empty.en"), "");
  write_bytes(dir_->file("empty.fr"), "");
  auto r = run_command(nmt_cmd(with_empty_valid));
  EXPECT_EQ(r.exit_code, 1) << r.err;
  expect_one_error_line(r);
  EXPECT_NE(r.err.find("validation corpus is empty"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(dir_->file("never/run"))) << "the --out it created is removed";

  fs::create_directories(dir_->file("mine"));
  std::string in_mine = train_args(dir_->file("mine"));
  in_mine.replace(in_mine.find(valid), valid.size(), " --valid " + dir_->file("empty"));
  r = run_command(nmt_cmd(in_mine));
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_TRUE(fs::is_directory(dir_->file("mine"))) << "a folder the user made is kept";
  EXPECT_FALSE(fs::exists(dir_->file("mine/.lock")));
}

TEST_F(Reliability, TwoTrainingRunsOnOneDirectoryAtOnceCannotBothRun) {
  const std::string out = dir_->file("race");
  // The second starts once the first holds the directory (its lock file names it). The first
  // trains 300 steps, not 30: on a loaded machine a 30-step run ended before the second had
  // started (its check saw a finished run with other options, exit 2, not the lock).
  auto r = run_command("(" + nmt_cmd(train_args(out) + " --seed 1 --max-steps 300") + "; echo first=$? >&2) & while [ ! -s " + out +
                       "/.lock ]; do sleep 0.02; done; " + nmt_cmd(train_args(out) + " --seed 2") +
                       "; echo second=$? >&2; wait");
  EXPECT_NE(r.err.find("first=0"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("second=1"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("in use by another nmt process"), std::string::npos) << r.err;
  EXPECT_NE(slurp(out + "/config.json").find("\"seed\": 1"), std::string::npos);
}

TEST_F(Reliability, AModelOptionCannotChangeOnAFinishedRun) {
  const std::string run = copy_of_model("heads");
  const std::string config = slurp(run + "/config.json");
  for (const std::string& extra : std::vector<std::string>{" --heads 4", " --resume --heads 4", " --ffn 48"}) {
    auto r = run_command(nmt_cmd(train_args(run) + extra));
    EXPECT_EQ(r.exit_code, 2) << extra << "\n" << r.err;
    expect_one_error_line(r);
    EXPECT_NE(r.err.find(extra.substr(extra.rfind("--") + 2, extra.rfind(' ') - extra.rfind("--") - 2)), std::string::npos) << r.err;
    EXPECT_EQ(slurp(run + "/config.json"), config) << "config.json still describes the weights";
  }
}

TEST_F(Reliability, AFinishedRunWithoutCheckpointsIsNotTrainedOver) {
  const std::string run = copy_of_model("no-checkpoints");
  fs::remove_all(run + "/checkpoints");
  const std::string weights = slurp(run + "/model.pt");
  auto r = run_command(nmt_cmd(train_args(run)));
  EXPECT_EQ(r.exit_code, 2) << r.err;
  expect_one_error_line(r);
  EXPECT_NE(r.err.find("model.pt"), std::string::npos) << r.err;
  EXPECT_EQ(slurp(run + "/model.pt"), weights);
}

TEST_F(Reliability, AForeignDirectoryIsNotDeleted) {
  const std::string out = dir_->file("foreign");
  fs::create_directories(out + "/checkpoints/mine");
  write_bytes(out + "/checkpoints/mine/data.bin", "precious");
  write_bytes(out + "/metrics.jsonl", "{\"mine\": 1}\n");
  auto r = run_command(nmt_cmd(train_args(out)));
  EXPECT_EQ(r.exit_code, 2) << r.err;
  expect_one_error_line(r);
  EXPECT_EQ(slurp(out + "/checkpoints/mine/data.bin"), "precious");
  EXPECT_EQ(slurp(out + "/metrics.jsonl"), "{\"mine\": 1}\n");
}

// ------------------------------------------------------------------------- 6. non-finite values

TEST_F(Reliability, BadTrainingOptionsAreOneLineUsageErrorsBeforeAnyWork) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"--lr nan", "--lr"},           {"--lr -1", "--lr"},           {"--dropout 1.5", "--dropout"},
      {"--weight-decay nan", "--weight-decay"}, {"--max-time nan", "--max-time"}, {"--max-time inf", "--max-time"},
      {"--label-smoothing 1", "--label-smoothing"}, {"--ffn 0", "--ffn"}, {"--encoder-layers 0", "--encoder-layers"},
      {"--d-model 1000000", "--d-model"}, {"--vocab-size 2000000", "--vocab-size"}, {"--max-tokens 0", "--max-tokens"},
      {"--heads 5", "--heads"},       {"--valid-beam 100000", "--valid-beam"},
  };
  for (const auto& [args, flag] : cases) {
    const std::string out = dir_->file("bad-options");
    fs::remove_all(out);
    auto r = run_command(nmt_cmd(train_args(out) + " " + args));
    EXPECT_EQ(r.exit_code, 2) << args << "\n" << r.err;
    expect_one_error_line(r);
    EXPECT_NE(r.err.find(flag), std::string::npos) << args << "\n" << r.err;
    EXPECT_FALSE(fs::exists(out + "/spm.model")) << args << ": refused before SentencePiece training";
  }
}

TEST_F(Reliability, BadDecodingOptionsAreOneLineUsageErrors) {
  for (const std::string& args : std::vector<std::string>{"--max-len-a -1", "--max-len-a nan", "--max-len-a inf", "--alpha nan", "--beam 100000",
                                  "--attention-layer 9", "--attention-layer -2", "--attention-head 9"}) {
    auto r = run_command("echo 'A dog.' | " + translate(args));
    EXPECT_EQ(r.exit_code, 2) << args << "\n" << r.err;
    expect_one_error_line(r);
    EXPECT_EQ(r.out, "") << args;
  }
  auto r = run_command(nmt_cmd("attention -m " + model() + " --head 9 'A dog.'"));
  EXPECT_EQ(r.exit_code, 2) << r.err;
  expect_one_error_line(r);
}

TEST_F(Reliability, DivergedTrainingStopsWithAnErrorAndSavesNoNanModel) {
  // --lr 1e30: the first update leaves the weights finite but huge, so the validation right
  // after it gives a NaN loss (it used to be logged as a "new best" and saved as model.pt).
  const std::string out = dir_->file("diverged");
  auto r = run_command(nmt_cmd(train_args(out) + " --lr 1e30 --warmup 0 --valid-every 1"));
  EXPECT_EQ(r.exit_code, 1) << r.err;
  expect_one_error_line(r);
  // NaN, or inf where the overflow stops short of inf - inf: either way the run stops here.
  const bool non_finite = r.err.find("validation at step 1: the loss is nan;") != std::string::npos ||
                          r.err.find("validation at step 1: the loss is inf;") != std::string::npos;
  EXPECT_TRUE(non_finite) << r.err;
  EXPECT_EQ(r.err.find("-nan"), std::string::npos) << "NaN is shown as nan whatever its sign bit\n" << r.err;
  EXPECT_FALSE(fs::exists(out + "/model.pt"));
  EXPECT_EQ(slurp(out + "/metrics.jsonl").find("null"), std::string::npos) << "no NaN (null) recorded";
  // Validating less often, the skipped non-finite updates stop it first, as before.
  const std::string later = dir_->file("diverged-later");
  auto s = run_command(nmt_cmd(train_args(later) + " --lr 1e30 --warmup 0 --valid-every 5"));
  EXPECT_EQ(s.exit_code, 1) << s.err;
  expect_one_error_line(s);
  EXPECT_FALSE(fs::exists(later + "/model.pt"));
}

TEST_F(Reliability, CorruptedWeightsAreRefusedByTheirChecksum) {
  // Each weights file is refused by the path that reads it: model.safetensors by the CPU engine
  // (the default), model.pt by LibTorch's (--engine torch).
  for (const auto& [file, flags] : {std::pair{"model.safetensors", ""}, std::pair{"model.pt", "--engine torch"}}) {
    const std::string run = copy_of_model(std::string("patched-") + file);
    std::string bytes = slurp(run + "/" + file);
    // NaN bytes in the middle of the largest tensor's data (both store tensors uncompressed).
    for (size_t i = 0; i < 4; ++i) bytes[bytes.size() / 2 + i] = '\xFF';
    write_bytes(run + "/" + file, bytes);
    auto r = run_command("echo 'A dog.' | " + translate(flags, run));
    EXPECT_EQ(r.exit_code, 1) << r.err;
    expect_one_error_line(r);
    EXPECT_NE(r.err.find(run + "/" + file), std::string::npos) << r.err;
    EXPECT_EQ(r.out, "");
  }
}

// A weights file as LibTorch writes it, without nmt's checksum (files from before checksums).
void save_plain(torch::nn::Module& m, const std::string& path) {
  torch::serialize::OutputArchive archive;
  m.save(archive);
  archive.save_to(path);
}

TEST_F(Reliability, NonFiniteWeightsAreRefusedWhenLoadedAndWhenAveraged) {
  auto loaded = nmt::models::load_model(model());
  {
    torch::NoGradGuard no_grad;
    loaded.model->parameters().front().view(-1)[0] = std::numeric_limits<float>::quiet_NaN();
  }
  nmt::test::expect_error<nmt::RuntimeError>(
      [&] { nmt::models::save_weights(*loaded.model, dir_->file("nan.pt")); }, {"refusing to save", "non-finite"});
  EXPECT_FALSE(fs::exists(dir_->file("nan.pt")));
  save_plain(*loaded.model, dir_->file("nan.pt"));
  auto fresh = nmt::models::make_model(loaded.model_config);
  nmt::test::expect_error<nmt::RuntimeError>([&] { nmt::models::load_weights(*fresh, dir_->file("nan.pt")); },
                                             {dir_->file("nan.pt"), "non-finite"});
  // An infinity in the last value of the last parameter is found as well (the check reads every
  // value of every parameter, not only the first).
  auto clean = nmt::models::load_model(model());
  {
    torch::NoGradGuard no_grad;
    clean.model->parameters().back().view(-1)[-1] = -std::numeric_limits<float>::infinity();
  }
  save_plain(*clean.model, dir_->file("inf.pt"));
  auto second = nmt::models::make_model(loaded.model_config);
  nmt::test::expect_error<nmt::RuntimeError>([&] { nmt::models::load_weights(*second, dir_->file("inf.pt")); },
                                             {dir_->file("inf.pt"), "non-finite"});

  // The same NaN weights as a checkpoint with a valid manifest: `nmt average` refuses them.
  const std::string run = copy_of_model("nan-checkpoint");
  const auto checkpoints = nmt::train::CheckpointManager(run, 0).list();
  ASSERT_GE(checkpoints.size(), 2u);
  const fs::path last = checkpoints.back();
  save_plain(*loaded.model, (last / "model.pt").string());
  auto manifest = nlohmann::json::parse(slurp((last / "manifest.json").string()));
  manifest["files"]["model.pt"] = nmt::train::file_checksum(last / "model.pt");
  write_bytes((last / "manifest.json").string(), manifest.dump());
  auto r = run_command(nmt_cmd("average " + run + " --last 2 -o " + dir_->file("nan-avg")));
  EXPECT_EQ(r.exit_code, 1) << r.err;
  expect_one_error_line(r);
  EXPECT_NE(r.err.find("non-finite"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(dir_->file("nan-avg")));
}

TEST_F(Reliability, WeightsWithoutAChecksumFromOlderVersionsStillLoad) {
  auto loaded = nmt::models::load_model(model());
  save_plain(*loaded.model, dir_->file("old.pt"));
  auto fresh = nmt::models::make_model(loaded.model_config);
  EXPECT_NO_THROW(nmt::models::load_weights(*fresh, dir_->file("old.pt")));
}

// ------------------------------------------------------------------------- 7. n-best

TEST_F(Reliability, NBestHypothesesAreDistinct) {
  for (const std::string& limit : std::vector<std::string>{"--max-len-a 0 --max-len-b 3", ""}) {
    auto r = run_command("echo 'A man is walking.' | " + translate("--beam 4 --nbest 4 " + limit));
    ASSERT_EQ(r.exit_code, 0) << r.err;
    const auto lines = lines_of(r.out);
    EXPECT_EQ(lines.size(), 4u) << limit << "\n" << r.out;
    std::set<std::string> texts;
    for (const auto& l : lines) texts.insert(l.substr(0, l.rfind(" ||| ")));
    EXPECT_EQ(texts.size(), lines.size()) << "a hypothesis listed twice (" << limit << "):\n" << r.out;
  }
}

// ------------------------------------------------------------------------- 8. one clear line

TEST_F(Reliability, AbsurdConfigValuesAreRefusedNamingTheFileAndKey) {
  const std::string run = copy_of_model("absurd");
  const auto original = nlohmann::json::parse(slurp(run + "/config.json"));
  const std::vector<std::pair<std::string, nlohmann::json>> cases = {
      {"ffn", 0}, {"ffn", -1}, {"max_positions", 0}, {"max_positions", -1}, {"max_positions", 1e12},
      {"d_model", 4294967328LL}, {"d_model", 1e300}, {"encoder_layers", 100000}, {"decoder_layers", 100000},
      {"encoder_layers", 0}, {"encoder_layers", -1}, {"heads", "four"}, {"dropout", 2.0}, {"d_model", 32.5},
  };
  for (const auto& [key, value] : cases) {
    auto config = original;
    config["model"][key] = value;
    write_bytes(run + "/config.json", config.dump(2));
    auto r = run_command("echo 'A dog.' | " + translate("", run));
    EXPECT_EQ(r.exit_code, 1) << key << "=" << value.dump() << "\n" << r.err;
    expect_one_error_line(r);
    EXPECT_NE(r.err.find(run + "/config.json"), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("'" + key + "'"), std::string::npos) << r.err;
  }
  // The GRU's sizes too.
  auto config = original;
  config["model"]["type"] = "gru";
  config["model"]["hidden"] = 0;
  write_bytes(run + "/config.json", config.dump(2));
  auto r = run_command("echo 'A dog.' | " + translate("", run));
  EXPECT_EQ(r.exit_code, 1) << r.err;
  expect_one_error_line(r);
  EXPECT_NE(r.err.find("'hidden'"), std::string::npos) << r.err;
}

TEST_F(Reliability, ManifestAndMetricsOfTheWrongTypesNameTheFile) {
  const std::string run = copy_of_model("wrong-types");
  const fs::path last = nmt::train::CheckpointManager(run, 0).list().back();
  const std::string manifest = (last / "manifest.json").string();
  auto j = nlohmann::json::parse(slurp(manifest));
  for (const auto& [key, value] : std::vector<std::pair<std::string, nlohmann::json>>{
           {"format", "one"}, {"files", 3}, {"step", 1e300}, {"model_type", nullptr}}) {
    auto bad = j;
    bad[key] = value;
    write_bytes(manifest, bad.dump());
    auto r = run_command(nmt_cmd("average " + run + " --last 1 -o " + dir_->file("wt-avg")));
    EXPECT_EQ(r.exit_code, 1) << key << "\n" << r.err;
    expect_one_error_line(r);
    EXPECT_NE(r.err.find(manifest), std::string::npos) << r.err;
  }
  for (const std::string& line : std::vector<std::string>{"{\"event\": \"train\", \"step\": \"ten\"}", "{\"event\": 3}",
                                  "{\"event\": \"valid\", \"step\": 1e300, \"val_loss\": 1}",
                                  "{\"event\": \"train\", \"step\": 1, \"tokens_per_s\": null}"}) {
    write_bytes(run + "/metrics.jsonl", line + "\n");
    for (const std::string& cmd : std::vector<std::string>{"plot " + run + " -o " + dir_->file("wt.svg"), "report " + run + " -o " + dir_->file("wt.html")}) {
      auto r = run_command(nmt_cmd(cmd));
      EXPECT_EQ(r.exit_code, 1) << line << "\n" << r.err;
      expect_one_error_line(r);
      EXPECT_NE(r.err.find(run + "/metrics.jsonl:1"), std::string::npos) << r.err;
    }
  }
}

TEST_F(Reliability, MismatchedTrainingCorpusAndUsageErrorsExit2InOneLine) {
  write_bytes(dir_->file("mis.en"), "a\nb\nc\n");
  write_bytes(dir_->file("mis.fr"), "x\ny\n");
  auto r = run_command(nmt_cmd("train --preset transformer-tiny --train " + dir_->file("mis") + " --valid " +
                               fixture("tiny") + " --out " + dir_->file("mis-out") + " -q"));
  EXPECT_EQ(r.exit_code, 2) << r.err;
  expect_one_error_line(r);
  for (const std::string& args : std::vector<std::string>{"translate --no-such-option", "train", "bleu", "translate -m"}) {
    auto u = run_command(nmt_cmd(args));
    EXPECT_EQ(u.exit_code, 2) << args << "\n" << u.err;
    expect_one_error_line(u);
  }
}

TEST_F(Reliability, AnEmptyValueInAConfigFileIsAUsageError) {
  // Found by fuzz_config: CLI11 2.1 dereferences an empty vector for `key = []` (SIGSEGV).
  for (const std::string& toml : std::vector<std::string>{"[train]\nmax-steps = []\n", "[translate]\nbeam = []\n", "[translate]\nquiet = []\n"}) {
    write_bytes(dir_->file("empty.toml"), toml);
    auto r = run_command("echo 'A dog.' | " + nmt_cmd("--config " + dir_->file("empty.toml") +
                                                      (toml.find("train]") != std::string::npos
                                                           ? " train --preset transformer-tiny --out " + dir_->file("never")
                                                           : " translate -m " + model())));
    EXPECT_EQ(r.exit_code, 2) << toml << "\n" << r.err;
    expect_one_error_line(r);
    EXPECT_NE(r.err.find("no value in the --config file"), std::string::npos) << r.err;
  }
}

// ------------------------------------------------------------------------- 9. bounds

TEST_F(Reliability, ModelFilesThatAreNotSmallRegularFilesAreRefused) {
  for (const std::string& file : std::vector<std::string>{"config.json", "spm.model"}) {
    const std::string run = copy_of_model("fifo-" + file);
    fs::remove(run + "/" + file);
    ASSERT_EQ(::mkfifo((run + "/" + file).c_str(), 0600), 0);
    auto r = run_command("echo 'A dog.' | timeout 60 " + translate("", run));
    EXPECT_EQ(r.exit_code, 1) << file << "\n" << r.err;  // 124 would be a hang
    expect_one_error_line(r);
    EXPECT_NE(r.err.find(run + "/" + file + ": not a regular file"), std::string::npos) << r.err;

    fs::remove(run + "/" + file);
    { std::ofstream(run + "/" + file); }
    fs::resize_file(run + "/" + file, uintmax_t{1} << 30);  // sparse: a gigabyte of nothing
    auto big = run_command("echo 'A dog.' | timeout 60 " + translate("", run));
    EXPECT_EQ(big.exit_code, 1) << file << "\n" << big.err;
    expect_one_error_line(big);
    EXPECT_NE(big.err.find("more than the"), std::string::npos) << big.err;
  }
}

}  // namespace
