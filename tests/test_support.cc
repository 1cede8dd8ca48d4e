// Implementation of the shared test helpers (compiled into each test binary that globs it).
#include <sys/wait.h>

#include <cctype>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <stdexcept>

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

std::vector<const XmlElement*> XmlElement::find_all(const std::string& element_name) const {
  std::vector<const XmlElement*> out;
  if (name == element_name) out.push_back(this);
  for (const auto& c : children)
    for (const auto* e : c->find_all(element_name)) out.push_back(e);
  return out;
}

namespace {
class XmlReader {
 public:
  explicit XmlReader(const std::string& d) : d_(d) {}

  std::unique_ptr<XmlElement> document() {
    skip_prolog();
    auto root = element();
    skip_misc();
    if (pos_ != d_.size()) fail("content after the root element");
    return root;
  }

 private:
  [[noreturn]] void fail(const std::string& what) const {
    throw std::runtime_error("XML error at byte " + std::to_string(pos_) + ": " + what);
  }
  bool starts(const char* s) const { return d_.compare(pos_, std::char_traits<char>::length(s), s) == 0; }
  void skip_space() {
    while (pos_ < d_.size() && std::isspace(static_cast<unsigned char>(d_[pos_]))) ++pos_;
  }
  void skip_past(const char* end) {
    auto p = d_.find(end, pos_);
    if (p == std::string::npos) fail(std::string("unterminated, expected ") + end);
    pos_ = p + std::char_traits<char>::length(end);
  }
  void skip_misc() {
    for (;;) {
      skip_space();
      if (starts("<!--")) skip_past("-->");
      else if (starts("<?")) skip_past("?>");
      else return;
    }
  }
  void skip_prolog() {
    skip_misc();
    if (starts("<!DOCTYPE")) skip_past(">");
    skip_misc();
  }
  std::string name() {
    size_t start = pos_;
    while (pos_ < d_.size() && (std::isalnum(static_cast<unsigned char>(d_[pos_])) || d_[pos_] == '-' || d_[pos_] == '_' ||
                                d_[pos_] == ':' || d_[pos_] == '.'))
      ++pos_;
    if (start == pos_) fail("expected a name");
    return d_.substr(start, pos_ - start);
  }
  std::string decode(const std::string& raw) {
    std::string out;
    for (size_t i = 0; i < raw.size(); ++i) {
      if (raw[i] == '<') fail("'<' in text or attribute");
      if (raw[i] != '&') {
        out += raw[i];
        continue;
      }
      auto semi = raw.find(';', i);
      if (semi == std::string::npos) fail("unterminated entity");
      std::string ent = raw.substr(i + 1, semi - i - 1);
      if (ent == "amp") out += '&';
      else if (ent == "lt") out += '<';
      else if (ent == "gt") out += '>';
      else if (ent == "quot") out += '"';
      else if (ent == "apos") out += '\'';
      else if (ent.size() > 1 && ent[0] == '#') {
        long cp = ent[1] == 'x' ? std::stol(ent.substr(2), nullptr, 16) : std::stol(ent.substr(1));
        if (cp < 0x80) out += static_cast<char>(cp);
        else out += "?";
      } else fail("unknown entity &" + ent + ";");
      i = semi;
    }
    return out;
  }
  std::unique_ptr<XmlElement> element() {
    if (!starts("<")) fail("expected '<'");
    ++pos_;
    auto e = std::make_unique<XmlElement>();
    e->name = name();
    for (;;) {
      skip_space();
      if (starts("/>")) {
        pos_ += 2;
        return e;
      }
      if (starts(">")) {
        ++pos_;
        break;
      }
      std::string key = name();
      skip_space();
      if (!starts("=")) fail("attribute " + key + " without a value");
      ++pos_;
      skip_space();
      if (pos_ >= d_.size() || (d_[pos_] != '"' && d_[pos_] != '\'')) fail("unquoted attribute " + key);
      const char q = d_[pos_++];
      auto end = d_.find(q, pos_);
      if (end == std::string::npos) fail("unterminated attribute " + key);
      if (e->attributes.count(key)) fail("duplicate attribute " + key);
      e->attributes[key] = decode(d_.substr(pos_, end - pos_));
      pos_ = end + 1;
    }
    for (;;) {
      if (pos_ >= d_.size()) fail("element <" + e->name + "> not closed");
      if (starts("</")) {
        pos_ += 2;
        if (name() != e->name) fail("mismatched closing tag for <" + e->name + ">");
        skip_space();
        if (!starts(">")) fail("expected '>'");
        ++pos_;
        return e;
      }
      if (starts("<!--")) {
        skip_past("-->");
        continue;
      }
      if (starts("<")) {
        e->children.push_back(element());
        continue;
      }
      auto next = d_.find('<', pos_);
      if (next == std::string::npos) fail("element <" + e->name + "> not closed");
      e->text += decode(d_.substr(pos_, next - pos_));
      pos_ = next;
    }
  }

  const std::string& d_;
  size_t pos_ = 0;
};
}  // namespace

std::unique_ptr<XmlElement> parse_xml(const std::string& document) { return XmlReader(document).document(); }

}  // namespace nmt::test
