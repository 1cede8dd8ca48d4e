#include "nmt/util/lock.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string>

#include <fmt/format.h>

#include "nmt/util/error.h"

namespace nmt {

namespace {

// The open file is the one at `path` (a holder that has just let go unlinks it: a descriptor of
// the unlinked file locks nothing anyone else sees).
bool still_at(int fd, const std::string& path) {
  struct stat held {}, named {};
  return ::fstat(fd, &held) == 0 && ::stat(path.c_str(), &named) == 0 && held.st_dev == named.st_dev &&
         held.st_ino == named.st_ino;
}

}  // namespace

DirectoryLock::DirectoryLock(const std::string& dir) : path_(dir + "/" + kFileName) {
  // A few tries: each lost race means another process took and released it meanwhile.
  for (int attempt = 0; attempt < 100; ++attempt) {
    fd_ = ::open(path_.c_str(), O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0644);
    if (fd_ < 0) throw RuntimeError(fmt::format("{}: cannot create the lock file: {}", path_, std::strerror(errno)));
    if (::flock(fd_, LOCK_EX | LOCK_NB) != 0) refuse(dir, errno);
    if (still_at(fd_, path_)) break;
    ::close(fd_);
    fd_ = -1;
  }
  if (fd_ < 0) throw RuntimeError(fmt::format("{}: cannot lock: it keeps being replaced", path_));
  // Ours now: record who holds it, for the message below.
  const std::string pid = std::to_string(::getpid()) + "\n";
  if (::ftruncate(fd_, 0) != 0 || ::pwrite(fd_, pid.data(), pid.size(), 0) != static_cast<ssize_t>(pid.size())) {
    // Not fatal: the flock is what excludes, the pid only makes the message helpful.
  }
}

void DirectoryLock::refuse(const std::string& dir, int err) {
  char buf[32] = {};
  const ssize_t n = ::pread(fd_, buf, sizeof buf - 1, 0);
  ::close(fd_);
  fd_ = -1;
  if (err != EWOULDBLOCK) throw RuntimeError(fmt::format("{}: cannot lock: {}", path_, std::strerror(err)));
  const std::string pid = n > 0 ? std::string(buf, static_cast<size_t>(n)).substr(0, std::string(buf).find('\n')) : "?";
  throw RuntimeError(fmt::format("{}: in use by another nmt process (pid {}); wait for it to finish or choose another "
                                 "directory",
                                 dir, pid));
}

DirectoryLock::~DirectoryLock() {
  // Unlinked while still locked, then closed: a process that opened the file meanwhile finds,
  // once it holds the lock, that the path no longer names it, and tries again (still_at).
  if (fd_ < 0) return;
  ::unlink(path_.c_str());
  ::close(fd_);
}

}  // namespace nmt
