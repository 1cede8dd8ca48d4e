#pragma once
// Reads a text file line by line without holding it in memory: the streaming path of corpora
// larger than memory (`nmt prepare`). Files named *.gz, *.xz or *.zst are decompressed as they
// are read by the system's gzip, xz or zstd (a child process, so this file links no compression
// library); "-" is standard input.
#include <cstddef>
#include <cstdio>
#include <string>

namespace nmt::data {

class LineReader {
 public:
  // Throws RuntimeError "PATH: <reason>" when the file is missing, a directory or unreadable,
  // and "PATH: needs xz to read it (not found)" when the decompressor is not installed.
  explicit LineReader(const std::string& path);
  ~LineReader();
  LineReader(const LineReader&) = delete;
  LineReader& operator=(const LineReader&) = delete;

  // The next line without its '\n' (a '\r' before it is kept: callers strip it), the UTF-8
  // byte-order mark of the first line dropped. False at the end of the file; then a decompressor
  // that failed (a corrupt or truncated .gz) throws RuntimeError "PATH: gzip -dc failed ...", so
  // a damaged archive never passes for a shorter corpus.
  bool next(std::string& line);

  size_t line_number() const { return line_no_; }  // of the line last returned, 1-based
  const std::string& path() const { return path_; }

 private:
  void finish();

  std::string path_;
  std::string decompressor_;  // "" for a plain file
  FILE* file_ = nullptr;
  char* buffer_ = nullptr;
  size_t capacity_ = 0;
  size_t line_no_ = 0;
  bool done_ = false;
};

}  // namespace nmt::data
