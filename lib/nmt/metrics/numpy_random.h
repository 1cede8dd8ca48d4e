#pragma once
// numpy's random draws, reproduced bit for bit, so that `nmt bleu --confidence / --paired-bs /
// --paired-ar` resample exactly the segments sacreBLEU 2.6.0 resamples with the same seed.
// sacrebleu/significance.py makes three calls, all on numpy.random.default_rng(seed):
//
//   rng.choice(n, size=(S, n), replace=True)       -> Generator::choice (bootstrap indices)
//   rng.integers(2, size=(S, n), dtype=bool)       -> Generator::booleans (AR swaps)
//
// default_rng(seed) is PCG64 (XSL-RR 128/64) seeded through SeedSequence; choice without
// weights draws with Lemire's bounded-integer method on 32-bit halves of the 64-bit outputs,
// booleans take one bit at a time from 32-bit draws. Verified against numpy 2.4 (tests).
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace nmt::metrics {

// A seed as Python's int() reads SACREBLEU_SEED: a non-negative integer of any size, held as
// its little-endian 32-bit words (SeedSequence's own representation of an int entropy).
struct NumpySeed {
  std::vector<uint32_t> words{0};
  bool is_zero() const;
  std::string to_string() const;  // decimal, as str(int)
};

// Parses a decimal integer the way int() does for ASCII input (surrounding whitespace, a '+'
// sign and single underscores between digits allowed). Returns nullopt for anything else;
// a negative number is reported by the caller, as numpy refuses negative entropy.
std::optional<NumpySeed> parse_numpy_seed(std::string_view text, bool* negative = nullptr);

// numpy.random.SeedSequence(entropy).generate_state(n_words, np.uint64).
std::vector<uint64_t> seed_sequence_state(const NumpySeed& entropy, size_t n_words);

// numpy's PCG64 bit generator (not PCG64DXSM).
class Pcg64 {
 public:
  // PCG64(SeedSequence(seed)).
  explicit Pcg64(const NumpySeed& seed);
  // The raw generator, as pcg64_set_seed(state, {seed_hi, seed_lo}, {inc_hi, inc_lo}).
  Pcg64(unsigned __int128 initstate, unsigned __int128 initseq);

  uint64_t next64();
  // numpy hands out the low then the high half of one 64-bit output.
  uint32_t next32();

  unsigned __int128 state() const { return state_; }
  unsigned __int128 increment() const { return inc_; }

 private:
  void step();

  unsigned __int128 state_ = 0;
  unsigned __int128 inc_ = 0;
  bool has_uint32_ = false;
  uint32_t uinteger_ = 0;
};

// numpy.random.Generator, the few methods sacreBLEU uses.
class Generator {
 public:
  explicit Generator(const NumpySeed& seed) : bits_(seed) {}

  // choice(high, size=count, replace=True), which is integers(0, high, size=count,
  // dtype=np.int64): uniform integers in [0, high), high >= 1.
  void choice(int64_t high, size_t count, int64_t* out);
  // integers(2, size=count, dtype=bool).
  void booleans(size_t count, uint8_t* out);

  Pcg64& bits() { return bits_; }

 private:
  Pcg64 bits_;
};

}  // namespace nmt::metrics
