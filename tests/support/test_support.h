#pragma once
// Shared helpers for the test suite: where the data lives, temp dirs, running the binary.
#include <cstdlib>
#include <filesystem>
#include <functional>
#include <initializer_list>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include <gtest/gtest.h>

namespace nmt::test {

// The mirrored datasets: $NMT_DATA, else ../shared/data beside the checkout.
inline std::string data_dir() {
  if (const char* env = std::getenv("NMT_DATA"); env && *env) return env;
  return std::string(NMT_SOURCE_DIR) + "/../shared/data";
}

// sacreBLEU's reference outputs: $NMT_BLEU_VECTORS, else ../shared/bleu-vectors.
inline std::string bleu_vectors_dir() {
  if (const char* env = std::getenv("NMT_BLEU_VECTORS"); env && *env) return env;
  return std::string(NMT_SOURCE_DIR) + "/../shared/bleu-vectors";
}

inline std::string source_dir() { return NMT_SOURCE_DIR; }

// A small hand-written fixture under data/fixtures/.
// Built by appending: GCC 12 warns (falsely, -Warray-bounds) on a chain of operator+ at -O3.
inline std::string fixture(const std::string& name) {
  std::string path = source_dir();
  path += "/data/fixtures/";
  path += name;
  return path;
}
// The nmt under test: this build's, or $NMT_TEST_BINARY (scripts/checks/tsan-serve.sh runs the
// serve tests against a ThreadSanitizer build of the server).
inline std::string nmt_binary() {
  if (const char* env = std::getenv("NMT_TEST_BINARY"); env && *env) return env;
  return NMT_BINARY;
}

// A fresh empty directory under the system temp dir, removed by the destructor.
class TempDir {
 public:
  explicit TempDir(const std::string& tag = "nmt-test") {
    std::string tmpl = (std::filesystem::temp_directory_path() / (tag + "-XXXXXX")).string();
    path_ = ::mkdtemp(tmpl.data());
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const std::string& path() const { return path_; }
  std::string file(const std::string& name) const { return path_ + "/" + name; }

 private:
  std::string path_;
};

struct CommandResult {
  int exit_code = -1;
  std::string out;  // stdout
  std::string err;  // stderr
};

// Runs a shell command line, capturing stdout and stderr separately.
CommandResult run_command(const std::string& command_line);

// Runs `command(out)`, a command that writes the directory `out` (a training run), and leaves
// that directory at `out`. Under ctest the command runs once per ctest run for all the test
// processes that ask for it, into $NMT_TEST_CACHE (tests/CMakeLists.txt empties it before the
// first test): gtest_discover_tests runs each test in its own process, so a suite's
// SetUpTestSuite ran once per test, and the seven suites that train a tiny model spent most of
// the suite's time training the same model again. Each caller gets its own copy at `out`, so
// tests may still change what they were given. The cached result is keyed by the command and
// the nmt binary's size and time; the exit code, stdout and stderr are those of the one run.
// Without $NMT_TEST_CACHE (the test binary run by hand) the command simply runs.
CommandResult run_once_per_ctest(const std::function<std::string(const std::string& out)>& command,
                                 const std::string& out);

// The whole file as bytes ("" when it cannot be read).
std::string slurp(const std::string& path);

// Runs `f`, expecting an exception of type E whose one-line message contains every fragment.
template <typename E, typename F>
void expect_error(F f, std::initializer_list<std::string> fragments) {
  try {
    f();
    ADD_FAILURE() << "no exception thrown";
  } catch (const E& e) {
    const std::string msg = e.what();
    EXPECT_EQ(msg.find('\n'), std::string::npos) << "message must be one line: " << msg;
    for (const auto& frag : fragments) EXPECT_NE(msg.find(frag), std::string::npos) << "'" << frag << "' not in: " << msg;
  }
}

// The lines of a text, without their '\n' (a last line without one included).
std::vector<std::string> lines_of(const std::string& text);

// Writes bytes to a file (for fixtures built inside tests).
void write_bytes(const std::string& path, const std::string& bytes);

// The SVG and HTML nmt writes, read by an XML parser not written by this project (pugixml, from
// Debian's libpugixml-dev): every element closed and nested, attributes quoted and unique, one
// root element. Throws std::runtime_error with the byte offset on the first violation. (The
// reports are XHTML-style HTML, so the whole HTML page is checked as XML, not only its SVG.)
// Laxer than the hand-written reader it replaced in two ways: pugixml skips character data
// outside the root element, and leaves an unknown or unterminated entity (`&nbsp;`, `&lt`) as
// written instead of refusing it.
struct XmlElement {
  std::string name;
  std::map<std::string, std::string> attributes;
  std::string text;  // all character data inside, entities decoded
  std::vector<std::unique_ptr<XmlElement>> children;

  // Every element below (and including) this one with that name, in document order.
  std::vector<const XmlElement*> find_all(const std::string& element_name) const;
  std::string attr(const std::string& key) const {
    auto it = attributes.find(key);
    return it == attributes.end() ? "" : it->second;
  }
};
std::unique_ptr<XmlElement> parse_xml(const std::string& document);

}  // namespace nmt::test
