#include "nmt/decode/batch_plan.h"

#include <algorithm>
#include <numeric>

namespace nmt::decode {

std::vector<std::vector<size_t>> length_sorted_batches(const std::vector<text::TokenIds>& sources, int64_t batch_size,
                                                       int64_t max_tokens) {
  std::vector<size_t> order(sources.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t a, size_t b) { return sources[a].size() > sources[b].size(); });
  std::vector<std::vector<size_t>> batches;
  std::vector<size_t> current;
  for (size_t idx : order) {
    // Sorted decreasingly, so the first sentence of a batch is its longest.
    const int64_t width = current.empty() ? 0 : static_cast<int64_t>(sources[current.front()].size()) + 1;
    const bool full = static_cast<int64_t>(current.size()) >= batch_size ||
                      (max_tokens > 0 && width * static_cast<int64_t>(current.size() + 1) > max_tokens);
    if (!current.empty() && full) {
      batches.push_back(std::move(current));
      current.clear();
    }
    current.push_back(idx);
  }
  if (!current.empty()) batches.push_back(std::move(current));
  return batches;
}

int64_t output_length_limit(int64_t source_len, int64_t prefix_len, double max_len_a, int64_t max_len_b,
                            int64_t longest_output) {
  // The length limit counts the tokens searched after the prefix.
  const int64_t searched = std::max<int64_t>(1, static_cast<int64_t>(max_len_a * source_len) + max_len_b);
  return std::min(prefix_len + searched, longest_output);
}

}  // namespace nmt::decode
