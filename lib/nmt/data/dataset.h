#pragma once
// Binary training datasets, for corpora larger than memory: `nmt prepare` writes one,
// `nmt train --data DIR` trains from it (the idea of fairseq's MMapIndexedDataset).
//
// DIR holds manifest.json, the subword model the ids belong to (spm.model) and shards
// shard-00000.nmtds, shard-00001.nmtds, ... of at most --shard-size pairs each. A shard is
//   header   64 bytes: "NMTDSET1", uint32 version, uint32 token bytes (2 or 4), uint64 pairs,
//            uint64 tokens, 32 zero bytes
//   offsets  uint64[pairs + 1]: where pair i's tokens start (its source ids, then its target ids)
//   lengths  uint16[2 * pairs]: source and target subword counts of each pair (no EOS/BOS)
//   padding  to 8 bytes
//   tokens   uint16 or uint32 ids
// all little-endian (the machines nmt runs on). The manifest gives each shard's pairs, size and
// FNV-1a checksum, and the subword model's checksum, so ids are never read with another model.
//
// Training opens the shards read-only and reads each batch's pairs with pread(): the kernel's page
// cache holds what is hot, the process's memory only the batch. (Reading them through the mapping
// instead grew a training's resident memory by 110 MB at 40 M pairs on Linux 6.18, which maps
// whole large folios of the page cache on each fault.)
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "nmt/text/token_ids.h"
#include "nmt/util/hash.h"

namespace nmt::data {

inline constexpr const char* kDatasetManifestFile = "manifest.json";
inline constexpr const char* kDatasetSubwordFile = "spm.model";
inline constexpr uint32_t kDatasetVersion = 1;
inline constexpr size_t kDatasetMaxLength = 65535;  // subwords per side (uint16 lengths)

struct ShardInfo {
  std::string file;  // relative to the dataset directory
  uint64_t pairs = 0;
  uint64_t tokens = 0;
  uint64_t bytes = 0;
  std::string checksum;  // FNV-1a 64 of the file, 16 hex digits
};

struct DatasetManifest {
  uint32_t version = kDatasetVersion;
  uint32_t token_bytes = 2;  // 2: uint16 ids (vocabulary up to 65,536), 4: uint32
  uint64_t pairs = 0;
  uint64_t tokens = 0;
  int64_t vocab_size = 0;
  std::string subword_checksum;  // FNV-1a 64 of spm.model
  std::vector<ShardInfo> shards;
  nlohmann::json source = nlohmann::json::object();  // what it was made from, and what was skipped

  nlohmann::json to_json() const;
  // RuntimeError "WHERE: ..." naming the bad key.
  static DatasetManifest from_json(const nlohmann::json& j, const std::string& where);
  // DIR/manifest.json; RuntimeError naming the file when missing or corrupt.
  static DatasetManifest read(const std::string& dir);
};


// Writes shards into an existing directory, each atomically (a temporary file renamed once
// complete), so an interrupted `nmt prepare` never leaves a shard that looks whole.
class DatasetWriter {
 public:
  DatasetWriter(std::string dir, uint32_t token_bytes, uint64_t shard_pairs);
  // One pair's ids (each < 2^(8 * token_bytes), each side at most kDatasetMaxLength long).
  void add(const text::TokenIds& source, const text::TokenIds& target);
  // Writes the last shard; returns the manifest's shard list and totals (the caller adds the
  // rest and writes it).
  DatasetManifest finish();

 private:
  void flush_shard();

  std::string dir_;
  uint32_t token_bytes_;
  uint64_t shard_pairs_;
  std::vector<uint64_t> offsets_{0};
  std::vector<uint16_t> lengths_;
  std::string ids_;  // the shard's ids as stored (token_bytes each)
  DatasetManifest manifest_;
};

struct PairLength {
  uint32_t src = 0, tgt = 0;  // subwords, EOS/BOS not counted
};

// A dataset directory mapped read-only. open() checks, in time independent of the corpus size,
// that every shard named by the manifest exists with its size and header; a checksum pass over
// the bytes is verify() (`nmt prepare --verify DIR`). Reading a pair checks its offsets and ids,
// so a corrupted shard ends in an error naming the file and pair, never in garbage training.
class MappedDataset {
 public:
  static std::unique_ptr<MappedDataset> open(const std::string& dir);
  ~MappedDataset();
  MappedDataset(const MappedDataset&) = delete;
  MappedDataset& operator=(const MappedDataset&) = delete;

  uint64_t size() const { return manifest_.pairs; }
  const DatasetManifest& manifest() const { return manifest_; }
  const std::string& dir() const { return dir_; }
  PairLength length(uint64_t i) const;
  // The lengths of many pairs (an epoch's pool), read in dataset order one shard's lengths at a
  // time: memory holds one shard's lengths, not the dataset's, and a cold page cache is read
  // sequentially.
  std::vector<PairLength> lengths(const std::vector<uint64_t>& pairs) const;
  void pair(uint64_t i, text::TokenIds& source, text::TokenIds& target) const;
  // Drops the mapped pages this process has read (open()'s header checks, verify()) from its
  // memory; they stay in the page cache.
  void release_pages() const;
  // Checks every shard's checksum; RuntimeError naming the first bad shard.
  void verify() const;

 private:
  struct Shard {
    std::string path;
    const unsigned char* base = nullptr;  // the mapping
    size_t bytes = 0;
    uint64_t pairs = 0, tokens = 0;
    const uint64_t* offsets = nullptr;
    const uint16_t* lengths = nullptr;
    const unsigned char* ids = nullptr;
    int fd = -1;  // pairs are read with pread: see pair()
    size_t lengths_at = 0, offsets_at = 0, ids_at = 0;  // byte positions in the file
  };
  MappedDataset() = default;
  const Shard& shard_of(uint64_t i, uint64_t* local) const;

  std::string dir_;
  DatasetManifest manifest_;
  std::vector<Shard> shards_;
  std::vector<uint64_t> first_pair_;  // global index of each shard's first pair
};

}  // namespace nmt::data
