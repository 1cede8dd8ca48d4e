#pragma once
// File helpers shared by the readers, the scorer and the model directory code.
#include <cstddef>
#include <fstream>
#include <string>
#include <string_view>
#include <vector>

namespace nmt {

// Opens `path` for binary reading; throws RuntimeError "PATH: <reason>" when it is missing,
// a directory or unreadable.
std::ifstream open_input(const std::string& path);

// Reads a whole file (same errors as open_input). Works on pipes and FIFOs too (a corpus or
// a hypothesis file may come from `<(...)`).
std::string read_file(const std::string& path);

// Largest sizes accepted for the small files of a model directory: a FIFO, a device or a
// multi-gigabyte file named config.json must be refused, not read until memory runs out.
inline constexpr size_t kMaxJsonBytes = size_t{64} << 20;     // config.json, state.json, manifest.json
inline constexpr size_t kMaxSubwordBytes = size_t{256} << 20;  // spm.model

// Reads a file that must be a regular file of at most max_bytes; otherwise RuntimeError
// "PATH: not a regular file" / "PATH: N bytes, more than the M expected for this file".
std::string read_small_file(const std::string& path, size_t max_bytes);

// Splits text into lines the way sacreBLEU's CLI reads files: on '\n' only, a final '\n'
// does not start an extra line. '\r' and other trailing whitespace are kept (callers rstrip).
// A UTF-8 byte-order mark at the very start is dropped when strip_bom is set.
std::vector<std::string> split_lines(const std::string& text, bool strip_bom = true);

// read_file + split_lines.
std::vector<std::string> read_lines(const std::string& path, bool strip_bom = true);

// Where a write to `path` lands: symbolic links followed to their final target (which need
// not exist yet), so the link itself stays a link.
std::string resolve_output_path(const std::string& path);

// Whether two paths name the same existing file (device and inode), e.g. --input and --output.
bool same_file(const std::string& a, const std::string& b);

// Why `path` cannot be a directory to read ("does not exist", "is not a directory"), or "" when
// it is one: for messages that say what is wrong rather than what was expected.
std::string directory_problem(const std::string& path);

// An output file that never leaves a torn or emptied file in place of the old one:
//  * a regular file (or a new path) is written to a temporary file beside it, flushed to disk
//    and renamed over it by commit(); without commit() (an error, an exception) the temporary
//    file is removed and the old file is untouched;
//  * a special file (/dev/null, /dev/full, a FIFO, a terminal) is written directly: it cannot
//    be replaced, and renaming over it would turn a device into a regular file;
//  * a symbolic link is followed: its target is replaced, the link stays.
// "-" (or OutputFile::standard_output()) is stdout, flushed and checked at commit().
// Every write, flush, fsync, close and rename is checked: RuntimeError "PATH: cannot write:
// <reason>" (e.g. "No space left on device").
class OutputFile {
 public:
  explicit OutputFile(const std::string& path);
  static OutputFile standard_output() { return OutputFile("-"); }
  OutputFile(OutputFile&& other) noexcept;
  OutputFile& operator=(OutputFile&&) = delete;
  OutputFile(const OutputFile&) = delete;
  ~OutputFile();

  void write(std::string_view bytes);
  // Pushes buffered bytes to the file (or stdout) now, so what was written survives a later
  // error on a special file or stdout. For a regular file this does not make it visible.
  void flush();
  // Makes the content visible under `path`: flush, fsync, close, rename. Call once.
  void commit();
  const std::string& path() const { return path_; }

 private:
  void fail(const std::string& what, int err);
  void drop_temporary() noexcept;

  std::string path_;    // as given, for messages
  std::string target_;  // symlinks resolved
  std::string temp_;    // temporary file beside target_ ("" when writing directly)
  std::string buffer_;
  int fd_ = -1;
  bool stdout_ = false;
  bool committed_ = false;
};

// OutputFile(path) + write + commit.
void write_file_atomic(const std::string& path, std::string_view content);

// A log appended to one whole line at a time (a run's metrics.jsonl, a model's evals.jsonl):
// every write and flush is checked, and a line that cannot be written completely (a full
// disk, a file size limit) is taken back, the file cut to its length before it, so a reader
// never meets half a record. A new file gets 0666 less the umask, as any file the user
// writes. Errors: RuntimeError "PATH: cannot open for appending: <reason>" or "PATH: cannot
// append: <reason>".
class AppendFile {
 public:
  explicit AppendFile(const std::string& path);
  ~AppendFile();
  AppendFile(const AppendFile&) = delete;
  AppendFile& operator=(const AppendFile&) = delete;

  // Appends `line` and a '\n' (the line must not contain one); on return it is in the file.
  void append_line(std::string_view line);
  const std::string& path() const { return path_; }

 private:
  std::string path_;
  int fd_ = -1;
};

// Flushes and checks stdout (gnulib's close_stdout): a full disk or a closed pipe behind
// stdout becomes RuntimeError "stdout: cannot write: <reason>" instead of a silent exit 0.
void check_stdout();

}  // namespace nmt
