// Implementation of the shared test helpers (compiled into both test executables: tests/CMakeLists.txt).
#include <fcntl.h>
#include <sys/file.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cctype>
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <stdexcept>

#include <pugixml.hpp>

#include "test_support.h"

namespace nmt::test {

std::string slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
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

namespace {

// FNV-1a, 64 bits: a stable name for a command line (std::hash need not be stable).
std::string fnv1a_hex(const std::string& text) {
  uint64_t h = 14695981039346656037ull;
  for (const unsigned char c : text) h = (h ^ c) * 1099511628211ull;
  char hex[17];
  std::snprintf(hex, sizeof hex, "%016llx", static_cast<unsigned long long>(h));
  return hex;
}

// The binary the command runs, as size and modification time: a rebuilt nmt misses the cache.
std::string binary_stamp() {
  std::error_code ec;
  const auto size = std::filesystem::file_size(nmt_binary(), ec);
  const auto time = std::filesystem::last_write_time(nmt_binary(), ec).time_since_epoch().count();
  return std::to_string(size) + ":" + std::to_string(time);
}

// The cached result: exit code on the first line, then stdout's length and stdout, then stderr.
void write_result(const std::string& path, const CommandResult& r) {
  write_bytes(path + ".tmp", std::to_string(r.exit_code) + "\n" + std::to_string(r.out.size()) + "\n" + r.out + r.err);
  std::filesystem::rename(path + ".tmp", path);
}

CommandResult read_result(const std::string& path) {
  const std::string bytes = slurp(path);
  CommandResult r;
  const size_t first = bytes.find('\n'), second = bytes.find('\n', first + 1);
  r.exit_code = std::stoi(bytes.substr(0, first));
  const size_t out_size = std::stoul(bytes.substr(first + 1, second - first - 1));
  r.out = bytes.substr(second + 1, out_size);
  r.err = bytes.substr(second + 1 + out_size);
  return r;
}

// An exclusive flock(2) on a file, held for the object's life.
class FileLock {
 public:
  explicit FileLock(const std::string& path) : fd_(::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644)) {
    if (fd_ < 0 || ::flock(fd_, LOCK_EX) != 0) throw std::runtime_error("cannot lock " + path);
  }
  ~FileLock() { ::close(fd_); }
  FileLock(const FileLock&) = delete;
  FileLock& operator=(const FileLock&) = delete;

 private:
  int fd_;
};

}  // namespace

CommandResult run_once_per_ctest(const std::function<std::string(const std::string& out)>& command,
                                 const std::string& out) {
  const char* cache = std::getenv("NMT_TEST_CACHE");
  if (!cache || !*cache) return run_command(command(out));
  std::filesystem::create_directories(cache);
  const std::string entry = std::string(cache) + "/" + fnv1a_hex(command("OUT") + "\n" + binary_stamp());
  CommandResult result;
  {
    // Other test processes asking for the same command wait here while the first one runs it.
    FileLock lock(entry + ".lock");
    if (std::filesystem::exists(entry + ".result")) {
      result = read_result(entry + ".result");
    } else {
      std::filesystem::remove_all(entry);  // what a killed first attempt left
      result = run_command(command(entry));
      write_result(entry + ".result", result);
    }
  }
  if (std::filesystem::exists(entry)) std::filesystem::copy(entry, out, std::filesystem::copy_options::recursive);
  return result;
}

void write_bytes(const std::string& path, const std::string& bytes) {
  std::ofstream o(path, std::ios::binary | std::ios::trunc);
  o.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

std::vector<const XmlElement*> XmlElement::find_all(const std::string& element_name) const {
  std::vector<const XmlElement*> out;
  if (name == element_name) out.push_back(this);
  for (const auto& c : children)
    for (const auto* e : c->find_all(element_name)) out.push_back(e);
  return out;
}

namespace {

[[noreturn]] void xml_error(size_t offset, const std::string& what) {
  throw std::runtime_error("XML error at byte " + std::to_string(offset) + ": " + what);
}

// pugixml's node as an XmlElement. Adds the one check pugixml leaves out: unique attribute names.
std::unique_ptr<XmlElement> to_element(const pugi::xml_node& node) {
  auto e = std::make_unique<XmlElement>();
  e->name = node.name();
  const auto offset = static_cast<size_t>(node.offset_debug());
  for (const pugi::xml_attribute& a : node.attributes())
    if (!e->attributes.emplace(a.name(), a.value()).second)
      xml_error(offset, "duplicate attribute " + std::string(a.name()) + " in <" + e->name + ">");
  for (const pugi::xml_node& child : node.children()) {
    if (child.type() == pugi::node_element) e->children.push_back(to_element(child));
    else if (child.type() == pugi::node_pcdata || child.type() == pugi::node_cdata) e->text += child.value();
  }
  return e;
}

}  // namespace

std::unique_ptr<XmlElement> parse_xml(const std::string& document) {
  pugi::xml_document doc;
  // parse_ws_pcdata keeps whitespace-only character data, so `text` is all of an element's own
  // character data, as written. parse_default checks well-formedness (nesting, closing tags,
  // quoting) and decodes the predefined and numeric entities.
  const pugi::xml_parse_result result = doc.load_buffer(
      document.data(), document.size(), pugi::parse_default | pugi::parse_ws_pcdata, pugi::encoding_utf8);
  if (!result) xml_error(static_cast<size_t>(result.offset), result.description());
  // pugixml also accepts fragments; a document has one root element.
  pugi::xml_node root;
  for (const pugi::xml_node& node : doc.children()) {
    if (node.type() != pugi::node_element) continue;
    if (root) xml_error(static_cast<size_t>(node.offset_debug()), "content after the root element");
    root = node;
  }
  if (!root) xml_error(0, "no root element");
  return to_element(root);
}

}  // namespace nmt::test
