#include "nmt/decode/request_reader.h"

#include <fmt/format.h>

#include "nmt/text/unicode.h"
#include "nmt/util/error.h"
#include "nmt/util/io.h"

namespace nmt::decode {

namespace {

constexpr const char* kPhraseUnit = "one line of phrases per input line";

// Tab-separated phrases of one line; empty or all-space fields are no phrase.
std::vector<std::string> phrases_of(const std::string& line) {
  std::vector<std::string> out;
  size_t start = 0;
  for (;;) {
    const size_t tab = line.find('\t', start);
    std::string field = line.substr(start, tab == std::string::npos ? std::string::npos : tab - start);
    if (!text::python_strip(std::string_view(field)).empty()) out.push_back(std::move(field));
    if (tab == std::string::npos) return out;
    start = tab + 1;
  }
}

bool is_blank(const std::string& line) { return text::python_strip(std::string_view(line)).empty(); }

}  // namespace

std::vector<std::string> read_source_lines(const std::string& path, size_t* first_bad) {
  std::vector<std::string> lines = read_lines(path);
  if (first_bad) *first_bad = 0;
  for (size_t i = 0; i < lines.size(); ++i) {
    auto& l = lines[i];
    if (!l.empty() && l.back() == '\r') l.pop_back();
    if (text::is_valid_utf8(l)) continue;
    if (!first_bad) throw RuntimeError(fmt::format("{}:{}: not valid UTF-8", path, i + 1));
    *first_bad = i + 1;
    lines.resize(i);
    break;
  }
  return lines;
}

RequestReader::PerLineFile::PerLineFile(std::string path, std::string unit) : path_(std::move(path)), unit_(std::move(unit)) {
  if (given()) lines_ = read_source_lines(path_);
}

void RequestReader::PerLineFile::check_count(size_t input_lines, const std::string& input_name) const {
  if (given() && lines_.size() != input_lines)
    throw UsageError(fmt::format("{} has {} lines but {} has {}: {}", path_, lines_.size(), input_name, input_lines, unit_));
}

void RequestReader::PerLineFile::check_covers(size_t first, size_t count) const {
  if (given() && first + count > lines_.size())
    throw UsageError(fmt::format("{} has {} lines, fewer than the input: {}", path_, lines_.size(), unit_));
}

void RequestReader::PerLineFile::check_used(size_t input_lines) const {
  if (given() && lines_.size() != input_lines)
    throw UsageError(fmt::format("{} has {} lines but the input had {}: {}", path_, lines_.size(), input_lines, unit_));
}

RequestReader::RequestReader(const RequestFiles& files)
    : prefix_tab_(files.prefix_tab),
      prefixes_((!files.prefix_file.empty() && files.prefix_tab)
                    ? throw UsageError("--prefix-file and --prefix-tab are exclusive")
                    : files.prefix_file,
                "one prefix per input line"),
      include_(files.include, kPhraseUnit),
      avoid_lines_(files.avoid_per_line, kPhraseUnit) {
  if (!files.avoid.empty())
    for (const auto& line : read_source_lines(files.avoid))
      if (!is_blank(line)) avoid_all_.push_back(line);
}

void RequestReader::check_count(size_t input_lines, const std::string& input_name) const {
  for (const PerLineFile* f : {&prefixes_, &include_, &avoid_lines_}) f->check_count(input_lines, input_name);
}

void RequestReader::check_used(size_t input_lines) const {
  for (const PerLineFile* f : {&prefixes_, &include_, &avoid_lines_}) f->check_used(input_lines);
}

void RequestReader::check_phrases(const std::function<void(const text::PhraseConstraints&)>& check) const {
  auto checked = [&](const std::string& file, size_t line_no, const text::PhraseConstraints& c) {
    try {
      check(c);
    } catch (const UsageError& e) {
      throw UsageError(line_no ? fmt::format("{}:{}: {}", file, line_no, e.what()) : fmt::format("{}: {}", file, e.what()));
    }
  };
  const auto& include = include_.lines();
  const auto& avoid = avoid_lines_.lines();
  for (size_t i = 0; i < include.size(); ++i) checked(include_.path(), i + 1, {phrases_of(include[i]), {}});
  for (size_t i = 0; i < avoid.size(); ++i) checked(avoid_lines_.path(), i + 1, {{}, phrases_of(avoid[i])});
  checked("--avoid", 0, {{}, avoid_all_});
}

std::vector<TranslationRequest> RequestReader::requests(std::vector<std::string> lines, size_t first) const {
  for (const PerLineFile* f : {&prefixes_, &include_, &avoid_lines_}) f->check_covers(first, lines.size());
  std::vector<TranslationRequest> out(lines.size());
  for (size_t i = 0; i < lines.size(); ++i) {
    TranslationRequest& r = out[i];
    r.source = std::move(lines[i]);
    if (prefix_tab_) {
      const auto tab = r.source.find('\t');
      if (tab != std::string::npos) {
        r.prefix = r.source.substr(tab + 1);
        r.source.resize(tab);
      }
    } else if (prefixes_.given()) {
      r.prefix = prefixes_.lines()[first + i];
    }
    if (include_.given()) r.constraints.include = phrases_of(include_.lines()[first + i]);
    if (avoid_lines_.given()) r.constraints.avoid = phrases_of(avoid_lines_.lines()[first + i]);
    r.constraints.avoid.insert(r.constraints.avoid.end(), avoid_all_.begin(), avoid_all_.end());
  }
  return out;
}

void read_chunks(std::istream& in, bool line_at_a_time, bool whole_input,
                 const std::function<void(std::vector<std::string>)>& chunk, bool& several_lines) {
  std::string line;
  std::vector<std::string> pending;
  size_t line_no = 0;
  while (std::getline(in, line)) {
    ++line_no;
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line_no == 1 && line.compare(0, 3, "\xEF\xBB\xBF") == 0) line.erase(0, 3);  // UTF-8 BOM
    if (!text::is_valid_utf8(line)) {
      chunk(pending);
      throw RuntimeError(fmt::format("<stdin>:{}: not valid UTF-8", line_no));
    }
    pending.push_back(line);
    if (!whole_input && (line_at_a_time || pending.size() >= 1024)) {
      chunk(pending);
      pending.clear();
    }
  }
  several_lines = line_no > 1;
  chunk(pending);
}

}  // namespace nmt::decode
