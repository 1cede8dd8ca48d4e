#pragma once
// Token-budget batch plans (torch-free): which examples go into which batch, in which order.
//
// Lengths are token counts as the trainer will see them. Adding BOS/EOS is the caller's job:
// with target input "<s> y" and target output "y </s>", pass tgt_len = len(y) + 1, and the source
// length including its EOS if the model appends one.
//
// The budget follows fairseq's --max-tokens: a batch of n examples whose longest side is L
// costs n * L, where L is the maximum over its examples of max(src_len, tgt_len). So both the
// padded source tensor (n x max src) and the padded target tensor (n x max tgt) hold at most
// max_tokens positions each.
//
// A plan is a pure function of (lengths, options, epoch): a run resumed mid-epoch recomputes the
// epoch's plan and skips to the batch index it had reached.
#include <cstddef>
#include <cstdint>
#include <vector>

namespace nmt::data {

struct ExampleLength {
  size_t src = 0;
  size_t tgt = 0;
};

// The length rule of training pairs, written once: a side of n subwords takes n + 1 positions
// in a batch (the source its EOS; the target "<s> y" as input and "y </s>" as output), and a
// pair is trained on only when both sides fit in the max_len positions the model takes.
inline ExampleLength lengths_with_eos(size_t src_subwords, size_t tgt_subwords) {
  return {src_subwords + 1, tgt_subwords + 1};
}
inline bool fits_with_eos(size_t subwords, int64_t max_len) { return static_cast<int64_t>(subwords) + 1 <= max_len; }
inline bool pair_fits_with_eos(size_t src_subwords, size_t tgt_subwords, int64_t max_len) {
  return fits_with_eos(src_subwords, max_len) && fits_with_eos(tgt_subwords, max_len);
}

struct BatchOptions {
  size_t max_tokens = 4096;   // padded tokens per side per batch (see above); must be > 0
  size_t max_sentences = 0;   // examples per batch; 0 = unlimited
  uint64_t seed = 1;
  // true: ties between equal lengths are broken randomly per epoch and the batch order is
  // shuffled (training). false: ties by index, batches in length order (evaluation).
  bool shuffle = true;
};

using Batch = std::vector<size_t>;  // example indices

// Sorts examples by (max(src, tgt), src, tgt) with seeded random tie-breaking, cuts the sorted run
// greedily into batches within the budget, then shuffles the batch order. Every example appears
// in exactly one batch; an example that alone exceeds max_tokens gets a batch of its own (never
// dropped; the caller may filter long examples beforehand). Indices within a batch are in sorted
// (length) order. Throws UsageError when max_tokens is 0.
std::vector<Batch> plan_batches(const std::vector<ExampleLength>& lengths, const BatchOptions& options,
                                uint64_t epoch);

// n * max over the batch of max(src, tgt): the quantity bounded by max_tokens.
size_t batch_cost(const std::vector<ExampleLength>& lengths, const Batch& batch);

// Fraction of padded positions over both sides of all batches: 1 - real / (sum of n * max src +
// n * max tgt). 0 for no batches.
double padding_fraction(const std::vector<ExampleLength>& lengths, const std::vector<Batch>& batches);

// Epochs over datasets larger than memory (`nmt train --data`). An epoch visits the pairs in a
// seeded pseudo-random order computed one position at a time (a Feistel network over the next
// power of four, cycle-walked into [0, n): no n-sized array, the whole dataset shuffled), cut
// into pools of pool_size consecutive positions; each pool is then planned by plan_batches as a
// corpus of its own (Marian's maxi-batches). Memory is O(pool_size) whatever n is, start-up
// needs no pass over the data, and a run resumed at (pool, batch) recomputes one pool.
class EpochPermutation {
 public:
  EpochPermutation(uint64_t n, uint64_t seed, uint64_t epoch);
  uint64_t size() const { return n_; }
  // The pair at `position` of the epoch's order: a bijection of [0, n).
  uint64_t operator()(uint64_t position) const;

 private:
  uint64_t round(int r, uint64_t half) const;
  uint64_t n_;
  int half_bits_ = 0;
  uint64_t half_mask_ = 0;
  uint64_t keys_[4] = {};
};

inline uint64_t pool_count(uint64_t n, uint64_t pool_size) { return pool_size == 0 ? 0 : (n + pool_size - 1) / pool_size; }

// The pairs of pool `pool` (positions [pool * pool_size, ...) of the epoch's order).
std::vector<uint64_t> pool_members(const EpochPermutation& order, uint64_t pool, uint64_t pool_size);

}  // namespace nmt::data
