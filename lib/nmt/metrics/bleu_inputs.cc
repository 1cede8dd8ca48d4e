#include "nmt/metrics/bleu_inputs.h"

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <iterator>
#include <utility>

#include <unistd.h>

#include <fmt/format.h>

#include "nmt/metrics/tokenizer.h"
#include "nmt/text/unicode.h"
#include "nmt/util/error.h"
#include "nmt/util/io.h"

namespace nmt::metrics {
namespace {

std::string count_lines(size_t n) { return fmt::format("{} line{}", n, n == 1 ? "" : "s"); }

std::string rstripped(const std::string& s) { return std::string(text::python_rstrip(s)); }

// Python's s.split(separator, max_parts - 1); max_parts 0: no limit.
std::vector<std::string> split(const std::string& s, char separator, size_t max_parts = 0) {
  std::vector<std::string> parts;
  size_t start = 0, at = 0;
  while ((max_parts == 0 || parts.size() + 1 < max_parts) && (at = s.find(separator, start)) != std::string::npos) {
    parts.push_back(s.substr(start, at - start));
    start = at + 1;
  }
  parts.push_back(s.substr(start));
  return parts;
}

void check_utf8(const std::string& line, const std::string& where, size_t line_no) {
  if (auto problem = text::find_utf8_error(line))
    throw RuntimeError(fmt::format("{}:{}: invalid UTF-8 ({} at byte {} of the line)", where, line_no, problem->reason,
                                   problem->offset + 1));
}

// sacreBLEU's local cache: the layout `sacrebleu -t TEST -l SRC-TGT` leaves there; '/' of a
// subset name becomes '_', ':' of a field name '-'.
std::string sacrebleu_dir() {
  if (const char* env = std::getenv("SACREBLEU")) return env;
  const char* home = std::getenv("HOME");
  return std::string(home ? home : "") + "/.sacrebleu";
}

using Fields = std::vector<std::pair<std::string, std::string>>;  // (field, path)

// The test set's fields present in the cache: src first, then the references, then the rest.
Fields test_set_fields(const std::string& test_set, const std::string& pair) {
  const std::filesystem::path dir = std::filesystem::path(sacrebleu_dir()) / test_set;
  const std::string prefix = replace_all(test_set, "/", "_") + "." + pair + ".";
  Fields fields;
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(dir, ec)) {
    const std::string file = entry.path().filename().string();
    if (file.rfind(prefix, 0) == 0 && entry.is_regular_file()) fields.emplace_back(file.substr(prefix.size()), entry.path().string());
  }
  const auto rank = [](const std::string& f) { return f == "src" ? 0 : f.rfind("ref", 0) == 0 ? 1 : 2; };
  std::sort(fields.begin(), fields.end(), [&](const auto& a, const auto& b) {
    return std::make_pair(rank(a.first), a.first) < std::make_pair(rank(b.first), b.first);
  });
  if (fields.empty())
    throw RuntimeError(fmt::format("-t {} -l {}: no files {}/{}* in sacreBLEU's cache ($SACREBLEU, default ~/.sacrebleu); "
                                   "nmt never downloads: fetch them once with `sacrebleu -t {} -l {} --echo src`, or give reference files",
                                   test_set, pair, dir.string(), prefix, test_set, pair));
  return fields;
}

// The path of --echo's field `wanted` ("ref" alone: the first reference, for backwards
// compatibility, as sacreBLEU).
std::string echo_field_path(const Fields& fields, std::string wanted, const std::string& test_set,
                            const std::string& pair) {
  const auto has = [&](const std::string& name) {
    return std::find_if(fields.begin(), fields.end(), [&](const auto& f) { return f.first == name; });
  };
  if (wanted == "ref" && has("ref") == fields.end()) {
    for (const auto& f : fields)
      if (f.first.rfind("ref", 0) == 0) { wanted = f.first; break; }
  }
  const auto it = has(wanted);
  if (it != fields.end()) return it->second;
  std::string names;
  for (const auto& f : fields) names += (names.empty() ? "" : ", ") + f.first;
  throw UsageError(fmt::format("--echo: no field {} in test set {} for {} (available: {})", wanted, test_set, pair, names));
}

// --echo's field names for one test set: as given, or every field for "all".
std::vector<std::string> echo_fields(const std::vector<std::string>& echo, const Fields& fields) {
  if (echo.size() == 1 && echo[0] == "all") {
    std::vector<std::string> all;
    for (const auto& f : fields) all.push_back(f.first);
    return all;
  }
  if (std::find(echo.begin(), echo.end(), "all") != echo.end())
    throw UsageError("--echo all cannot be combined with other fields");
  return echo;
}

// The systems: -i files, the positional files of nmt's `-r REF HYP...`, or standard input.
std::vector<NamedSystem> read_systems(const std::vector<std::string>& paths, bool paired) {
  if (paths.empty()) {
    if (::isatty(STDIN_FILENO))
      throw UsageError("no hypothesis: give -i HYP, or pipe the hypotheses (tab-separated systems) to standard input");
    return read_system_columns(std::cin);
  }
  std::vector<NamedSystem> systems;
  for (const std::string& path : paths) {
    if (std::any_of(systems.begin(), systems.end(), [&](const auto& s) { return s.name == path; })) {
      if (paired && path == systems[0].name) continue;  // the baseline named again, as sacreBLEU skips it
      throw UsageError(fmt::format("{}: the same file is given twice as a system", path));
    }
    systems.push_back(NamedSystem{path, read_segments(path)});
    if (systems.back().lines.empty()) throw RuntimeError(fmt::format("{}: the hypothesis file contains no line", path));
  }
  return systems;
}

void check_line_counts(const BleuInputs& in) {
  for (const NamedSystem& s : in.systems)
    for (size_t k = 0; k < in.refs.size(); ++k)
      if (in.refs[k].size() != s.lines.size())
        throw UsageError(fmt::format("line counts differ: hypothesis {} has {}, reference {} has {}", s.name,
                                     count_lines(s.lines.size()), in.ref_names[std::min(k, in.ref_names.size() - 1)],
                                     count_lines(in.refs[k].size())));
}

// The references and their names: -t's test sets, or the reference files.
void read_references_of(const BleuCommandOptions& o, const std::vector<std::string>& ref_paths, BleuInputs& in) {
  in.ref_names = ref_paths;
  if (!o.test_set.empty()) {
    if (!ref_paths.empty()) throw UsageError("give either a test set (-t) or reference files, not both");
    if (o.language_pair.empty()) throw UsageError("-t needs a language pair (-l SRC-TGT)");
    if (o.num_refs != 1) throw UsageError("--num-refs splits a reference file of one's own; it does not go with -t");
    in.refs = test_set_references(o.test_set, o.language_pair);
    in.ref_names.assign(in.refs.size(), "of -t " + o.test_set);
    return;
  }
  if (ref_paths.empty()) throw UsageError("no reference file: give REF (or -r REF), or a test set with -t");
  in.refs = read_references(ref_paths, o.num_refs);
  if (o.num_refs > 1) in.ref_names.assign(in.refs.size(), ref_paths[0]);
}

}  // namespace

std::vector<std::string> read_segments(const std::string& path) {
  std::vector<std::string> lines = read_lines(path);
  for (size_t i = 0; i < lines.size(); ++i) {
    check_utf8(lines[i], path, i + 1);
    lines[i] = rstripped(lines[i]);
  }
  return lines;
}

std::vector<std::vector<std::string>> read_references(const std::vector<std::string>& paths, int num_refs) {
  if (num_refs > 1 && paths.size() > 1)
    throw UsageError("--num-refs splits one reference file on tabs; give a single reference file with it");
  std::vector<std::vector<std::string>> refs;
  if (num_refs == 1) {
    for (const std::string& r : paths) refs.push_back(read_segments(r));
    return refs;
  }
  refs.resize(static_cast<size_t>(num_refs));
  const std::vector<std::string> rows = read_segments(paths[0]);
  for (size_t i = 0; i < rows.size(); ++i) {
    const std::vector<std::string> fields = split(rows[i], '\t', static_cast<size_t>(num_refs));
    if (fields.size() != static_cast<size_t>(num_refs))
      throw RuntimeError(fmt::format("{}:{}: expected {} tab-separated references, found {}", paths[0], i + 1,
                                     num_refs, fields.size()));
    for (size_t k = 0; k < fields.size(); ++k) refs[k].push_back(fields[k]);
  }
  return refs;
}

std::vector<NamedSystem> read_system_columns(std::istream& in) {
  std::string all((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  all = replace_all(replace_all(all, "\r\n", "\n"), "\r", "\n");
  if (all.empty()) throw RuntimeError("standard input: no hypothesis line");
  if (all.back() == '\n') all.pop_back();
  std::vector<NamedSystem> systems;
  const std::vector<std::string> rows = split(all, '\n');
  for (size_t i = 0; i < rows.size(); ++i) {
    check_utf8(rows[i], "standard input", i + 1);
    const std::vector<std::string> fields = split(rstripped(rows[i]), '\t');
    if (systems.empty())
      for (size_t k = 0; k < fields.size(); ++k) systems.push_back({fmt::format("System {}", k + 1), {}});
    if (fields.size() != systems.size())
      throw RuntimeError(fmt::format("standard input:{}: {} tab-separated systems, the first line has {}", i + 1,
                                     fields.size(), systems.size()));
    for (size_t k = 0; k < fields.size(); ++k) systems[k].lines.push_back(rstripped(fields[k]));
  }
  return systems;
}

std::vector<std::vector<std::string>> test_set_references(const std::string& test_sets, const std::string& pair) {
  std::vector<std::vector<std::string>> refs;
  for (const std::string& test_set : split(test_sets, ',')) {
    std::vector<std::string> paths;
    for (const auto& [field, path] : test_set_fields(test_set, pair))
      if (field.rfind("ref", 0) == 0) paths.push_back(path);
    if (paths.empty()) throw RuntimeError(fmt::format("-t {} -l {}: the cache holds no reference file", test_set, pair));
    if (refs.empty()) refs.resize(paths.size());
    if (paths.size() != refs.size())
      throw RuntimeError(fmt::format("-t {}: {} references, the first test set has {}", test_set, paths.size(), refs.size()));
    for (size_t k = 0; k < paths.size(); ++k) {
      std::vector<std::string> lines = read_segments(paths[k]);
      refs[k].insert(refs[k].end(), lines.begin(), lines.end());
    }
  }
  return refs;
}

void echo_test_set(const BleuCommandOptions& o, std::FILE* out) {
  for (const std::string& test_set : split(o.test_set, ',')) {
    const Fields fields = test_set_fields(test_set, o.language_pair);
    std::vector<std::vector<std::string>> columns;
    for (const std::string& wanted : echo_fields(o.echo, fields))
      columns.push_back(read_lines(echo_field_path(fields, wanted, test_set, o.language_pair)));
    const size_t n = std::min_element(columns.begin(), columns.end(), [](const auto& a, const auto& b) {
                       return a.size() < b.size();
                     })->size();
    for (size_t i = 0; i < n; ++i) {
      std::string line;
      for (size_t k = 0; k < columns.size(); ++k) line += (k ? "\t" : "") + rstripped(columns[k][i]);
      line += "\n";
      std::fwrite(line.data(), 1, line.size(), out);
    }
  }
}

BleuInputs read_bleu_inputs(const BleuCommandOptions& o) {
  const bool nmt_form = !o.refs.empty();  // `-r REF HYP...`: the positional files are systems
  std::vector<std::string> ref_paths = o.refs;
  std::vector<std::string> system_paths = o.inputs;
  if (nmt_form && o.inputs.empty()) system_paths = o.positionals;
  else ref_paths.insert(ref_paths.end(), o.positionals.begin(), o.positionals.end());
  if (nmt_form && system_paths.empty()) throw UsageError("no hypothesis file: give HYP or -i HYP");
  BleuInputs in;
  read_references_of(o, ref_paths, in);
  in.from_stdin = system_paths.empty();
  in.systems = read_systems(system_paths, o.paired_bs || o.paired_ar);
  check_line_counts(in);
  return in;
}

}  // namespace nmt::metrics
