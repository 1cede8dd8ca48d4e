#pragma once
// Where `nmt bleu`'s segments come from, read as the sacreBLEU 2.6.0 command line reads them:
// system and reference files, tab-separated systems on standard input, and the test sets of
// sacreBLEU's local cache (-t), which nmt reads but never downloads. Errors name the file and
// line (RuntimeError) or the options (UsageError). Torch-free.
#include <cstdio>
#include <istream>
#include <string>
#include <vector>

#include "nmt/metrics/bleu_options.h"
#include "nmt/metrics/sacrebleu_report.h"

namespace nmt::metrics {

// A file's segments: split on '\n' only, each line rstripped (Python whitespace, so a CRLF's
// '\r' and a trailing NBSP go too); invalid UTF-8 is reported with the file and line, as
// Python's decoder would refuse the file.
std::vector<std::string> read_segments(const std::string& path);

// One stream per reference: a file each, or `num_refs` (>= 1) tab-separated fields of one file.
std::vector<std::vector<std::string>> read_references(const std::vector<std::string>& paths, int num_refs);

// Systems as sacreBLEU reads standard input without -i: universal newlines, each line rstripped
// and split on tabs, one system per field (the first line sets how many), "System 1", ...
std::vector<NamedSystem> read_system_columns(std::istream& in);

// The references of every test set of `test_sets` (comma-separated: concatenated, as sacreBLEU
// does) for `pair`, from $SACREBLEU (default ~/.sacrebleu)/TEST/TEST.SRC-TGT.FIELD.
std::vector<std::vector<std::string>> test_set_references(const std::string& test_sets, const std::string& pair);

// --echo FIELD...: the fields of -t's test sets side by side, tab-separated, to `out`
// (sacreBLEU's utils.print_test_set).
void echo_test_set(const BleuCommandOptions& options, std::FILE* out);

struct BleuInputs {
  std::vector<NamedSystem> systems;
  std::vector<std::vector<std::string>> refs;  // one stream per reference
  std::vector<std::string> ref_names;          // one per stream, for messages
  bool from_stdin = false;                     // the systems came unnamed, from standard input
};

// The command's systems and references: sacreBLEU's `REF... -i SYS...` (or `REF... < SYS`),
// `-t TEST -l PAIR -i SYS`, or nmt's `-r REF ... SYS...`; every system has every reference's
// number of lines (UsageError naming both otherwise).
BleuInputs read_bleu_inputs(const BleuCommandOptions& options);

}  // namespace nmt::metrics
