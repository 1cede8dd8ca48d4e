#include "nmt/util/hash.h"

#include <cstring>
#include <fstream>
#include <vector>

#include <fmt/format.h>

#include "nmt/util/error.h"
#include "nmt/util/io.h"

namespace nmt {

uint64_t fnv1a(const void* data, size_t size, uint64_t hash) {
  const auto* p = static_cast<const unsigned char*>(data);
  for (size_t i = 0; i < size; ++i) hash = (hash ^ p[i]) * kFnvPrime;
  return hash;
}

uint64_t fnv1a_words(const void* data, size_t size, uint64_t hash) {
  const auto* p = static_cast<const unsigned char*>(data);
  for (; size >= 8; size -= 8, p += 8) {
    uint64_t w;
    std::memcpy(&w, p, 8);
    hash = (hash ^ w) * kFnvPrime;
  }
  return fnv1a(p, size, hash);
}

std::string hex64(uint64_t value) { return fmt::format("{:016x}", value); }

std::string file_fnv1a(const std::string& path) {
  std::ifstream in = open_input(path);
  uint64_t hash = kFnvOffset;
  std::vector<char> buffer(1 << 20);
  while (in) {
    in.read(buffer.data(), static_cast<std::streamsize>(buffer.size()));
    hash = fnv1a(buffer.data(), static_cast<size_t>(in.gcount()), hash);
  }
  if (in.bad()) throw RuntimeError(fmt::format("{}: read error", path));
  return hex64(hash);
}

}  // namespace nmt
