#include "spatialobs/rrf.hpp"

#include <algorithm>
#include <utility>

namespace spatialobs {

void rrf_fuse(const std::int64_t* const* lists, const std::size_t* sizes, std::size_t num_lists, double k,
              std::vector<std::int64_t>& ids, std::vector<double>& scores) {
  ids.clear();
  scores.clear();
  std::size_t total = 0;
  for (std::size_t l = 0; l < num_lists; ++l) total += sizes[l];
  if (total == 0) return;
  std::vector<std::pair<std::int64_t, double>> contrib;
  contrib.reserve(total);
  for (std::size_t l = 0; l < num_lists; ++l) {
    for (std::size_t r = 0; r < sizes[l]; ++r) {
      contrib.emplace_back(lists[l][r], 1.0 / (k + static_cast<double>(r + 1)));
    }
  }
  // By id, then contribution descending: each id's sum runs largest first.
  std::sort(contrib.begin(), contrib.end(), [](const auto& a, const auto& b) {
    return a.first < b.first || (a.first == b.first && a.second > b.second);
  });
  std::vector<std::pair<double, std::int64_t>> fused;
  fused.reserve(contrib.size());
  for (std::size_t i = 0; i < contrib.size();) {
    double s = 0.0;
    std::size_t j = i;
    for (; j < contrib.size() && contrib[j].first == contrib[i].first; ++j) s += contrib[j].second;
    fused.emplace_back(s, contrib[i].first);
    i = j;
  }
  std::sort(fused.begin(), fused.end(), [](const auto& a, const auto& b) {
    return a.first > b.first || (a.first == b.first && a.second < b.second);
  });
  ids.reserve(fused.size());
  scores.reserve(fused.size());
  for (const auto& f : fused) {
    ids.push_back(f.second);
    scores.push_back(f.first);
  }
}

}  // namespace spatialobs
