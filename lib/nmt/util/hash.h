#pragma once
// 64-bit FNV-1a, the checksum of every file nmt writes and checks (dataset shards and
// manifests, checkpoint manifests, weights files): one definition, so the same bytes have the
// same checksum wherever nmt computes it. Not cryptographic: it catches truncation and
// corruption, not tampering.
#include <cstddef>
#include <cstdint>
#include <string>

namespace nmt {

inline constexpr uint64_t kFnvOffset = 1469598103934665603ULL;
inline constexpr uint64_t kFnvPrime = 1099511628211ULL;

// Over `size` bytes, continued from `hash`.
uint64_t fnv1a(const void* data, size_t size, uint64_t hash = kFnvOffset);
// Over 64-bit words, then the tail bytes: the same idea with eight times fewer multiplications,
// for hundreds of megabytes of weights (a different value from fnv1a's for the same bytes).
uint64_t fnv1a_words(const void* data, size_t size, uint64_t hash = kFnvOffset);
// 16 hex digits.
std::string hex64(uint64_t value);
// fnv1a of a whole file, as 16 hex digits (RuntimeError naming the file when unreadable).
std::string file_fnv1a(const std::string& path);

}  // namespace nmt
