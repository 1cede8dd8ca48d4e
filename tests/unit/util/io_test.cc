// The output writer and the small-file reader: what must hold whatever is at the path.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <sys/syscall.h>
#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <filesystem>
#include <functional>
#include <fstream>
#include <thread>

#include "nmt/util/error.h"
#include "nmt/util/io.h"
#include "nmt/util/lock.h"
#include "test_support.h"

namespace fs = std::filesystem;
using nmt::OutputFile;
using nmt::RuntimeError;
using nmt::test::expect_error;
using nmt::test::slurp;
using nmt::test::TempDir;
using nmt::test::write_bytes;

namespace {

// The RuntimeError `write` throws in a child process under a file size limit of `bytes`
// (SIGXFSZ ignored, so a write past it fails with EFBIG, as on a full disk); "" when it throws
// none. In a child, so that the limit never reaches the rest of the suite.
std::string error_under_file_size_limit(rlim_t bytes, const std::function<void()>& write) {
  int pipe_fds[2];
  if (::pipe(pipe_fds) != 0) return "pipe failed";
  const pid_t pid = fork();
  if (pid == 0) {
    ::close(pipe_fds[0]);
    ::signal(SIGXFSZ, SIG_IGN);
    struct rlimit limit {bytes, bytes};
    ::setrlimit(RLIMIT_FSIZE, &limit);
    std::string message;
    try {
      write();
    } catch (const RuntimeError& e) {
      message = e.what();
    }
    const bool sent = ::write(pipe_fds[1], message.data(), message.size()) == static_cast<ssize_t>(message.size());
    _exit(sent ? 0 : 1);
  }
  ::close(pipe_fds[1]);
  std::string message;
  char buffer[512];
  for (ssize_t n; (n = ::read(pipe_fds[0], buffer, sizeof buffer)) > 0;) message.append(buffer, static_cast<size_t>(n));
  ::close(pipe_fds[0]);
  int status = 0;
  ::waitpid(pid, &status, 0);
  return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? message : "the child failed";
}

size_t entries(const std::string& dir) {
  return static_cast<size_t>(std::distance(fs::directory_iterator(dir), fs::directory_iterator()));
}

TEST(OutputFile, ReplacesARegularFileOnlyOnCommit) {
  TempDir dir;
  const std::string f = dir.file("out.txt");
  write_bytes(f, "old");
  {
    OutputFile out(f);
    out.write("new content");
    out.flush();
    EXPECT_EQ(slurp(f), "old") << "not visible before commit";
  }  // destroyed without commit: an error path
  EXPECT_EQ(slurp(f), "old");
  EXPECT_EQ(entries(dir.path()), 1u) << "no temporary file left";
  nmt::write_file_atomic(f, "new");
  EXPECT_EQ(slurp(f), "new");
  EXPECT_EQ(entries(dir.path()), 1u);
}

TEST(OutputFile, KeepsTheModeOfTheFileItReplaces) {
  TempDir dir;
  const std::string f = dir.file("script.sh");
  write_bytes(f, "old");
  ::chmod(f.c_str(), 0751);
  nmt::write_file_atomic(f, "new");
  struct stat st {};
  ASSERT_EQ(::stat(f.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 0751u);
}

TEST(OutputFile, WritesThroughASymlinkToItsTarget) {
  TempDir dir;
  fs::create_directories(dir.file("real"));
  write_bytes(dir.file("real/target.txt"), "old");
  fs::create_symlink("real/target.txt", dir.file("link.txt"));  // relative, as users make them
  nmt::write_file_atomic(dir.file("link.txt"), "new");
  EXPECT_TRUE(fs::is_symlink(dir.file("link.txt")));
  EXPECT_EQ(slurp(dir.file("real/target.txt")), "new");
  // A dangling link: its target is created.
  fs::create_symlink("real/later.txt", dir.file("dangling.txt"));
  nmt::write_file_atomic(dir.file("dangling.txt"), "made");
  EXPECT_TRUE(fs::is_symlink(dir.file("dangling.txt")));
  EXPECT_EQ(slurp(dir.file("real/later.txt")), "made");
  // A loop is an error, not a hang.
  fs::create_symlink("loop-b", dir.file("loop-a"));
  fs::create_symlink("loop-a", dir.file("loop-b"));
  expect_error<RuntimeError>([&] { nmt::write_file_atomic(dir.file("loop-a"), "x"); }, {"symbolic links"});
}

TEST(OutputFile, WritesThroughDevicesAndFifos) {
  nmt::write_file_atomic("/dev/null", "discarded");
  struct stat st {};
  ASSERT_EQ(::stat("/dev/null", &st), 0);
  EXPECT_TRUE(S_ISCHR(st.st_mode));
  if (::stat("/dev/full", &st) == 0)
    expect_error<RuntimeError>([] { nmt::write_file_atomic("/dev/full", "x"); }, {"/dev/full", "No space left on device"});

  TempDir dir;
  const std::string fifo = dir.file("pipe");
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  std::string received;
  std::thread reader([&] { received = slurp(fifo); });
  nmt::write_file_atomic(fifo, "through the pipe");
  reader.join();
  EXPECT_EQ(received, "through the pipe");
  ASSERT_EQ(::lstat(fifo.c_str(), &st), 0);
  EXPECT_TRUE(S_ISFIFO(st.st_mode));
}

TEST(OutputFile, AFileSizeLimitIsAWriteErrorAndLeavesNothing) {
  TempDir dir;
  const std::string f = dir.file("big.bin");
  write_bytes(f, "old");
  EXPECT_EQ(error_under_file_size_limit(4096, [&] { nmt::write_file_atomic(f, std::string(100000, 'x')); }),
            f + ": cannot write: File too large");
  EXPECT_EQ(slurp(f), "old");
  EXPECT_EQ(entries(dir.path()), 1u);
}

// umask(2) counted: this binary's own umask() comes before the C library's, so every call in
// the process, nmt's included, passes through here.
std::atomic<int> g_umask_calls{0};

}  // namespace

extern "C" mode_t umask(mode_t mask) noexcept {
  ++g_umask_calls;
  return static_cast<mode_t>(::syscall(SYS_umask, mask));
}

namespace {

TEST(OutputFile, NewFilesFollowTheUmaskWhichItNeverChanges) {
  // Another thread (serve's workers, the trainer's) may create a file at any moment: the
  // process umask must not change, even for an instant, while OutputFile finds a new file's
  // mode (reading it with umask(0) + umask(mask) made such a file world-writable).
  TempDir dir;
  const mode_t old_mask = ::umask(027);
  const int calls_before = g_umask_calls;
  nmt::write_file_atomic(dir.file("new"), "x");
  const int calls = g_umask_calls - calls_before;
  struct stat st {};
  ASSERT_EQ(::stat(dir.file("new").c_str(), &st), 0);
  ::umask(old_mask);
  EXPECT_EQ(calls, 0) << "OutputFile changed the process umask";
  EXPECT_EQ(st.st_mode & 0777, 0640u);
  EXPECT_EQ(entries(dir.path()), 1u);  // no temporary file left
}

TEST(OutputFile, AnEarlierFailedWriteToStdoutIsNotReportedWithAStaleReason) {
  // After a failed write, fflush succeeds with ferror(stdout) set and errno from anything
  // else: the message must not name that (here "No such file or directory").
  EXPECT_EXIT(
      {
        if (!std::freopen("/dev/full", "w", stdout)) std::_Exit(4);
        std::fputs("lost", stdout);
        std::fflush(stdout);  // ENOSPC; the error flag stays set
        errno = ENOENT;
        try {
          OutputFile out("-");
          out.write("more");
          out.commit();
        } catch (const RuntimeError& e) {
          std::fprintf(stderr, "%s\n", e.what());
          std::_Exit(3);
        }
        std::_Exit(0);
      },
      ::testing::ExitedWithCode(3), "^stdout: cannot write[^\n]*(No space left|Input/output error)");
}

TEST(AppendFile, AppendsWholeLinesAndTakesBackOneThatDoesNotFit) {
  TempDir dir;
  const std::string f = dir.file("evals.jsonl");
  {
    nmt::AppendFile log(f);
    log.append_line("{\"a\":1}");
  }
  nmt::AppendFile(f).append_line("{\"b\":2}");
  EXPECT_EQ(slurp(f), "{\"a\":1}\n{\"b\":2}\n");
  // A file size limit that cuts the third line in the middle.
  EXPECT_EQ(error_under_file_size_limit(24, [&] { nmt::AppendFile(f).append_line("{\"c\":\"longer than what fits\"}"); }),
            f + ": cannot append: File too large");
  EXPECT_EQ(slurp(f), "{\"a\":1}\n{\"b\":2}\n");  // not half a record
  expect_error<RuntimeError>([&] { nmt::AppendFile(dir.file("no/such/dir/x.jsonl")); },
                             {"x.jsonl", "cannot open for appending", "No such file"});
}

TEST(ReadSmallFile, RefusesFifosDirectoriesAndLargeFiles) {
  TempDir dir;
  ASSERT_EQ(::mkfifo(dir.file("fifo").c_str(), 0600), 0);
  expect_error<RuntimeError>([&] { nmt::read_small_file(dir.file("fifo"), 100); }, {dir.file("fifo"), "not a regular file"});
  expect_error<RuntimeError>([&] { nmt::read_small_file(dir.path(), 100); }, {"is a directory"});
  expect_error<RuntimeError>([&] { nmt::read_small_file("/dev/zero", 100); }, {"not a regular file"});
  write_bytes(dir.file("big"), std::string(101, 'x'));
  expect_error<RuntimeError>([&] { nmt::read_small_file(dir.file("big"), 100); }, {"101 bytes", "more than the 100"});
  write_bytes(dir.file("ok"), std::string(100, 'x'));
  EXPECT_EQ(nmt::read_small_file(dir.file("ok"), 100).size(), 100u);
  expect_error<RuntimeError>([&] { nmt::read_small_file(dir.file("missing"), 100); }, {"no such file"});
}

TEST(DirectoryLock, ASecondOwnerIsRefusedAndTheLockEndsWithItsOwner) {
  TempDir dir;
  {
    nmt::DirectoryLock first(dir.path());
    // flock locks belong to the open file description: a second open in this process
    // conflicts just as another process would.
    expect_error<RuntimeError>([&] { nmt::DirectoryLock second(dir.path()); },
                               {dir.path(), "in use", "pid " + std::to_string(::getpid())});
  }
  EXPECT_NO_THROW(nmt::DirectoryLock again(dir.path()));
}

TEST(SameFile, ComparesDeviceAndInode) {
  TempDir dir;
  write_bytes(dir.file("a"), "x");
  fs::create_hard_link(dir.file("a"), dir.file("b"));
  write_bytes(dir.file("c"), "x");
  EXPECT_TRUE(nmt::same_file(dir.file("a"), dir.file("b")));
  EXPECT_TRUE(nmt::same_file(dir.file("a"), dir.path() + "/./a"));
  EXPECT_FALSE(nmt::same_file(dir.file("a"), dir.file("c")));
  EXPECT_FALSE(nmt::same_file(dir.file("a"), dir.file("missing")));
}

}  // namespace
