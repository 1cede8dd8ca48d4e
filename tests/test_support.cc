// Implementation of the shared test helpers (compiled into each test binary that globs it).
#include <sys/wait.h>

#include <cstdio>
#include <fstream>
#include <sstream>

#include "test_support.h"

namespace nmt::test {

std::string slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

CommandResult run_command(const std::string& command_line) {
  TempDir tmp("nmt-cmd");
  std::string out = tmp.file("out"), err = tmp.file("err");
  std::string full = "(" + command_line + ") >" + out + " 2>" + err;
  int status = std::system(full.c_str());
  CommandResult r;
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + (WIFSIGNALED(status) ? WTERMSIG(status) : 0);
  r.out = slurp(out);
  r.err = slurp(err);
  return r;
}

void write_bytes(const std::string& path, const std::string& bytes) {
  std::ofstream o(path, std::ios::binary | std::ios::trunc);
  o.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

}  // namespace nmt::test
