#pragma once
// Clipped n-gram matching, the inner loop of BLEU and chrF: for every order n, the sum over the
// hypothesis's distinct n-grams g of min(count of g in the hypothesis, count of g in the
// references) (sacreBLEU's Counter arithmetic), on sequences of 32-bit symbols: code points
// for chrF, token ids for BLEU and chrF++'s words.
//
//   NgramMatcher m;                                   // reuse it: its table is kept
//   m.start();
//   m.add_reference(ref.data(), ref.size(), 6);       // repeat for several references
//   m.match(hyp.data(), hyp.size(), 6, matches);      // matches[n - 1] += clipped n-gram matches
//
// The references' n-grams go into an open-addressing hash table (hash of the symbols, then a
// comparison of the symbols themselves, so the result is exact); each n-gram of the hypothesis
// then takes one of the remaining reference occurrences. This replaced per-segment tables of
// sorted n-grams (chrF) and string-keyed hash maps (BLEU), whose allocations and sorting made
// extracting the statistics of a sentence ~4x slower.
#include <cstddef>
#include <cstdint>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace nmt::metrics {

class NgramMatcher {
 public:
  // Forgets the references of the previous match (in constant time).
  void start();
  // Adds the n-grams of orders 1..max_order of one reference. With several references an
  // n-gram counts as often as in the reference where it occurs most (BLEU's clipping). The
  // table points into `symbols`, which must stay alive and unchanged until match() returns.
  void add_reference(const uint32_t* symbols, size_t size, int max_order);
  // Adds the clipped matches of the hypothesis's n-grams of order n to matches[n - 1]
  // (n = 1..max_order), using up the reference counts: once per start().
  void match(const uint32_t* symbols, size_t size, int max_order, int64_t* matches);

 private:
  struct Slot {
    uint64_t hash = 0;
    const uint32_t* symbols = nullptr;
    uint32_t order = 0;
    uint32_t generation = 0;  // the slot is in use when it equals generation_
    uint32_t reference = 0;   // the reference `in_reference` counts for
    int32_t in_reference = 0;
    int32_t count = 0;        // the most occurrences in one reference, less the matches taken
  };
  Slot* find(uint64_t hash, const uint32_t* symbols, uint32_t order);
  Slot& find_or_insert(uint64_t hash, const uint32_t* symbols, uint32_t order);
  void reserve(size_t entries);

  std::vector<Slot> slots_;  // a power of two of them, or none yet
  int shift_ = 64;           // a hash's slot: its top log2(slots_.size()) bits
  uint32_t generation_ = 1;
  uint32_t reference_ = 0;
  size_t used_ = 0;
};

// Ids of words (BLEU's tokens, chrF++'s words) whose n-grams NgramMatcher compares: n-grams
// of ids are equal exactly when the words are (words hold no whitespace, so sacreBLEU's
// space-joined n-gram keys are as unique). Only the references' words need ids: a hypothesis
// word that no reference has is kUnknown, which no reference n-gram contains.
template <typename Word>
class WordIds {
 public:
  static constexpr uint32_t kUnknown = 0;
  uint32_t add(Word word) { return ids_.emplace(std::move(word), static_cast<uint32_t>(ids_.size() + 1)).first->second; }
  uint32_t find(const Word& word) const {
    const auto it = ids_.find(word);
    return it == ids_.end() ? kUnknown : it->second;
  }

 private:
  std::unordered_map<Word, uint32_t> ids_;
};

// WordIds for one sentence's words, which stay where they are (views into tokenizer
// buffers): a flat table cleared in constant time by start(), so scoring a sentence allocates
// nothing once it has grown (an unordered_map<std::string> took a node per reference word).
class TransientWordIds {
 public:
  static constexpr uint32_t kUnknown = 0;
  // Forgets the previous words; room for `words` more without growing.
  void start(size_t words);
  uint32_t add(std::string_view word);
  uint32_t find(std::string_view word) const;

 private:
  struct Slot {
    std::string_view word;
    uint32_t id = 0;
    uint32_t generation = 0;  // in use when it equals generation_
  };
  size_t slot_of(std::string_view word) const;

  std::vector<Slot> slots_;
  uint32_t generation_ = 0;
  uint32_t next_id_ = 1;
};

}  // namespace nmt::metrics
