#pragma once
// "did you mean ...?": the known name nearest to a misspelt one, as git and cargo suggest.
#include <algorithm>
#include <string>
#include <vector>

namespace nmt {

// Edits (insert, delete, substitute, swap two neighbours) that turn `a` into `b`: the optimal
// string alignment distance.
inline size_t edit_distance(const std::string& a, const std::string& b) {
  std::vector<std::vector<size_t>> d(a.size() + 1, std::vector<size_t>(b.size() + 1));
  for (size_t i = 0; i <= a.size(); ++i) d[i][0] = i;
  for (size_t j = 0; j <= b.size(); ++j) d[0][j] = j;
  for (size_t i = 1; i <= a.size(); ++i)
    for (size_t j = 1; j <= b.size(); ++j) {
      d[i][j] = std::min({d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + (a[i - 1] != b[j - 1])});
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1]) d[i][j] = std::min(d[i][j], d[i - 2][j - 2] + 1);
    }
  return d[a.size()][b.size()];
}

// The candidate nearest to `typed`, or "" when none is near enough to be what was meant: at
// most a third of its letters wrong (at least one, at most three), or `typed` the start of it
// (three letters or more). Ties go to the first candidate.
inline std::string nearest_name(const std::string& typed, const std::vector<std::string>& candidates) {
  const size_t allowed = std::clamp<size_t>(typed.size() / 3, 1, 3);
  std::string best;
  size_t best_distance = allowed + 1;
  for (const std::string& c : candidates) {
    size_t dist = edit_distance(typed, c);
    if (typed.size() >= 3 && c.rfind(typed, 0) == 0) dist = std::min<size_t>(dist, 1);
    if (dist < best_distance) best = c, best_distance = dist;
  }
  return best;
}

}  // namespace nmt
