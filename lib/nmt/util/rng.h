#pragma once
// A tiny seeded PRNG whose output is fixed by its algorithm, unlike std::uniform_int_distribution
// (which differs between standard libraries). Data splits and batch plans must be identical on
// every machine: resuming mid-epoch recomputes the plan and skips to a batch index.
#include <cstdint>
#include <utility>
#include <vector>

namespace nmt {

// splitmix64 (Steele, Lea & Flood 2014): one 64-bit state, full period, good enough for shuffles.
class SplitMix64 {
 public:
  explicit SplitMix64(uint64_t seed) : state_(seed) {}

  uint64_t next() {
    uint64_t z = (state_ += 0x9E3779B97F4A7C15ULL);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
  }

  // Uniform in [0, n) for n > 0, by rejection so there is no modulo bias.
  uint64_t below(uint64_t n) {
    const uint64_t limit = UINT64_MAX - UINT64_MAX % n;
    uint64_t x;
    do x = next(); while (x >= limit);
    return x % n;
  }

 private:
  uint64_t state_;
};

// Mixes several values into one seed (so (seed, epoch) pairs do not collide like seed + epoch would).
inline uint64_t mix_seed(uint64_t a, uint64_t b) {
  SplitMix64 r(a ^ (b * 0xD1B54A32D192ED03ULL + 0x8CB92BA72F3D8DD7ULL));
  r.next();
  return r.next();
}

// Fisher-Yates shuffle driven by SplitMix64.
template <typename T>
void shuffle_in_place(std::vector<T>& v, SplitMix64& rng) {
  for (size_t i = v.size(); i > 1; --i) {
    size_t j = static_cast<size_t>(rng.below(i));
    std::swap(v[i - 1], v[j]);
  }
}

}  // namespace nmt
