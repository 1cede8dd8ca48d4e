#include "nmt/data/corpus.h"

#include <algorithm>
#include <filesystem>
#include <numeric>
#include <optional>
#include <string_view>

#include <fmt/format.h>

#include "nmt/data/line_reader.h"
#include "nmt/util/rng.h"
#include "nmt/util/error.h"
#include "nmt/util/io.h"

namespace nmt::data {
namespace {

// Number of code points in `s`, or nullopt when it is not valid UTF-8 (RFC 3629: no overlong
// forms, no surrogates, nothing above U+10FFFF). Private so this file needs nothing from text/.
std::optional<size_t> utf8_length(std::string_view s) {
  size_t n = 0, i = 0;
  const size_t size = s.size();
  while (i < size) {
    const auto c = static_cast<unsigned char>(s[i]);
    size_t extra;
    uint32_t cp;
    if (c < 0x80) {
      ++i;
      ++n;
      continue;
    }
    if (c >= 0xC2 && c <= 0xDF) {
      extra = 1, cp = c & 0x1F;
    } else if (c >= 0xE0 && c <= 0xEF) {
      extra = 2, cp = c & 0x0F;
    } else if (c >= 0xF0 && c <= 0xF4) {
      extra = 3, cp = c & 0x07;
    } else {
      return std::nullopt;  // stray continuation byte, C0/C1 overlong lead, or F5..FF
    }
    if (i + extra >= size) return std::nullopt;  // truncated sequence at the end
    for (size_t k = 1; k <= extra; ++k) {
      const auto cc = static_cast<unsigned char>(s[i + k]);
      if ((cc & 0xC0) != 0x80) return std::nullopt;
      cp = (cp << 6) | (cc & 0x3F);
    }
    if ((extra == 2 && (cp < 0x800 || (cp >= 0xD800 && cp <= 0xDFFF))) ||
        (extra == 3 && (cp < 0x10000 || cp > 0x10FFFF)))
      return std::nullopt;
    i += extra + 1;
    ++n;
  }
  return n;
}

bool is_ascii_space(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\v' || c == '\f'; }

// Trims and collapses runs of ASCII whitespace to one space. Unicode spaces are left to NFKC.
std::string normalise_whitespace(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  bool pending_space = false;
  for (char c : s) {
    if (is_ascii_space(c)) {
      pending_space = !out.empty();
      continue;
    }
    if (pending_space) out.push_back(' ');
    pending_space = false;
    out.push_back(c);
  }
  return out;
}

// Strips the CR of a CRLF ending.
std::string_view strip_cr(std::string_view line) {
  if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
  return line;
}

// Checks that apply to the whole raw line (before splitting a TSV line into sides).
std::optional<SkipReason> check_raw(std::string_view line) {
  if (line.find('\0') != std::string_view::npos) return SkipReason::kNulByte;
  if (!utf8_length(line)) return SkipReason::kInvalidUtf8;
  return std::nullopt;
}

// Normalises one side into `out` and checks it.
std::optional<SkipReason> make_side(std::string_view raw, const ReadOptions& options, std::string* out) {
  *out = normalise_whitespace(raw);
  if (out->empty()) return SkipReason::kEmptySide;
  if (options.max_chars > 0 && *utf8_length(*out) > options.max_chars) return SkipReason::kTooLong;
  return std::nullopt;
}

// Checks a raw TSV line and normalises its first two columns (later ones, the attribution in
// newer fra.txt releases, are ignored).
std::optional<SkipReason> split_tsv_line(std::string_view line, const ReadOptions& options, std::string* first,
                                         std::string* second) {
  if (std::optional<SkipReason> bad = check_raw(line)) return bad;
  const size_t tab = line.find('\t');
  if (tab == std::string_view::npos) return SkipReason::kMissingTab;
  const size_t tab2 = line.find('\t', tab + 1);
  if (std::optional<SkipReason> bad = make_side(line.substr(0, tab), options, first)) return bad;
  return make_side(line.substr(tab + 1, tab2 == std::string_view::npos ? std::string_view::npos : tab2 - tab - 1),
                   options, second);
}

void record(FileSkips& file, SkipReason reason, size_t line_no, const ReadOptions& options) {
  if (options.strict)
    throw RuntimeError(fmt::format("{}:{}: {}", file.path, line_no, skip_reason_text(reason)));
  const auto r = static_cast<size_t>(reason);
  if (file.count[r]++ == 0) file.first_line[r] = line_no;
}

std::string describe(SkipReason reason, const ReadOptions& options) {
  if (reason == SkipReason::kTooLong) return fmt::format("longer than {} characters", options.max_chars);
  return skip_reason_text(reason);
}

void add_warnings(ReadReport& report, const ReadOptions& options) {
  for (const FileSkips& f : report.files) {
    if (f.total() == 0) continue;
    std::string msg = fmt::format("{}: skipped {} line{}:", f.path, f.total(), f.total() == 1 ? "" : "s");
    const char* sep = " ";
    for (size_t r = 0; r < kNumSkipReasons; ++r) {
      if (f.count[r] == 0) continue;
      msg += fmt::format("{}{} {} (first at line {})", sep, f.count[r],
                         describe(static_cast<SkipReason>(r), options), f.first_line[r]);
      sep = ", ";
    }
    report.warnings.push_back(std::move(msg));
  }
}

void check_alignment(const std::string& path, const ParallelCorpus& corpus) {
  if (corpus.source.size() != corpus.target.size())
    throw RuntimeError(fmt::format("{}: corpus sides differ in size ({} source, {} target sentences)", path,
                                   corpus.source.size(), corpus.target.size()));
}

}  // namespace

const char* skip_reason_text(SkipReason reason) {
  switch (reason) {
    case SkipReason::kNulByte: return "contains a NUL byte";
    case SkipReason::kInvalidUtf8: return "invalid UTF-8";
    case SkipReason::kMissingTab: return "no tab between the two sides";
    case SkipReason::kEmptySide: return "empty side";
    case SkipReason::kTooLong: return "too long";
  }
  return "unknown problem";
}

size_t FileSkips::total() const { return std::accumulate(count.begin(), count.end(), size_t{0}); }

ReadResult read_parallel(const std::string& prefix, const std::string& src_lang, const std::string& tgt_lang,
                         const ReadOptions& options) {
  const std::string src_path = prefix + "." + src_lang;
  const std::string tgt_path = prefix + "." + tgt_lang;
  const std::vector<std::string> src_lines = read_lines(src_path);
  const std::vector<std::string> tgt_lines = read_lines(tgt_path);
  if (src_lines.size() != tgt_lines.size())
    // The files the user gave do not go together: a usage error (exit 2), as for eval/bleu.
    throw UsageError(fmt::format("{} has {} lines but {} has {} lines; parallel files must be line-aligned",
                                   src_path, src_lines.size(), tgt_path, tgt_lines.size()));

  ReadResult result;
  ReadReport& report = result.report;
  report.files.resize(2);
  report.files[0].path = src_path;
  report.files[1].path = tgt_path;
  report.lines = src_lines.size();
  result.corpus.source.reserve(src_lines.size());
  result.corpus.target.reserve(src_lines.size());

  std::string side[2];
  for (size_t i = 0; i < src_lines.size(); ++i) {
    bool ok = true;
    for (int s = 0; s < 2; ++s) {
      const std::string_view line = strip_cr(s == 0 ? src_lines[i] : tgt_lines[i]);
      std::optional<SkipReason> bad = check_raw(line);
      if (!bad) bad = make_side(line, options, &side[s]);
      if (bad) {
        record(report.files[s], *bad, i + 1, options);
        ok = false;
      }
    }
    if (!ok) {
      ++report.skipped;
      continue;
    }
    result.corpus.source.push_back(std::move(side[0]));
    result.corpus.target.push_back(std::move(side[1]));
  }
  report.kept = result.corpus.size();
  add_warnings(report, options);
  return result;
}

ReadResult read_tsv(const std::string& path, const ReadOptions& options) {
  const std::vector<std::string> lines = read_lines(path);
  ReadResult result;
  ReadReport& report = result.report;
  report.files.resize(1);
  report.files[0].path = path;
  report.lines = lines.size();
  FileSkips& skips = report.files[0];

  std::string first, second;
  for (size_t i = 0; i < lines.size(); ++i) {
    const std::optional<SkipReason> bad = split_tsv_line(strip_cr(lines[i]), options, &first, &second);
    if (bad) {
      record(skips, *bad, i + 1, options);
      ++report.skipped;
      continue;
    }
    if (options.reverse) std::swap(first, second);
    result.corpus.source.push_back(std::move(first));
    result.corpus.target.push_back(std::move(second));
  }
  report.kept = result.corpus.size();
  add_warnings(report, options);
  return result;
}

struct PairStream::Files {
  std::unique_ptr<LineReader> a, b;  // b: the target file of a parallel corpus, null for TSV
};

PairStream::PairStream(std::unique_ptr<Files> files, ReadOptions options)
    : files_(std::move(files)), options_(options) {
  report_.files.resize(files_->b ? 2 : 1);
  report_.files[0].path = files_->a->path();
  if (files_->b) report_.files[1].path = files_->b->path();
}
PairStream::PairStream(PairStream&&) noexcept = default;
PairStream::~PairStream() = default;

PairStream PairStream::parallel(const std::string& prefix, const std::string& src_lang, const std::string& tgt_lang,
                                const ReadOptions& options) {
  auto files = std::make_unique<Files>();
  files->a = std::make_unique<LineReader>(prefix + "." + src_lang);
  files->b = std::make_unique<LineReader>(prefix + "." + tgt_lang);
  return PairStream(std::move(files), options);
}

PairStream PairStream::tsv(const std::string& path, const ReadOptions& options) {
  auto files = std::make_unique<Files>();
  files->a = std::make_unique<LineReader>(path);
  return PairStream(std::move(files), options);
}

bool PairStream::next(std::string& source, std::string& target) {
  std::string raw[2];
  while (true) {
    if (!files_->b) {
      if (!files_->a->next(raw[0])) break;
      ++report_.lines;
      const std::optional<SkipReason> bad = split_tsv_line(strip_cr(raw[0]), options_, &source, &target);
      if (bad) {
        record(report_.files[0], *bad, report_.lines, options_);
        ++report_.skipped;
        continue;
      }
      if (options_.reverse) std::swap(source, target);
      ++report_.kept;
      return true;
    }
    const bool more_a = files_->a->next(raw[0]);
    const bool more_b = files_->b->next(raw[1]);
    if (more_a != more_b) {
      const LineReader& longer = more_a ? *files_->a : *files_->b;
      const LineReader& shorter = more_a ? *files_->b : *files_->a;
      throw UsageError(fmt::format("{} ends after {} lines but {} goes on; parallel files must be line-aligned",
                                   shorter.path(), shorter.line_number(), longer.path()));
    }
    if (!more_a) break;
    ++report_.lines;
    bool ok = true;
    std::string* out[2] = {&source, &target};
    for (int s = 0; s < 2; ++s) {
      const std::string_view line = strip_cr(raw[s]);
      std::optional<SkipReason> bad = check_raw(line);
      if (!bad) bad = make_side(line, options_, out[s]);
      if (bad) {
        record(report_.files[static_cast<size_t>(s)], *bad, report_.lines, options_);
        ok = false;
      }
    }
    if (!ok) {
      ++report_.skipped;
      continue;
    }
    ++report_.kept;
    return true;
  }
  if (report_.warnings.empty()) add_warnings(report_, options_);
  return false;
}

CorpusSplit split_corpus(const ParallelCorpus& corpus, size_t n_valid, size_t n_test, uint64_t seed) {
  check_alignment("split_corpus", corpus);
  const size_t n = corpus.size();
  if (n_valid > n || n_test > n || n_valid + n_test > n)
    throw UsageError(fmt::format("cannot hold out {} validation + {} test pairs from a corpus of {} pairs",
                                 n_valid, n_test, n));

  std::vector<size_t> order(n);
  std::iota(order.begin(), order.end(), size_t{0});
  SplitMix64 rng(mix_seed(seed, 0x5350'4C49'5400ULL));  // "SPLIT": keeps this stream apart from others
  shuffle_in_place(order, rng);

  // 0 = train, 1 = valid, 2 = test; then walk in input order so each part keeps it.
  std::vector<unsigned char> part(n, 0);
  for (size_t k = 0; k < n_test; ++k) part[order[k]] = 2;
  for (size_t k = n_test; k < n_test + n_valid; ++k) part[order[k]] = 1;

  CorpusSplit split;
  ParallelCorpus* parts[3] = {&split.train, &split.valid, &split.test};
  for (size_t i = 0; i < n; ++i) {
    parts[part[i]]->source.push_back(corpus.source[i]);
    parts[part[i]]->target.push_back(corpus.target[i]);
  }
  return split;
}

void write_parallel(const std::string& prefix, const std::string& src_lang, const std::string& tgt_lang,
                    const ParallelCorpus& corpus) {
  check_alignment(prefix, corpus);
  const std::string paths[2] = {prefix + "." + src_lang, prefix + "." + tgt_lang};
  const std::vector<std::string>* sides[2] = {&corpus.source, &corpus.target};

  const std::filesystem::path parent = std::filesystem::path(paths[0]).parent_path();
  if (!parent.empty()) {
    std::error_code ec;
    std::filesystem::create_directories(parent, ec);
    if (ec) throw RuntimeError(fmt::format("{}: cannot create directory: {}", parent.string(), ec.message()));
  }
  for (int s = 0; s < 2; ++s) {
    std::string content;
    for (size_t i = 0; i < sides[s]->size(); ++i) {
      const std::string& sentence = (*sides[s])[i];
      if (sentence.find_first_of("\r\n") != std::string::npos)
        throw RuntimeError(fmt::format("{}: sentence {} contains a line break", paths[s], i + 1));
      content += sentence;
      content += '\n';
    }
    write_file_atomic(paths[s], content);
  }
}

}  // namespace nmt::data
