#include "nmt/util/lock.h"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string>

#include <fmt/format.h>

#include "nmt/util/error.h"

namespace nmt {

DirectoryLock::DirectoryLock(const std::string& dir) {
  const std::string path = dir + "/" + kFileName;
  fd_ = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0644);
  if (fd_ < 0) throw RuntimeError(fmt::format("{}: cannot create the lock file: {}", path, std::strerror(errno)));
  if (::flock(fd_, LOCK_EX | LOCK_NB) != 0) {
    const int err = errno;
    char buf[32] = {};
    const ssize_t n = ::pread(fd_, buf, sizeof buf - 1, 0);
    ::close(fd_);
    fd_ = -1;
    if (err != EWOULDBLOCK) throw RuntimeError(fmt::format("{}: cannot lock: {}", path, std::strerror(err)));
    const std::string pid = n > 0 ? std::string(buf, static_cast<size_t>(n)).substr(0, std::string(buf).find('\n')) : "?";
    throw RuntimeError(fmt::format("{}: in use by another nmt process (pid {}); wait for it to finish or choose another "
                                   "directory",
                                   dir, pid));
  }
  // Ours now: record who holds it, for the message above.
  const std::string pid = std::to_string(::getpid()) + "\n";
  if (::ftruncate(fd_, 0) != 0 || ::pwrite(fd_, pid.data(), pid.size(), 0) != static_cast<ssize_t>(pid.size())) {
    // Not fatal: the flock is what excludes, the pid only makes the message helpful.
  }
}

DirectoryLock::~DirectoryLock() {
  // Closing releases the flock. The file stays: removing it would race with a process that
  // has opened it but not yet locked it (it would then hold a lock on a deleted file).
  if (fd_ >= 0) ::close(fd_);
}

}  // namespace nmt
