#include "nmt/data/prepare.h"

#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <future>
#include <thread>
#include <vector>

#include <fmt/format.h>

#include "nmt/data/dataset.h"
#include "nmt/util/rng.h"
#include "nmt/util/error.h"
#include "nmt/util/io.h"
#include "nmt/util/option_spec.h"

namespace nmt::data {
namespace fs = std::filesystem;
namespace {

using Clock = std::chrono::steady_clock;
double seconds_since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

PairStream open_corpus(const PrepareOptions& o) {
  if (!o.train_prefix.empty()) return PairStream::parallel(o.train_prefix, o.src_lang, o.tgt_lang, o.read);
  return PairStream::tsv(o.train_tsv, o.read);
}

std::string corpus_name(const PrepareOptions& o) {
  return !o.train_prefix.empty() ? fmt::format("{}.{{{},{}}}", o.train_prefix, o.src_lang, o.tgt_lang) : o.train_tsv;
}

void check_options(const PrepareOptions& o) {
  if (o.train_prefix.empty() == o.train_tsv.empty())
    throw OptionError(std::vector<std::string>{"train_prefix", "train_tsv"}, "give exactly one of {0} PREFIX or {1} FILE");
  if (o.out_dir.empty()) throw OptionError("out_dir", " is required");
  if (fs::exists(fs::symlink_status(o.out_dir)))
    throw OptionError("out_dir", fmt::format(" {} exists; `nmt prepare` writes a new directory and never overwrites one",
                                             o.out_dir));
  if (o.train_tsv == "-" && o.subword_model.empty())
    throw OptionError(std::vector<std::string>{"train_tsv", "subword_model"},
                      "{0} - (standard input) can be read only once: give {1} FILE, or a file instead of -");
  if (o.shard_pairs == 0) throw OptionError("shard_pairs", " is 0; must be at least 1");
  if (o.max_len == 0 || o.max_len > kDatasetMaxLength)
    throw OptionError("max_len", fmt::format(" must be in 1..{}", kDatasetMaxLength));
  if (o.threads < 1) throw OptionError("threads", " must be at least 1");
}

// Reservoir sampling (Vitter's algorithm R) of pairs with nmt's own PRNG, so the sample, and the
// subword model trained on it, is the same on every machine.
std::vector<std::string> sample_sentences(const PrepareOptions& o, PrepareReport& report) {
  const size_t want_pairs = std::max<size_t>(1, o.subword.input_sentence_size / 2);
  std::vector<std::string> src, tgt;
  SplitMix64 rng(mix_seed(o.subword.seed, 0x5350'4D53'414DULL));  // "SPMSAM"
  PairStream stream = open_corpus(o);
  std::string s, t;
  uint64_t seen = 0;
  while (stream.next(s, t)) {
    ++seen;
    if (src.size() < want_pairs) {
      src.push_back(s);
      tgt.push_back(t);
      continue;
    }
    const uint64_t k = rng.below(seen);
    if (k < want_pairs) {
      src[k].swap(s);
      tgt[k].swap(t);
    }
  }
  if (seen == 0) throw RuntimeError(fmt::format("{}: no usable sentence pairs", corpus_name(o)));
  src.insert(src.end(), std::make_move_iterator(tgt.begin()), std::make_move_iterator(tgt.end()));
  report.sampled_sentences = src.size();
  return src;
}

struct Chunk {
  std::vector<std::string> src, tgt;
  bool last = false;
};

Chunk read_chunk(PairStream& stream, size_t n) {
  Chunk c;
  c.src.reserve(n);
  c.tgt.reserve(n);
  std::string s, t;
  while (c.src.size() < n) {
    if (!stream.next(s, t)) {
      c.last = true;
      break;
    }
    c.src.push_back(std::move(s));
    c.tgt.push_back(std::move(t));
  }
  return c;
}

struct Encoded {
  std::vector<text::TokenIds> src, tgt;
};

Encoded encode_chunk(const Chunk& c, const text::SubwordModel& sp, int threads) {
  Encoded e;
  e.src.resize(c.src.size());
  e.tgt.resize(c.src.size());
  std::vector<std::thread> pool;
  const size_t n = c.src.size(), per = (n + static_cast<size_t>(threads) - 1) / static_cast<size_t>(threads);
  std::vector<std::exception_ptr> errors(static_cast<size_t>(threads));
  for (int w = 0; w < threads; ++w)
    pool.emplace_back([&, w] {
      try {
        const size_t begin = static_cast<size_t>(w) * per, end = std::min(n, begin + per);
        for (size_t i = begin; i < end; ++i) {
          e.src[i] = sp.encode(c.src[i]);
          e.tgt[i] = sp.encode(c.tgt[i]);
        }
      } catch (...) {
        errors[static_cast<size_t>(w)] = std::current_exception();
      }
    });
  for (auto& t : pool) t.join();
  for (auto& err : errors)
    if (err) std::rethrow_exception(err);
  return e;
}

// Removes the temporary directory unless the dataset was committed.
struct TemporaryDirectory {
  fs::path path;
  bool keep = false;
  ~TemporaryDirectory() {
    std::error_code ec;
    if (!keep) fs::remove_all(path, ec);
  }
};

void log(const PrepareOptions& o, const std::string& line) {
  if (!o.quiet) std::fprintf(stderr, "%s\n", line.c_str());
}

}  // namespace

PrepareReport prepare_dataset(const PrepareOptions& o) {
  check_options(o);
  PrepareReport report;
  const fs::path out = fs::absolute(o.out_dir);
  std::error_code ec;
  fs::create_directories(out.parent_path(), ec);
  TemporaryDirectory temp{out.parent_path() / fmt::format(".{}.partial-{}", out.filename().string(), ::getpid())};
  fs::create_directory(temp.path, ec);
  if (ec) throw RuntimeError(fmt::format("{}: cannot create: {}", temp.path.string(), ec.message()));

  // The subword model: given, or trained on a sample.
  const std::string spm_path = (temp.path / kDatasetSubwordFile).string();
  if (!o.subword_model.empty()) {
    write_file_atomic(spm_path, read_small_file(o.subword_model, kMaxSubwordBytes));
  } else {
    auto t0 = Clock::now();
    std::vector<std::string> sample = sample_sentences(o, report);
    report.sample_seconds = seconds_since(t0);
    log(o, fmt::format("sampled {} sentences for the subword model in {:.1f} s", sample.size(), report.sample_seconds));
    t0 = Clock::now();
    text::SubwordOptions so = o.subword;
    so.input_sentence_size = 0;  // the sample is the input
    text::SubwordModel::train(sample, so, spm_path);
    report.subword_seconds = seconds_since(t0);
    log(o, fmt::format("trained a {} SentencePiece model (vocab {}) in {:.1f} s", so.model_type, so.vocab_size,
                       report.subword_seconds));
  }
  const text::SubwordModel sp = text::SubwordModel::load(spm_path);
  const auto vocab = static_cast<uint64_t>(sp.vocab_size());

  // Encoding: the next chunk is read while this one is encoded.
  const auto t0 = Clock::now();
  DatasetWriter writer(temp.path.string(), vocab <= 65536 ? 2 : 4, o.shard_pairs);
  PairStream stream = open_corpus(o);
  std::future<Chunk> next = std::async(std::launch::async, read_chunk, std::ref(stream), o.chunk_pairs);
  auto last_log = Clock::now();
  while (true) {
    Chunk chunk = next.get();
    if (!chunk.last) next = std::async(std::launch::async, read_chunk, std::ref(stream), o.chunk_pairs);
    const Encoded e = encode_chunk(chunk, sp, o.threads);
    for (size_t i = 0; i < e.src.size(); ++i) {
      if (e.src[i].size() > o.max_len || e.tgt[i].size() > o.max_len) {
        ++report.too_long;
        continue;
      }
      writer.add(e.src[i], e.tgt[i]);
      ++report.pairs;
    }
    if (chunk.last) break;
    if (seconds_since(last_log) > 30) {
      last_log = Clock::now();
      log(o, fmt::format("{} pairs encoded ({:.0f} pairs/s)", report.pairs, report.pairs / seconds_since(t0)));
    }
  }
  DatasetManifest manifest = writer.finish();
  report.encode_seconds = seconds_since(t0);
  const ReadReport& read = stream.report();
  for (const std::string& w : read.warnings) log(o, "warning: " + w);
  report.lines = read.lines;
  report.skipped = read.skipped;
  if (report.pairs == 0) throw RuntimeError(fmt::format("{}: no usable sentence pairs", corpus_name(o)));
  if (report.too_long)
    log(o, fmt::format("warning: {} pairs with a side longer than {} subwords were left out", report.too_long, o.max_len));

  manifest.vocab_size = static_cast<int64_t>(vocab);
  manifest.subword_checksum = file_fnv1a(spm_path);
  manifest.source = {{"corpus", corpus_name(o)}, {"lines", report.lines}, {"skipped", report.skipped},
                     {"too_long", report.too_long}, {"max_len", o.max_len}, {"max_chars", o.read.max_chars},
                     {"subword_model", o.subword_model.empty() ? "trained" : o.subword_model},
                     {"sampled_sentences", report.sampled_sentences}};
  write_file_atomic((temp.path / kDatasetManifestFile).string(), manifest.to_json().dump(2) + "\n");
  report.tokens = manifest.tokens;
  report.shards = manifest.shards.size();
  for (const ShardInfo& s : manifest.shards) report.bytes += s.bytes;

  if (fs::exists(fs::symlink_status(out)))
    throw RuntimeError(fmt::format("{}: appeared while preparing; the new dataset was not moved there", out.string()));
  fs::rename(temp.path, out, ec);
  if (ec) throw RuntimeError(fmt::format("{}: cannot rename {} to it: {}", out.string(), temp.path.string(), ec.message()));
  temp.keep = true;
  return report;
}

}  // namespace nmt::data
