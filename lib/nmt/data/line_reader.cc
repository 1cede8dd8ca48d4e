#include "nmt/data/line_reader.h"

#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>

#include <fmt/format.h>

#include "nmt/util/error.h"

namespace nmt::data {
namespace {

bool ends_with(const std::string& s, const char* suffix) {
  const size_t n = std::strlen(suffix);
  return s.size() >= n && s.compare(s.size() - n, n, suffix) == 0;
}

std::string decompressor_for(const std::string& path) {
  if (ends_with(path, ".gz")) return "gzip";
  if (ends_with(path, ".xz")) return "xz";
  if (ends_with(path, ".zst")) return "zstd";
  return "";
}

bool on_path(const std::string& program) {
  const char* path = std::getenv("PATH");
  std::string dirs = path ? path : "/usr/bin:/bin";
  size_t start = 0;
  while (start <= dirs.size()) {
    const size_t end = dirs.find(':', start);
    const std::string dir = dirs.substr(start, end == std::string::npos ? std::string::npos : end - start);
    if (!dir.empty() && access((dir + "/" + program).c_str(), X_OK) == 0) return true;
    if (end == std::string::npos) break;
    start = end + 1;
  }
  return false;
}

// 'path' with single quotes for /bin/sh.
std::string shell_quote(const std::string& s) {
  std::string out = "'";
  for (char c : s) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

}  // namespace

LineReader::LineReader(const std::string& path) : path_(path), decompressor_(decompressor_for(path)) {
  if (path == "-") {
    file_ = stdin;
    return;
  }
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) throw RuntimeError(fmt::format("{}: {}", path, std::strerror(errno)));
  if (S_ISDIR(st.st_mode)) throw RuntimeError(fmt::format("{}: is a directory", path));
  if (access(path.c_str(), R_OK) != 0) throw RuntimeError(fmt::format("{}: {}", path, std::strerror(errno)));
  if (decompressor_.empty()) {
    file_ = std::fopen(path.c_str(), "rb");
    if (!file_) throw RuntimeError(fmt::format("{}: {}", path, std::strerror(errno)));
    return;
  }
  if (!on_path(decompressor_))
    throw RuntimeError(fmt::format("{}: needs {} to read it (not found on PATH)", path, decompressor_));
  file_ = ::popen((decompressor_ + " -dc -- " + shell_quote(path) + " 2>/dev/null").c_str(), "r");
  if (!file_) throw RuntimeError(fmt::format("{}: cannot start {}: {}", path, decompressor_, std::strerror(errno)));
}

LineReader::~LineReader() {
  if (file_ && file_ != stdin) decompressor_.empty() ? std::fclose(file_) : ::pclose(file_);
  std::free(buffer_);
}

bool LineReader::next(std::string& line) {
  if (done_) return false;
  errno = 0;
  const ssize_t n = ::getline(&buffer_, &capacity_, file_);
  if (n < 0) {
    if (std::ferror(file_)) throw RuntimeError(fmt::format("{}: read error: {}", path_, std::strerror(errno)));
    finish();
    return false;
  }
  size_t len = static_cast<size_t>(n);
  if (len > 0 && buffer_[len - 1] == '\n') --len;
  size_t start = 0;
  if (line_no_ == 0 && len >= 3 && std::memcmp(buffer_, "\xEF\xBB\xBF", 3) == 0) start = 3;
  line.assign(buffer_ + start, len - start);
  ++line_no_;
  return true;
}

void LineReader::finish() {
  done_ = true;
  if (decompressor_.empty() || !file_) return;
  const int status = ::pclose(file_);
  file_ = nullptr;
  if (status == -1) throw RuntimeError(fmt::format("{}: {} -dc: {}", path_, decompressor_, std::strerror(errno)));
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
    throw RuntimeError(fmt::format("{}: {} -dc failed (exit {}) after {} lines: a corrupt or truncated archive?", path_,
                                   decompressor_, WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status),
                                   line_no_));
}

}  // namespace nmt::data
