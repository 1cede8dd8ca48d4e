#include "nmt/metrics/ngram_match.h"

#include <algorithm>
#include <functional>

namespace nmt::metrics {
namespace {

constexpr uint64_t kEmptyHash = 0x9E3779B97F4A7C15ULL;
constexpr size_t kMinSlots = 1024;  // a 70-character reference has ~400 n-grams of orders 1..6

// The hash of an n-gram extended by one symbol (a multiply-xor chain; the slot is taken from
// the high bits, which depend on every symbol).
uint64_t extend(uint64_t hash, uint32_t symbol) { return (hash ^ symbol) * 0xFF51AFD7ED558CCDULL; }

// std::equal, which calls memcmp: a loop is faster for the few symbols of an n-gram.
bool same_symbols(const uint32_t* a, const uint32_t* b, uint32_t order) {
  for (uint32_t i = 0; i < order; ++i)
    if (a[i] != b[i]) return false;
  return true;
}

}  // namespace

void NgramMatcher::start() {
  if (++generation_ == 0) {  // wrapped around: mark every slot free explicitly
    for (Slot& slot : slots_) slot.generation = 0;
    generation_ = 1;
  }
  used_ = 0;
  reference_ = 0;
}

void NgramMatcher::reserve(size_t entries) {
  // At most half full, so that a probe ends after a slot or two.
  size_t capacity = std::max(slots_.size(), kMinSlots);
  while (capacity < 2 * (used_ + entries)) capacity *= 2;
  if (capacity == slots_.size()) return;
  std::vector<Slot> old = std::move(slots_);
  slots_.assign(capacity, Slot{});
  shift_ = 64;
  for (size_t c = capacity; c > 1; c /= 2) --shift_;
  for (const Slot& slot : old) {
    if (slot.generation != generation_) continue;
    size_t i = slot.hash >> shift_;
    while (slots_[i].generation == generation_) i = (i + 1) & (capacity - 1);
    slots_[i] = slot;
  }
}

NgramMatcher::Slot* NgramMatcher::find(uint64_t hash, const uint32_t* symbols, uint32_t order) {
  if (slots_.empty()) return nullptr;
  const size_t mask = slots_.size() - 1;
  for (size_t i = hash >> shift_;; i = (i + 1) & mask) {
    Slot& slot = slots_[i];
    if (slot.generation != generation_) return nullptr;
    if (slot.hash == hash && slot.order == order && same_symbols(symbols, slot.symbols, order)) return &slot;
  }
}

NgramMatcher::Slot& NgramMatcher::find_or_insert(uint64_t hash, const uint32_t* symbols, uint32_t order) {
  const size_t mask = slots_.size() - 1;
  for (size_t i = hash >> shift_;; i = (i + 1) & mask) {
    Slot& slot = slots_[i];
    if (slot.generation != generation_) {
      slot = Slot{hash, symbols, order, generation_, 0, 0, 0};
      ++used_;
      return slot;
    }
    if (slot.hash == hash && slot.order == order && same_symbols(symbols, slot.symbols, order)) return slot;
  }
}

void NgramMatcher::add_reference(const uint32_t* symbols, size_t size, int max_order) {
  if (max_order <= 0) return;
  const size_t orders = static_cast<size_t>(max_order);
  reserve(size * orders);
  ++reference_;
  for (size_t i = 0; i < size; ++i) {
    uint64_t hash = kEmptyHash;
    const size_t longest = std::min(orders, size - i);
    for (size_t n = 1; n <= longest; ++n) {
      hash = extend(hash, symbols[i + n - 1]);
      Slot& slot = find_or_insert(hash, symbols + i, static_cast<uint32_t>(n));
      if (slot.reference != reference_) {
        slot.reference = reference_;
        slot.in_reference = 0;
      }
      slot.count = std::max(slot.count, ++slot.in_reference);
    }
  }
}

void NgramMatcher::match(const uint32_t* symbols, size_t size, int max_order, int64_t* matches) {
  if (max_order <= 0) return;
  const size_t orders = static_cast<size_t>(max_order);
  for (size_t i = 0; i < size; ++i) {
    uint64_t hash = kEmptyHash;
    const size_t longest = std::min(orders, size - i);
    for (size_t n = 1; n <= longest; ++n) {
      hash = extend(hash, symbols[i + n - 1]);
      Slot* slot = find(hash, symbols + i, static_cast<uint32_t>(n));
      // Every prefix of a reference n-gram is itself a reference n-gram, so once this n-gram
      // is not one, neither is any longer one starting here.
      if (!slot) break;
      if (slot->count > 0) {
        --slot->count;
        ++matches[n - 1];
      }
    }
  }
}

void TransientWordIds::start(size_t words) {
  if (++generation_ == 0) {  // wrapped around: mark every slot free explicitly
    for (Slot& slot : slots_) slot.generation = 0;
    generation_ = 1;
  }
  next_id_ = 1;
  size_t capacity = std::max<size_t>(slots_.size(), 64);
  while (capacity < 2 * words) capacity *= 2;  // at most half full
  if (capacity != slots_.size()) slots_.assign(capacity, Slot{});
}

size_t TransientWordIds::slot_of(std::string_view word) const {
  const size_t mask = slots_.size() - 1;
  uint64_t hash = kEmptyHash;  // FNV-style over the bytes: words are short, std::hash's
  for (char c : word) hash = (hash ^ static_cast<unsigned char>(c)) * 0x100000001B3ULL;  // murmur took 10 %
  size_t i = (hash ^ (hash >> 29)) & mask;
  while (slots_[i].generation == generation_ && slots_[i].word != word) i = (i + 1) & mask;
  return i;
}

uint32_t TransientWordIds::add(std::string_view word) {
  Slot& slot = slots_[slot_of(word)];
  if (slot.generation != generation_) slot = Slot{word, next_id_++, generation_};
  return slot.id;
}

uint32_t TransientWordIds::find(std::string_view word) const {
  const Slot& slot = slots_[slot_of(word)];
  return slot.generation == generation_ ? slot.id : kUnknown;
}

}  // namespace nmt::metrics
