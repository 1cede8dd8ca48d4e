#include "nmt/metrics/numpy_random.h"

#include <algorithm>

#include "nmt/text/unicode.h"

namespace nmt::metrics {
namespace {
using text::is_ascii_space;

using u128 = unsigned __int128;

// numpy/random/bit_generator.pyx: SeedSequence's hashing constants.
constexpr uint32_t kInitA = 0x43b0d7e5;
constexpr uint32_t kMultA = 0x931e8875;
constexpr uint32_t kInitB = 0x8b51f9dd;
constexpr uint32_t kMultB = 0x58f38ded;
constexpr uint32_t kMixMultL = 0xca01f9dd;
constexpr uint32_t kMixMultR = 0x4973f715;
constexpr int kXShift = 16;
constexpr size_t kPoolSize = 4;

uint32_t hashmix(uint32_t value, uint32_t& hash_const) {
  value ^= hash_const;
  hash_const *= kMultA;
  value *= hash_const;
  value ^= value >> kXShift;
  return value;
}

uint32_t mix(uint32_t x, uint32_t y) {
  uint32_t result = kMixMultL * x - kMixMultR * y;
  result ^= result >> kXShift;
  return result;
}

// SeedSequence.mix_entropy on a fresh pool (no spawn key).
std::vector<uint32_t> mix_entropy(const std::vector<uint32_t>& entropy) {
  std::vector<uint32_t> pool(kPoolSize, 0);
  uint32_t hash_const = kInitA;
  for (size_t i = 0; i < kPoolSize; ++i) pool[i] = hashmix(i < entropy.size() ? entropy[i] : 0, hash_const);
  for (size_t src = 0; src < kPoolSize; ++src)
    for (size_t dst = 0; dst < kPoolSize; ++dst)
      if (src != dst) pool[dst] = mix(pool[dst], hashmix(pool[src], hash_const));
  for (size_t src = kPoolSize; src < entropy.size(); ++src)
    for (size_t dst = 0; dst < kPoolSize; ++dst) pool[dst] = mix(pool[dst], hashmix(entropy[src], hash_const));
  return pool;
}

// PCG's 128-bit LCG multiplier (PCG_DEFAULT_MULTIPLIER_128).
constexpr u128 kPcgMultiplier = (static_cast<u128>(0x2360ed051fc65da4ULL) << 64) | 0x4385df649fccf645ULL;

bool is_digit(char c) { return c >= '0' && c <= '9'; }

}  // namespace

bool NumpySeed::is_zero() const {
  return std::all_of(words.begin(), words.end(), [](uint32_t w) { return w == 0; });
}

std::string NumpySeed::to_string() const {
  std::vector<uint32_t> n = words;
  std::string digits;
  do {
    uint64_t rem = 0;  // divide the little-endian number by 10, most significant word first
    for (size_t i = n.size(); i-- > 0;) {
      uint64_t cur = (rem << 32) | n[i];
      n[i] = static_cast<uint32_t>(cur / 10);
      rem = cur % 10;
    }
    digits.push_back(static_cast<char>('0' + rem));
    while (n.size() > 1 && n.back() == 0) n.pop_back();
  } while (!(n.size() == 1 && n[0] == 0));
  std::reverse(digits.begin(), digits.end());
  return digits;
}

std::optional<NumpySeed> parse_numpy_seed(std::string_view text, bool* negative) {
  while (!text.empty() && is_ascii_space(text.front())) text.remove_prefix(1);
  while (!text.empty() && is_ascii_space(text.back())) text.remove_suffix(1);
  bool minus = false;
  if (!text.empty() && (text.front() == '+' || text.front() == '-')) {
    minus = text.front() == '-';
    text.remove_prefix(1);
  }
  if (text.empty() || !is_digit(text.front()) || !is_digit(text.back())) return std::nullopt;
  NumpySeed seed;
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (c == '_') {
      if (!is_digit(text[i + 1])) return std::nullopt;  // "1__2": int() refuses doubled underscores
      continue;
    }
    if (!is_digit(c)) return std::nullopt;
    uint64_t carry = static_cast<uint64_t>(c - '0');
    for (uint32_t& w : seed.words) {
      uint64_t cur = static_cast<uint64_t>(w) * 10 + carry;
      w = static_cast<uint32_t>(cur);
      carry = cur >> 32;
    }
    if (carry) seed.words.push_back(static_cast<uint32_t>(carry));
  }
  if (negative) *negative = minus && !seed.is_zero();
  return seed;
}

std::vector<uint64_t> seed_sequence_state(const NumpySeed& entropy, size_t n_words) {
  // _coerce_to_uint32_array(int): the little-endian words, at least one.
  const std::vector<uint32_t> pool = mix_entropy(entropy.words);
  uint32_t hash_const = kInitB;
  std::vector<uint32_t> state32(2 * n_words);
  for (size_t i = 0; i < state32.size(); ++i) {
    uint32_t value = pool[i % kPoolSize];
    value ^= hash_const;
    hash_const *= kMultB;
    value *= hash_const;
    value ^= value >> kXShift;
    state32[i] = value;
  }
  // .view(np.uint64) on a little-endian machine: the first word is the low half.
  std::vector<uint64_t> out(n_words);
  for (size_t i = 0; i < n_words; ++i)
    out[i] = static_cast<uint64_t>(state32[2 * i]) | (static_cast<uint64_t>(state32[2 * i + 1]) << 32);
  return out;
}

Pcg64::Pcg64(const NumpySeed& seed) {
  const std::vector<uint64_t> v = seed_sequence_state(seed, 4);
  *this = Pcg64((static_cast<u128>(v[0]) << 64) | v[1], (static_cast<u128>(v[2]) << 64) | v[3]);
}

Pcg64::Pcg64(u128 initstate, u128 initseq) {
  // pcg_setseq_128_srandom_r
  state_ = 0;
  inc_ = (initseq << 1) | 1;
  step();
  state_ += initstate;
  step();
}

void Pcg64::step() { state_ = state_ * kPcgMultiplier + inc_; }

uint64_t Pcg64::next64() {
  step();
  // XSL-RR: xor the halves, rotate right by the top 6 bits.
  const uint64_t value = static_cast<uint64_t>(state_ >> 64) ^ static_cast<uint64_t>(state_);
  const unsigned rot = static_cast<unsigned>(state_ >> 122);
  return (value >> rot) | (value << ((64 - rot) & 63));
}

uint32_t Pcg64::next32() {
  if (has_uint32_) {
    has_uint32_ = false;
    return uinteger_;
  }
  const uint64_t next = next64();
  has_uint32_ = true;
  uinteger_ = static_cast<uint32_t>(next >> 32);
  return static_cast<uint32_t>(next);
}

void Generator::choice(int64_t high, size_t count, int64_t* out) {
  // random_bounded_uint64_fill(off 0, rng high-1, use_masked false): Lemire's method, on
  // 32-bit draws when the range fits in 32 bits.
  const uint64_t rng = static_cast<uint64_t>(high) - 1;
  if (rng == 0) {
    std::fill(out, out + count, 0);  // draws nothing
    return;
  }
  if (rng <= 0xFFFFFFFFULL) {
    if (rng == 0xFFFFFFFFULL) {
      for (size_t i = 0; i < count; ++i) out[i] = bits_.next32();
      return;
    }
    const uint32_t rng_excl = static_cast<uint32_t>(rng) + 1;
    for (size_t i = 0; i < count; ++i) {
      uint64_t m = static_cast<uint64_t>(bits_.next32()) * rng_excl;
      uint32_t leftover = static_cast<uint32_t>(m);
      if (leftover < rng_excl) {
        const uint32_t threshold = (UINT32_MAX - static_cast<uint32_t>(rng)) % rng_excl;
        while (leftover < threshold) {
          m = static_cast<uint64_t>(bits_.next32()) * rng_excl;
          leftover = static_cast<uint32_t>(m);
        }
      }
      out[i] = static_cast<int64_t>(m >> 32);
    }
    return;
  }
  const uint64_t rng_excl = rng + 1;
  for (size_t i = 0; i < count; ++i) {
    u128 m = static_cast<u128>(bits_.next64()) * rng_excl;
    uint64_t leftover = static_cast<uint64_t>(m);
    if (leftover < rng_excl) {
      const uint64_t threshold = (UINT64_MAX - rng) % rng_excl;
      while (leftover < threshold) {
        m = static_cast<u128>(bits_.next64()) * rng_excl;
        leftover = static_cast<uint64_t>(m);
      }
    }
    out[i] = static_cast<int64_t>(m >> 64);
  }
}

void Generator::booleans(size_t count, uint8_t* out) {
  // buffered_bounded_bool: one 32-bit draw gives 32 booleans, lowest bit first.
  uint32_t buf = 0;
  int left = 0;
  for (size_t i = 0; i < count; ++i) {
    if (left == 0) {
      buf = bits_.next32();
      left = 31;
    } else {
      buf >>= 1;
      --left;
    }
    out[i] = buf & 1u;
  }
}

}  // namespace nmt::metrics
