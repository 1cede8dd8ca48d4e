#include "nmt/util/io.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <random>
#include <sstream>

#include <fmt/format.h>

#include "nmt/util/error.h"

namespace nmt {
namespace fs = std::filesystem;

std::ifstream open_input(const std::string& path) {
  std::error_code ec;
  if (fs::is_directory(path, ec)) throw RuntimeError(fmt::format("{}: is a directory, expected a file", path));
  if (!fs::exists(path, ec)) throw RuntimeError(fmt::format("{}: no such file", path));
  std::ifstream in(path, std::ios::binary);
  if (!in) throw RuntimeError(fmt::format("{}: cannot open: {}", path, std::strerror(errno)));
  return in;
}

std::string read_file(const std::string& path) {
  std::ifstream in = open_input(path);
  std::ostringstream buffer;
  buffer << in.rdbuf();
  if (in.bad()) throw RuntimeError(fmt::format("{}: read error", path));
  return buffer.str();
}

std::string read_small_file(const std::string& path, size_t max_bytes) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) {
    if (errno == ENOENT) throw RuntimeError(fmt::format("{}: no such file", path));
    throw RuntimeError(fmt::format("{}: cannot open: {}", path, std::strerror(errno)));
  }
  // Checked before opening: opening a FIFO for reading blocks until a writer comes.
  if (S_ISDIR(st.st_mode)) throw RuntimeError(fmt::format("{}: is a directory, expected a file", path));
  if (!S_ISREG(st.st_mode)) throw RuntimeError(fmt::format("{}: not a regular file", path));
  if (static_cast<uint64_t>(st.st_size) > max_bytes)
    throw RuntimeError(fmt::format("{}: {} bytes, more than the {} expected for this file", path,
                                   static_cast<uint64_t>(st.st_size), max_bytes));
  std::string text = read_file(path);
  if (text.size() > max_bytes) throw RuntimeError(fmt::format("{}: grew beyond {} bytes while being read", path, max_bytes));
  return text;
}

std::vector<std::string> split_lines(const std::string& text, bool strip_bom) {
  std::vector<std::string> lines;
  size_t start = 0;
  if (strip_bom && text.compare(0, 3, "\xEF\xBB\xBF") == 0) start = 3;
  while (start < text.size()) {
    size_t end = text.find('\n', start);
    if (end == std::string::npos) {
      lines.emplace_back(text, start, std::string::npos);
      break;
    }
    lines.emplace_back(text, start, end - start);
    start = end + 1;
  }
  return lines;
}

std::vector<std::string> read_lines(const std::string& path, bool strip_bom) {
  return split_lines(read_file(path), strip_bom);
}

std::string resolve_output_path(const std::string& path) {
  fs::path p(path);
  // A bounded walk (as the kernel's 40 links), so a symlink loop fails instead of spinning.
  for (int hops = 0; hops < 40; ++hops) {
    std::error_code ec;
    if (!fs::is_symlink(fs::symlink_status(p, ec))) return p.string();
    fs::path next = fs::read_symlink(p, ec);
    if (ec) throw RuntimeError(fmt::format("{}: cannot read the symbolic link: {}", path, ec.message()));
    p = next.is_absolute() ? next : p.parent_path() / next;
  }
  throw RuntimeError(fmt::format("{}: too many levels of symbolic links", path));
}

bool same_file(const std::string& a, const std::string& b) {
  struct stat sa {}, sb {};
  if (::stat(a.c_str(), &sa) != 0 || ::stat(b.c_str(), &sb) != 0) return false;
  return sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
}

namespace {
// write(2) until everything is out (it may write less than asked, e.g. to a pipe).
int write_all(int fd, const char* data, size_t size) {
  while (size > 0) {
    const ssize_t n = ::write(fd, data, size);
    if (n < 0) {
      if (errno == EINTR) continue;
      return errno;
    }
    data += n;
    size -= static_cast<size_t>(n);
  }
  return 0;
}

// A new temporary file beside `target` ("TARGET.XXXXXX.tmp"), created with mode 0666 so that
// the kernel applies the umask (and a default ACL) as to any file the user writes. mkstemp's
// 0600 had to be widened with a mode read by umask(0) + umask(mask): for that moment the
// process umask was 0, and a file another thread created then (serve, the trainer's workers)
// was world-writable.
int create_temporary_beside(const std::string& target, std::string& temp) {
  static const char kLetters[] = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
  static std::atomic<uint64_t> counter{0};
  std::random_device device;
  for (int attempt = 0; attempt < 100; ++attempt) {
    uint64_t bits = (static_cast<uint64_t>(device()) << 32) ^ device() ^ (counter++ * 0x9E3779B97F4A7C15ULL);
    std::string suffix(6, 'x');
    for (char& c : suffix) {
      c = kLetters[bits % (sizeof(kLetters) - 1)];
      bits /= sizeof(kLetters) - 1;
    }
    temp = target + "." + suffix + ".tmp";
    const int fd = ::open(temp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
    if (fd >= 0 || errno != EEXIST) return fd;
  }
  errno = EEXIST;
  return -1;
}
}  // namespace

OutputFile::OutputFile(const std::string& path) : path_(path) {
  if (path == "-") {
    stdout_ = true;
    path_ = "stdout";
    return;
  }
  if (path.empty()) throw UsageError("an output file name is empty");
  target_ = resolve_output_path(path);
  struct stat st {};
  const bool exists = ::stat(target_.c_str(), &st) == 0;
  if (exists && S_ISDIR(st.st_mode)) throw RuntimeError(fmt::format("{}: is a directory, expected a file", path));
  if (exists && !S_ISREG(st.st_mode)) {
    fd_ = ::open(target_.c_str(), O_WRONLY | O_CLOEXEC);
    if (fd_ < 0) throw RuntimeError(fmt::format("{}: cannot write: {}", path, std::strerror(errno)));
    return;
  }
  std::string temp;
  fd_ = create_temporary_beside(target_, temp);
  if (fd_ < 0) throw RuntimeError(fmt::format("{}: cannot write: {}", path, std::strerror(errno)));
  temp_ = temp;
  // A file it replaces keeps its mode (an executable script stays executable).
  if (exists && ::fchmod(fd_, st.st_mode & 07777) != 0) {
    const int err = errno;
    drop_temporary();
    throw RuntimeError(fmt::format("{}: cannot write: {}", path, std::strerror(err)));
  }
}

OutputFile::OutputFile(OutputFile&& other) noexcept
    : path_(std::move(other.path_)), target_(std::move(other.target_)), temp_(std::move(other.temp_)),
      buffer_(std::move(other.buffer_)), fd_(other.fd_), stdout_(other.stdout_), committed_(other.committed_) {
  other.fd_ = -1;
  other.temp_.clear();
  other.committed_ = true;
}

OutputFile::~OutputFile() {
  if (!committed_) drop_temporary();
}

void OutputFile::drop_temporary() noexcept {
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
  if (!temp_.empty()) ::unlink(temp_.c_str());
  temp_.clear();
}

void OutputFile::fail(const std::string& what, int err) {
  drop_temporary();
  committed_ = true;  // nothing left to clean up
  throw RuntimeError(fmt::format("{}: {}: {}", path_, what, std::strerror(err)));
}

void OutputFile::write(std::string_view bytes) {
  buffer_.append(bytes);
  if (buffer_.size() >= (size_t{1} << 16)) flush();
}

void OutputFile::flush() {
  if (committed_) throw std::logic_error("OutputFile used after commit");
  if (stdout_) {
    // errno only where the call that failed set it: after an earlier failed write, fflush
    // succeeds with ferror() still set and errno left from anything (it once said "No such
    // file or directory" for a full disk).
    errno = 0;
    if (!buffer_.empty() && std::fwrite(buffer_.data(), 1, buffer_.size(), stdout) != buffer_.size()) {
      buffer_.clear();
      fail("cannot write", errno ? errno : EIO);
    }
    buffer_.clear();
    errno = 0;
    if (std::fflush(stdout) != 0) fail("cannot write", errno ? errno : EIO);
    if (std::ferror(stdout)) fail("cannot write (an earlier write failed)", EIO);
    return;
  }
  const int err = write_all(fd_, buffer_.data(), buffer_.size());
  buffer_.clear();
  if (err) fail("cannot write", err);
}

void OutputFile::commit() {
  flush();
  committed_ = true;
  if (stdout_) return;
  // fsync before rename: otherwise a crash soon after can leave an empty file under the name.
  if (!temp_.empty() && ::fsync(fd_) != 0) {
    committed_ = false;
    fail("cannot write", errno);
  }
  const int fd = fd_;
  fd_ = -1;
  if (::close(fd) != 0 && errno != EINTR) {
    committed_ = false;
    fail("cannot write", errno);
  }
  if (temp_.empty()) return;
  if (::rename(temp_.c_str(), target_.c_str()) != 0) {
    committed_ = false;
    fail("cannot rename into place", errno);
  }
  temp_.clear();
  // The rename itself reaches the disk with the directory (best effort: not every file
  // system can fsync a directory).
  const std::string dir = fs::path(target_).parent_path().empty() ? "." : fs::path(target_).parent_path().string();
  const int dfd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dfd >= 0) {
    ::fsync(dfd);
    ::close(dfd);
  }
}

void write_file_atomic(const std::string& path, std::string_view content) {
  OutputFile out(path);
  out.write(content);
  out.commit();
}

void check_stdout() {
  errno = 0;
  const bool flushed = std::fflush(stdout) == 0;
  const int err = flushed ? EIO : (errno ? errno : EIO);  // see OutputFile::flush
  if (!flushed || std::ferror(stdout)) {
    std::clearerr(stdout);
    throw RuntimeError(fmt::format("stdout: cannot write: {}", std::strerror(err)));
  }
}

AppendFile::AppendFile(const std::string& path) : path_(path) {
  fd_ = ::open(path.c_str(), O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0666);
  if (fd_ < 0) throw RuntimeError(fmt::format("{}: cannot open for appending: {}", path, std::strerror(errno)));
}

AppendFile::~AppendFile() {
  if (fd_ >= 0) ::close(fd_);
}

void AppendFile::append_line(std::string_view line) {
  struct stat before {};
  if (::fstat(fd_, &before) != 0)
    throw RuntimeError(fmt::format("{}: cannot append: {}", path_, std::strerror(errno)));
  std::string record(line);
  record.push_back('\n');
  const int err = write_all(fd_, record.data(), record.size());
  if (err == 0) return;
  // Take back what part of the line got in, if the file is a regular one (a FIFO cannot be
  // cut, and what went into it is gone anyway).
  if (S_ISREG(before.st_mode) && ::ftruncate(fd_, before.st_size) != 0) {
    const int cut_err = errno;
    throw RuntimeError(fmt::format("{}: cannot append: {}; and cannot remove the partial line: {}", path_,
                                   std::strerror(err), std::strerror(cut_err)));
  }
  throw RuntimeError(fmt::format("{}: cannot append: {}", path_, std::strerror(err)));
}

std::string directory_problem(const std::string& path) {
  std::error_code ec;
  const auto status = std::filesystem::status(path, ec);
  if (status.type() == std::filesystem::file_type::not_found) return "does not exist";
  if (ec) return ec.message();
  return status.type() == std::filesystem::file_type::directory ? "" : "is not a directory";
}

}  // namespace nmt
