#pragma once
// An exclusive owner for a directory (a training run's --out): a lock file holding the
// owner's pid, locked with flock(2). The kernel drops the lock when its process ends, however
// it ends (SIGKILL included), so a lock file left behind by a dead run is never mistaken for a
// live owner: stale locks need no clean-up. An owner that ends normally removes the file.
#include <string>

namespace nmt {

class DirectoryLock {
 public:
  static constexpr const char* kFileName = ".lock";

  // Locks DIR/.lock (creating it) without waiting. Held by another process → RuntimeError
  // "DIR: in use by another nmt process (pid N); ..." naming `what` the directory is for.
  explicit DirectoryLock(const std::string& dir);
  ~DirectoryLock();  // removes DIR/.lock
  DirectoryLock(const DirectoryLock&) = delete;
  DirectoryLock& operator=(const DirectoryLock&) = delete;

 private:
  [[noreturn]] void refuse(const std::string& dir, int err);  // closes fd_, throws

  std::string path_;
  int fd_ = -1;
};

}  // namespace nmt
