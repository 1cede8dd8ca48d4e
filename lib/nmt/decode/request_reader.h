#pragma once
// Translation requests from files, as `nmt translate` reads them: the input lines (a file, or
// standard input in chunks), and beside them the per-line files of prefixes and phrases. Every
// file is read and checked before a model is loaded, so a bad one costs nothing. Torch-free.
#include <cstddef>
#include <functional>
#include <istream>
#include <string>
#include <vector>

#include "nmt/decode/translation_result.h"

namespace nmt::decode {

// The lines of `path` without "\r". A line that is not valid UTF-8 is a RuntimeError naming
// FILE:LINE; with `first_bad`, the lines before it are returned instead and *first_bad is its
// line number (0 when every line is good), so the caller can translate them first.
std::vector<std::string> read_source_lines(const std::string& path, size_t* first_bad = nullptr);

// Where requests' prefixes and phrases come from (empty: not given).
struct RequestFiles {
  std::string prefix_file;  // line N: the target text line N's translation starts with
  bool prefix_tab = false;  // each input line is SOURCE<TAB>PREFIX
  std::string include;      // line N: tab-separated phrases line N's translation must contain
  std::string avoid_per_line;  // line N: tab-separated phrases it must not contain
  std::string avoid;           // one phrase per line that no translation may contain
};

// Input lines and the per-line files, turned into requests chunk by chunk.
class RequestReader {
 public:
  // Reads and checks the files; UsageError for --prefix-file with --prefix-tab.
  explicit RequestReader(const RequestFiles& files);

  bool has_constraints() const { return include_.given() || avoid_lines_.given() || !avoid_all_.empty(); }
  bool has_positive_constraints() const { return include_.given(); }

  // UsageError unless each per-line file has `input_lines` lines (the input is a file).
  void check_count(size_t input_lines, const std::string& input_name) const;
  // UsageError when a per-line file has lines left over after `input_lines` (stdin's end).
  void check_used(size_t input_lines) const;
  // Every phrase through `check` (which throws UsageError for one the model cannot write),
  // before anything is translated; the error then names FILE:LINE.
  void check_phrases(const std::function<void(const text::PhraseConstraints&)>& check) const;

  // The requests of input lines first .. first + lines.size() - 1 (0-based); UsageError when a
  // per-line file ends before them.
  std::vector<TranslationRequest> requests(std::vector<std::string> lines, size_t first) const;

 private:
  // A file with one line per input line, `unit` naming what a line holds in the errors.
  class PerLineFile {
   public:
    PerLineFile(std::string path, std::string unit);
    bool given() const { return !path_.empty(); }
    const std::vector<std::string>& lines() const { return lines_; }
    const std::string& path() const { return path_; }
    void check_count(size_t input_lines, const std::string& input_name) const;
    void check_covers(size_t first, size_t count) const;
    void check_used(size_t input_lines) const;

   private:
    std::string path_, unit_;
    std::vector<std::string> lines_;
  };

  bool prefix_tab_;
  PerLineFile prefixes_, include_, avoid_lines_;
  std::vector<std::string> avoid_all_;
};

// Standard input as a filter: `chunk` gets the lines one at a time when `line_at_a_time` (a
// terminal), in chunks of 1,024 otherwise, or all at once with `whole_input`; `several_lines`
// is set before the last chunk goes. A UTF-8 BOM on the first line is dropped; an invalid
// UTF-8 line is a RuntimeError ("<stdin>:N: not valid UTF-8") once the lines before it went.
void read_chunks(std::istream& in, bool line_at_a_time, bool whole_input,
                 const std::function<void(std::vector<std::string>)>& chunk, bool& several_lines);

}  // namespace nmt::decode
