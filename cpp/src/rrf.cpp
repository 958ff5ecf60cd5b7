#include "spatialobs/rrf.hpp"

#include <algorithm>
#include <cstdint>
#include <utility>

#include "spatialobs/mix64.hpp"

namespace spatialobs {

void rrf_fuse(const std::int64_t* const* lists, const std::size_t* sizes, std::size_t num_lists, double k,
              std::vector<std::int64_t>& ids, std::vector<double>& scores) {
  ids.clear();
  scores.clear();
  std::size_t total = 0;
  for (std::size_t l = 0; l < num_lists; ++l) total += sizes[l];
  if (total == 0) return;
  const auto better = [](const auto& a, const auto& b) {
    return a.first > b.first || (a.first == b.first && a.second < b.second);
  };
  // Two lists, neither repeating an id (the state index's case): an id then
  // has at most two contributions, whose sum is the same in either order, so
  // a hash table groups them instead of a sort by id. A repeat sends the
  // lists to the general path below.
  if (num_lists <= 2 && total <= (static_cast<std::size_t>(1) << 30)) {
    std::size_t cap = 16;
    while (cap < 2 * total) cap <<= 1;
    const std::size_t mask = cap - 1;
    std::vector<std::uint32_t> slot(cap, 0);  // index into fused + 1, 0 empty
    std::vector<std::pair<double, std::int64_t>> fused;
    std::vector<std::uint8_t> from;  // the lists that gave each fused id, as bits
    fused.reserve(total);
    from.reserve(total);
    bool repeat = false;
    for (std::size_t l = 0; l < num_lists && !repeat; ++l) {
      const auto bit = static_cast<std::uint8_t>(1u << l);
      for (std::size_t r = 0; r < sizes[l]; ++r) {
        const std::int64_t id = lists[l][r];
        const double c = 1.0 / (k + static_cast<double>(r + 1));
        std::size_t i = detail::mix64(static_cast<std::uint64_t>(id)) & mask;
        while (slot[i] != 0 && fused[slot[i] - 1].second != id) i = (i + 1) & mask;
        if (slot[i] == 0) {
          fused.emplace_back(c, id);
          from.push_back(bit);
          slot[i] = static_cast<std::uint32_t>(fused.size());
          continue;
        }
        const std::size_t f = slot[i] - 1;
        if (from[f] & bit) {
          repeat = true;
          break;
        }
        from[f] |= bit;
        fused[f].first += c;
      }
    }
    if (!repeat) {
      std::sort(fused.begin(), fused.end(), better);
      ids.reserve(fused.size());
      scores.reserve(fused.size());
      for (const auto& f : fused) {
        ids.push_back(f.second);
        scores.push_back(f.first);
      }
      return;
    }
  }
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
