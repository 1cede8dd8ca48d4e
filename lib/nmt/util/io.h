#pragma once
// File helpers shared by the readers, the scorer and the model directory code.
#include <fstream>
#include <string>
#include <vector>

namespace nmt {

// Opens `path` for binary reading; throws RuntimeError "PATH: <reason>" when it is missing,
// a directory or unreadable.
std::ifstream open_input(const std::string& path);

// Reads a whole file (same errors as open_input).
std::string read_file(const std::string& path);

// Splits text into lines the way sacreBLEU's CLI reads files: on '\n' only, a final '\n'
// does not start an extra line. '\r' and other trailing whitespace are kept (callers rstrip).
// A UTF-8 byte-order mark at the very start is dropped when strip_bom is set.
std::vector<std::string> split_lines(const std::string& text, bool strip_bom = true);

// read_file + split_lines.
std::vector<std::string> read_lines(const std::string& path, bool strip_bom = true);

// Writes `content` to `path` via a temporary file in the same directory and rename(), so
// readers see either the old file or the new one, never a torn one. Throws RuntimeError.
void write_file_atomic(const std::string& path, const std::string& content);

}  // namespace nmt
