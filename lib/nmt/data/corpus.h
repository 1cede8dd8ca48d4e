#pragma once
// Parallel corpora: readers for aligned file pairs (Multi30k) and tab-separated pair files
// (Tatoeba / manythings fra.txt), a seeded train/valid/test split and a writer.
//
// The readers are byte-faithful apart from ASCII whitespace: each side is trimmed and runs of
// ASCII whitespace (space, tab, CR, VT, FF) become one space. Unicode normalisation (NFKC, the
// many Unicode spaces) is left to the SentencePiece normaliser inside the subword model.
//
// Bad lines are skipped and counted, never silently: the returned ReadReport holds one summary
// warning per file for the caller to print. With ReadOptions::strict the first bad line throws
// RuntimeError "FILE:LINE: problem" instead.
#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace nmt::data {

// Sentence pairs: source[i] translates to target[i]. UTF-8, one sentence per entry, no newlines.
struct ParallelCorpus {
  std::vector<std::string> source;
  std::vector<std::string> target;

  size_t size() const { return source.size(); }
  bool empty() const { return source.empty(); }
};

struct ReadOptions {
  // A side longer than this many Unicode code points (after whitespace normalisation) is skipped;
  // 0 = no limit. 1000 keeps every natural sentence (the longest in Multi30k is 255, in the
  // Tatoeba mirror 106) but drops pasted paragraphs and garbage lines whose quadratic attention
  // cost would dominate a batch.
  size_t max_chars = 1000;
  // Throw RuntimeError "FILE:LINE: problem" on the first bad line instead of skipping it.
  bool strict = false;
  // read_tsv only: take the second column as source and the first as target (French→English
  // from fra.txt).
  bool reverse = false;
};

// Why a line was skipped. The order is the order of the checks.
enum class SkipReason : size_t {
  kNulByte = 0,     // contains a NUL byte (binary data, UTF-16 files)
  kInvalidUtf8,     // not valid UTF-8 (overlong forms, surrogates, truncated sequences...)
  kMissingTab,      // TSV line without a tab between the two sides
  kEmptySide,       // a side is empty after trimming whitespace
  kTooLong,         // a side is longer than ReadOptions::max_chars code points
};
inline constexpr size_t kNumSkipReasons = 5;

// Human-readable name of a reason, as used in warnings and strict errors ("invalid UTF-8").
const char* skip_reason_text(SkipReason reason);

// Skips attributed to one file: how many lines per reason and the first (1-based) line number.
struct FileSkips {
  std::string path;
  std::array<size_t, kNumSkipReasons> count{};
  std::array<size_t, kNumSkipReasons> first_line{};  // 0 when count is 0

  size_t total() const;
  size_t of(SkipReason r) const { return count[static_cast<size_t>(r)]; }
  size_t first(SkipReason r) const { return first_line[static_cast<size_t>(r)]; }
};

struct ReadReport {
  size_t lines = 0;    // line pairs (parallel) or lines (TSV) examined
  size_t kept = 0;     // pairs in the corpus
  size_t skipped = 0;  // pairs dropped; a pair bad on both sides counts once here
  // One entry per input file (two for read_parallel, one for read_tsv). For a pair bad on both
  // sides each file counts its own line.
  std::vector<FileSkips> files;
  // At most one summary line per file that had skips, e.g.
  // "train.fr: skipped 3 lines: 2 invalid UTF-8 (first at line 17), 1 empty side (first at line 40)".
  std::vector<std::string> warnings;
};

struct ReadResult {
  ParallelCorpus corpus;
  ReadReport report;
};

// Reads PREFIX.SRC_LANG and PREFIX.TGT_LANG (e.g. "data/multi30k/train", "en", "fr"), line N of
// one translating line N of the other. Throws RuntimeError when a file is missing, is a
// directory or is unreadable, and when the two files have different line counts (the message
// names both files and both counts). A UTF-8 BOM at the start of either file is dropped and a
// trailing '\r' (CRLF files) is stripped.
ReadResult read_parallel(const std::string& prefix, const std::string& src_lang, const std::string& tgt_lang,
                         const ReadOptions& options = {});

// Reads a tab-separated pair file "English<TAB>French[<TAB>attribution...]": the first column is
// the source and the second the target (swapped with options.reverse); further columns are
// ignored. Same file errors, BOM and CRLF handling as read_parallel.
ReadResult read_tsv(const std::string& path, const ReadOptions& options = {});

// The streaming form of read_parallel / read_tsv for corpora larger than memory (`nmt prepare`):
// the same checks, normalisation, skip counts and warnings, one pair at a time. Files ending in
// .gz, .xz or .zst are decompressed as they are read (LineReader).
class PairStream {
 public:
  static PairStream parallel(const std::string& prefix, const std::string& src_lang, const std::string& tgt_lang,
                             const ReadOptions& options = {});
  static PairStream tsv(const std::string& path, const ReadOptions& options = {});
  PairStream(PairStream&&) noexcept;
  ~PairStream();

  // The next good pair; false at the end. Parallel files of different lengths throw UsageError
  // naming both files and the line where one ended (the whole of each is not counted first).
  bool next(std::string& source, std::string& target);
  // The skip report so far; complete (with its warnings) once next() has returned false.
  const ReadReport& report() const { return report_; }

 private:
  struct Files;
  PairStream(std::unique_ptr<Files> files, ReadOptions options);
  std::unique_ptr<Files> files_;
  ReadOptions options_;
  ReadReport report_;
};

struct CorpusSplit {
  ParallelCorpus train, valid, test;
};

// Holds out n_valid and n_test pairs chosen by a seeded shuffle (splitmix64 + Fisher-Yates, so the
// same seed gives the same split with any compiler or standard library). Each part keeps the
// input order. The three parts are disjoint and together hold every pair. Throws UsageError when
// n_valid + n_test exceeds the corpus size. Note: identical source sentences with different
// translations (common in Tatoeba) may land in different parts.
CorpusSplit split_corpus(const ParallelCorpus& corpus, size_t n_valid, size_t n_test, uint64_t seed);

// Writes PREFIX.SRC_LANG and PREFIX.TGT_LANG, one sentence per line with '\n' endings, creating
// the parent directory if needed; each file is replaced atomically. Throws RuntimeError when the
// sides differ in size or a sentence contains a line break (it would break the alignment).
void write_parallel(const std::string& prefix, const std::string& src_lang, const std::string& tgt_lang,
                    const ParallelCorpus& corpus);

}  // namespace nmt::data
