#include "nmt/util/io.h"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
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

void write_file_atomic(const std::string& path, const std::string& content) {
  fs::path target(path);
  fs::path tmp = target;
  tmp += ".tmp";
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    if (!out) throw RuntimeError(fmt::format("{}: cannot write: {}", tmp.string(), std::strerror(errno)));
    out.write(content.data(), static_cast<std::streamsize>(content.size()));
    out.flush();
    if (!out) {
      std::error_code ec;
      fs::remove(tmp, ec);
      throw RuntimeError(fmt::format("{}: write failed (disk full?)", tmp.string()));
    }
  }
  std::error_code ec;
  fs::rename(tmp, target, ec);
  if (ec) throw RuntimeError(fmt::format("{}: cannot rename into place: {}", path, ec.message()));
}

}  // namespace nmt
