#include "nmt/data/dataset.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>

#include <fmt/format.h>

#include "nmt/util/error.h"
#include "nmt/util/io.h"
#include "nmt/util/json_read.h"

namespace nmt::data {
namespace fs = std::filesystem;
namespace {

constexpr char kMagic[8] = {'N', 'M', 'T', 'D', 'S', 'E', 'T', '1'};
constexpr size_t kHeaderBytes = 64;

struct Layout {
  size_t offsets, lengths, ids, bytes;
};

Layout layout(uint64_t pairs, uint64_t tokens, uint32_t token_bytes) {
  Layout l{};
  l.offsets = kHeaderBytes;
  l.lengths = l.offsets + 8 * (pairs + 1);
  l.ids = (l.lengths + 4 * pairs + 7) / 8 * 8;
  l.bytes = l.ids + token_bytes * tokens;
  return l;
}

std::string shard_name(size_t k) { return fmt::format("shard-{:05d}.nmtds", k); }

}  // namespace

nlohmann::json DatasetManifest::to_json() const {
  nlohmann::json shard_list = nlohmann::json::array();
  for (const ShardInfo& s : shards)
    shard_list.push_back({{"file", s.file}, {"pairs", s.pairs}, {"tokens", s.tokens}, {"bytes", s.bytes},
                          {"checksum", s.checksum}});
  return {{"format", "nmt-dataset"}, {"version", version}, {"token_bytes", token_bytes}, {"pairs", pairs},
          {"tokens", tokens}, {"vocab_size", vocab_size}, {"subword_checksum", subword_checksum},
          {"shards", shard_list}, {"source", source}};
}

DatasetManifest DatasetManifest::from_json(const nlohmann::json& j, const std::string& where) {
  using namespace json_read;
  try {
    if (string(j, "format") != "nmt-dataset") throw RuntimeError("'format' is not \"nmt-dataset\"");
    DatasetManifest m;
    m.version = static_cast<uint32_t>(integer(j, "version", 1, 1 << 20));
    if (m.version != kDatasetVersion)
      throw RuntimeError(fmt::format("version {}; this nmt reads version {}", m.version, kDatasetVersion));
    m.token_bytes = static_cast<uint32_t>(integer(j, "token_bytes", 2, 4));
    if (m.token_bytes != 2 && m.token_bytes != 4) throw RuntimeError("'token_bytes' must be 2 or 4");
    constexpr int64_t kMax = int64_t{1} << 50;
    m.pairs = static_cast<uint64_t>(integer(j, "pairs", 0, kMax));
    m.tokens = static_cast<uint64_t>(integer(j, "tokens", 0, kMax));
    m.vocab_size = integer(j, "vocab_size", 5, int64_t{1} << 32);
    m.subword_checksum = string(j, "subword_checksum");
    uint64_t pairs = 0, tokens = 0;
    const nlohmann::json& list = j.at("shards");
    if (!list.is_array() || list.empty()) throw RuntimeError("'shards' is not a non-empty array");
    for (const auto& s : list) {
      ShardInfo info;
      info.file = string(s, "file");
      if (info.file.empty() || info.file.find('/') != std::string::npos || info.file[0] == '.')
        throw RuntimeError(fmt::format("shard file name '{}' is not a plain file name", info.file));
      info.pairs = static_cast<uint64_t>(integer(s, "pairs", 1, kMax));
      info.tokens = static_cast<uint64_t>(integer(s, "tokens", 0, kMax));
      info.bytes = static_cast<uint64_t>(integer(s, "bytes", 0, kMax));
      info.checksum = string(s, "checksum");
      if (info.bytes != layout(info.pairs, info.tokens, m.token_bytes).bytes)
        throw RuntimeError(fmt::format("shard {}: 'bytes' does not match its pairs and tokens", info.file));
      pairs += info.pairs;
      tokens += info.tokens;
      m.shards.push_back(std::move(info));
    }
    if (pairs != m.pairs || tokens != m.tokens) throw RuntimeError("the shards' pairs or tokens do not add up to the totals");
    if (j.contains("source")) m.source = j.at("source");
    return m;
  } catch (const nlohmann::json::exception& e) {
    throw RuntimeError(fmt::format("{}: corrupt manifest: {}", where, e.what()));
  } catch (const RuntimeError& e) {
    throw RuntimeError(fmt::format("{}: {}", where, e.what()));
  }
}

DatasetManifest DatasetManifest::read(const std::string& dir) {
  const std::string path = (fs::path(dir) / kDatasetManifestFile).string();
  if (fs::is_directory(dir) && !fs::exists(path))
    throw RuntimeError(fmt::format("{}: missing: {} is not a dataset made by `nmt prepare`", path, dir));
  return from_json(json_read::parse(read_small_file(path, kMaxJsonBytes), path + ": corrupt"), path);
}

DatasetWriter::DatasetWriter(std::string dir, uint32_t token_bytes, uint64_t shard_pairs)
    : dir_(std::move(dir)), token_bytes_(token_bytes), shard_pairs_(shard_pairs) {
  manifest_.token_bytes = token_bytes;
}

void DatasetWriter::add(const text::TokenIds& source, const text::TokenIds& target) {
  const uint64_t limit = token_bytes_ == 2 ? 0xFFFFu : 0xFFFFFFFFu;
  for (const text::TokenIds* side : {&source, &target}) {
    if (side->size() > kDatasetMaxLength) throw RuntimeError("a pair side longer than 65,535 subwords");
    for (text::TokenId id : *side) {
      if (id < 0 || static_cast<uint64_t>(id) > limit) throw RuntimeError(fmt::format("subword id {} out of range", id));
      if (token_bytes_ == 2) {
        const auto v = static_cast<uint16_t>(id);
        ids_.append(reinterpret_cast<const char*>(&v), 2);
      } else {
        const auto v = static_cast<uint32_t>(id);
        ids_.append(reinterpret_cast<const char*>(&v), 4);
      }
    }
  }
  lengths_.push_back(static_cast<uint16_t>(source.size()));
  lengths_.push_back(static_cast<uint16_t>(target.size()));
  offsets_.push_back(ids_.size() / token_bytes_);
  if (offsets_.size() - 1 == shard_pairs_) flush_shard();
}

// Written piece by piece (the shard's ids are the one large buffer), checksummed on the way.
void DatasetWriter::flush_shard() {
  const uint64_t pairs = offsets_.size() - 1;
  if (pairs == 0) return;
  const uint64_t tokens = ids_.size() / token_bytes_;
  const Layout l = layout(pairs, tokens, token_bytes_);
  std::string header(kHeaderBytes, '\0');
  std::memcpy(header.data(), kMagic, 8);
  const uint32_t version = kDatasetVersion;
  std::memcpy(header.data() + 8, &version, 4);
  std::memcpy(header.data() + 12, &token_bytes_, 4);
  std::memcpy(header.data() + 16, &pairs, 8);
  std::memcpy(header.data() + 24, &tokens, 8);
  ShardInfo info;
  info.file = shard_name(manifest_.shards.size());
  OutputFile out((fs::path(dir_) / info.file).string());
  uint64_t hash = kFnvOffset, written = 0;
  auto put = [&](const void* data, size_t size) {
    const auto* p = static_cast<const char*>(data);
    for (size_t at = 0; at < size; at += size_t{1} << 20) {
      const size_t n = std::min(size - at, size_t{1} << 20);
      out.write(std::string_view(p + at, n));
      hash = fnv1a(p + at, n, hash);
    }
    written += size;
  };
  put(header.data(), header.size());
  put(offsets_.data(), 8 * offsets_.size());
  put(lengths_.data(), 2 * lengths_.size());
  const std::string padding(l.ids - written, '\0');
  put(padding.data(), padding.size());
  put(ids_.data(), ids_.size());
  out.commit();
  info.pairs = pairs;
  info.tokens = tokens;
  info.bytes = l.bytes;
  info.checksum = hex64(hash);
  manifest_.pairs += pairs;
  manifest_.tokens += tokens;
  manifest_.shards.push_back(std::move(info));
  offsets_.assign(1, 0);
  lengths_.clear();
  ids_.clear();
}

DatasetManifest DatasetWriter::finish() {
  flush_shard();
  return manifest_;
}

std::unique_ptr<MappedDataset> MappedDataset::open(const std::string& dir) {
  std::unique_ptr<MappedDataset> d(new MappedDataset());
  d->dir_ = dir;
  d->manifest_ = DatasetManifest::read(dir);
  uint64_t first = 0;
  for (const ShardInfo& info : d->manifest_.shards) {
    Shard s;
    s.path = (fs::path(dir) / info.file).string();
    const int fd = ::open(s.path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) throw RuntimeError(fmt::format("{}: {}", s.path, std::strerror(errno)));
    struct stat st {};
    if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
      ::close(fd);
      throw RuntimeError(fmt::format("{}: not a regular file", s.path));
    }
    if (static_cast<uint64_t>(st.st_size) != info.bytes) {
      ::close(fd);
      throw RuntimeError(fmt::format("{}: {} bytes, the manifest says {}: truncated or from another dataset", s.path,
                                     st.st_size, info.bytes));
    }
    void* base = ::mmap(nullptr, info.bytes, PROT_READ, MAP_SHARED, fd, 0);
    if (base == MAP_FAILED) {
      ::close(fd);
      throw RuntimeError(fmt::format("{}: cannot map: {}", s.path, std::strerror(errno)));
    }
    s.fd = fd;
    s.base = static_cast<const unsigned char*>(base);
    s.bytes = info.bytes;
    d->shards_.push_back(s);  // owned from here: the destructor unmaps it
    uint32_t version = 0, token_bytes = 0;
    uint64_t pairs = 0, tokens = 0;
    std::memcpy(&version, s.base + 8, 4);
    std::memcpy(&token_bytes, s.base + 12, 4);
    std::memcpy(&pairs, s.base + 16, 8);
    std::memcpy(&tokens, s.base + 24, 8);
    if (std::memcmp(s.base, kMagic, 8) != 0 || version != kDatasetVersion || token_bytes != d->manifest_.token_bytes ||
        pairs != info.pairs || tokens != info.tokens)
      throw RuntimeError(fmt::format("{}: header does not match the manifest: corrupt or from another dataset", s.path));
    const Layout l = layout(pairs, tokens, token_bytes);
    Shard& mapped = d->shards_.back();
    mapped.pairs = pairs;
    mapped.tokens = tokens;
    mapped.offsets = reinterpret_cast<const uint64_t*>(s.base + l.offsets);
    mapped.lengths = reinterpret_cast<const uint16_t*>(s.base + l.lengths);
    mapped.ids = s.base + l.ids;
    mapped.offsets_at = l.offsets;
    mapped.lengths_at = l.lengths;
    mapped.ids_at = l.ids;
    if (mapped.offsets[0] != 0 || mapped.offsets[pairs] != tokens)
      throw RuntimeError(fmt::format("{}: corrupt offsets", s.path));
    d->first_pair_.push_back(first);
    first += pairs;
  }
  d->release_pages();
  return d;
}

MappedDataset::~MappedDataset() {
  for (const Shard& s : shards_) {
    ::munmap(const_cast<unsigned char*>(s.base), s.bytes);
    if (s.fd >= 0) ::close(s.fd);
  }
}

const MappedDataset::Shard& MappedDataset::shard_of(uint64_t i, uint64_t* local) const {
  if (i >= manifest_.pairs) throw RuntimeError(fmt::format("{}: pair {} of {} requested", dir_, i, manifest_.pairs));
  const size_t k = static_cast<size_t>(std::upper_bound(first_pair_.begin(), first_pair_.end(), i) - first_pair_.begin()) - 1;
  *local = i - first_pair_[k];
  return shards_[k];
}

namespace {
// Reads exactly `size` bytes at `at`; RuntimeError naming the file otherwise.
void read_at(int fd, void* out, size_t size, size_t at, const std::string& path) {
  auto* p = static_cast<char*>(out);
  while (size > 0) {
    const ssize_t n = ::pread(fd, p, size, static_cast<off_t>(at));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) throw RuntimeError(fmt::format("{}: read error: {}", path, n < 0 ? std::strerror(errno) : "unexpected end"));
    p += n;
    at += static_cast<size_t>(n);
    size -= static_cast<size_t>(n);
  }
}
}  // namespace

PairLength MappedDataset::length(uint64_t i) const {
  uint64_t j = 0;
  const Shard& s = shard_of(i, &j);
  uint16_t len[2];
  read_at(s.fd, len, sizeof len, s.lengths_at + 4 * j, s.path);
  return {len[0], len[1]};
}

std::vector<PairLength> MappedDataset::lengths(const std::vector<uint64_t>& pairs) const {
  std::vector<size_t> order(pairs.size());
  for (size_t k = 0; k < order.size(); ++k) order[k] = k;
  std::sort(order.begin(), order.end(), [&](size_t a, size_t b) { return pairs[a] < pairs[b]; });
  std::vector<PairLength> out(pairs.size());
  std::vector<uint16_t> shard_lengths;  // one shard's at a time
  const Shard* current = nullptr;
  for (size_t k : order) {
    uint64_t j = 0;
    const Shard& s = shard_of(pairs[k], &j);
    if (&s != current) {
      current = &s;
      shard_lengths.resize(2 * s.pairs);
      read_at(s.fd, shard_lengths.data(), 4 * s.pairs, s.lengths_at, s.path);
    }
    out[k] = {shard_lengths[2 * j], shard_lengths[2 * j + 1]};
  }
  return out;
}

void MappedDataset::pair(uint64_t i, text::TokenIds& source, text::TokenIds& target) const {
  uint64_t j = 0;
  const Shard& s = shard_of(i, &j);
  uint64_t offsets[2];
  uint16_t len[2];
  read_at(s.fd, offsets, sizeof offsets, s.offsets_at + 8 * j, s.path);
  read_at(s.fd, len, sizeof len, s.lengths_at + 4 * j, s.path);
  const uint64_t begin = offsets[0], end = offsets[1], src_len = len[0], tgt_len = len[1];
  if (begin > end || end > s.tokens || end - begin != src_len + tgt_len)
    throw RuntimeError(fmt::format("{}: pair {}: offsets and lengths disagree: the shard is corrupt (nmt prepare --verify)",
                                   s.path, j));
  const uint64_t vocab = static_cast<uint64_t>(manifest_.vocab_size);
  const uint32_t width = manifest_.token_bytes;
  std::vector<unsigned char> bytes(width * (end - begin));
  read_at(s.fd, bytes.data(), bytes.size(), s.ids_at + width * begin, s.path);
  auto id_at = [&](uint64_t k) -> uint64_t {
    if (width == 2) {
      uint16_t v;
      std::memcpy(&v, bytes.data() + 2 * k, 2);
      return v;
    }
    uint32_t v;
    std::memcpy(&v, bytes.data() + 4 * k, 4);
    return v;
  };
  auto read = [&](uint64_t from, uint64_t count, text::TokenIds& out) {
    out.resize(count);
    for (uint64_t k = 0; k < count; ++k) {
      const uint64_t id = id_at(from + k);
      if (id >= vocab)
        throw RuntimeError(fmt::format("{}: pair {}: subword id {} outside the vocabulary of {}: the shard is corrupt "
                                       "(nmt prepare --verify)",
                                       s.path, j, id, vocab));
      out[k] = static_cast<text::TokenId>(id);
    }
  };
  read(0, src_len, source);
  read(src_len, tgt_len, target);
}

void MappedDataset::release_pages() const {
  for (const Shard& s : shards_) ::madvise(const_cast<unsigned char*>(s.base), s.bytes, MADV_DONTNEED);
}

void MappedDataset::verify() const {
  for (size_t k = 0; k < shards_.size(); ++k) {
    const Shard& s = shards_[k];
    const std::string sum = hex64(fnv1a(s.base, s.bytes));
    ::madvise(const_cast<unsigned char*>(s.base), s.bytes, MADV_DONTNEED);
    if (sum != manifest_.shards[k].checksum)
      throw RuntimeError(fmt::format("{}: checksum {} but the manifest says {}: the shard is corrupt", s.path, sum,
                                     manifest_.shards[k].checksum));
  }
}

}  // namespace nmt::data
