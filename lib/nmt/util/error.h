#pragma once
// Error types that carry the process exit code the CLI returns for them.
#include <stdexcept>
#include <string>

namespace nmt {

// Base class: a message meant for the user (one line, naming file/option/line).
class Error : public std::runtime_error {
 public:
  Error(const std::string& what, int exit_code) : std::runtime_error(what), exit_code_(exit_code) {}
  int exit_code() const { return exit_code_; }

 private:
  int exit_code_;
};

// The command line was wrong (bad option value, mismatched files given by the user): exit 2.
class UsageError : public Error {
 public:
  explicit UsageError(const std::string& what) : Error(what, 2) {}
};

// The input or the environment was wrong at run time (bad file, corrupt checkpoint): exit 1.
class RuntimeError : public Error {
 public:
  explicit RuntimeError(const std::string& what) : Error(what, 1) {}
};

// The first line of an exception's message: LibTorch's carry a backtrace after it, and every
// error nmt prints is one line.
inline std::string first_line(const std::string& what) { return what.substr(0, what.find('\n')); }

}  // namespace nmt
