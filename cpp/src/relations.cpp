#include "spatialobs/relations.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <utility>

#include "spatialobs/box_index.hpp"

namespace spatialobs {

namespace detail {

void check_tolerance(double v, const char* name) {
  if (!(std::isfinite(v) && v >= 0)) {
    throw std::invalid_argument(std::string(name) + " must be a finite number >= 0, got " + std::to_string(v));
  }
}

// Pairs of ids below 2^32 packed into one word sort as (a, b).
inline std::uint64_t pack(std::size_t a, std::size_t b) {
  return (static_cast<std::uint64_t>(a) << 32) | static_cast<std::uint64_t>(b);
}
inline std::int64_t first_of(std::uint64_t k) { return static_cast<std::int64_t>(k >> 32); }
inline std::int64_t second_of(std::uint64_t k) { return static_cast<std::int64_t>(k & 0xffffffffu); }

// v moved `steps` representable doubles toward -inf (or +inf), so a query
// window computed in floating point never misses a box that the exact
// filter would keep.
inline double widen(double v, int steps, double toward) {
  for (int s = 0; s < steps; ++s) v = std::nextafter(v, toward);
  return v;
}

}  // namespace detail

void overlap_pairs(const double* boxes, std::size_t n, std::vector<std::int64_t>& pairs,
                   std::vector<double>& areas) {
  const BoxIndex index(boxes, n);
  std::vector<std::pair<std::size_t, double>> hits;
  for (std::size_t i = 0; i < n; ++i) {
    const Rect& a = index.item(i);
    hits.clear();
    index.search(a, [&](std::size_t j) {
      if (j > i && overlaps_area(a, index.item(j))) hits.emplace_back(j, overlap_area(a, index.item(j)));
    });
    std::sort(hits.begin(), hits.end());
    for (const auto& h : hits) {
      pairs.push_back(static_cast<std::int64_t>(i));
      pairs.push_back(static_cast<std::int64_t>(h.first));
      areas.push_back(h.second);
    }
  }
}

std::vector<std::int64_t> containment_pairs(const double* boxes, std::size_t n) {
  const BoxIndex index(boxes, n);
  std::vector<std::uint64_t> keys;
  for (std::size_t i = 0; i < n; ++i) {
    index.search_containing(index.item(i), [&](std::size_t j) {
      if (j != i) keys.push_back(detail::pack(j, i));
    });
  }
  std::sort(keys.begin(), keys.end());
  std::vector<std::int64_t> pairs;
  pairs.reserve(2 * keys.size());
  for (std::uint64_t k : keys) {
    pairs.push_back(detail::first_of(k));
    pairs.push_back(detail::second_of(k));
  }
  return pairs;
}

void proximity_pairs(const double* boxes, std::size_t n, double max_gap, std::size_t k_nearest,
                     std::vector<std::int64_t>& pairs, std::vector<double>& gaps) {
  detail::check_tolerance(max_gap, "max_gap");
  const BoxIndex index(boxes, n);
  if (k_nearest == 0) return;
  const double inf = std::numeric_limits<double>::infinity();
  std::vector<std::pair<double, std::size_t>> cand;
  std::vector<std::pair<std::uint64_t, double>> kept;
  for (std::size_t i = 0; i < n; ++i) {
    const Rect& a = index.item(i);
    const Rect window{detail::widen(a.x0 - max_gap, 4, -inf), detail::widen(a.y0 - max_gap, 4, -inf),
                      detail::widen(a.x1 + max_gap, 4, inf), detail::widen(a.y1 + max_gap, 4, inf)};
    cand.clear();
    index.search(window, [&](std::size_t j) {
      if (j == i) return;
      const Rect& b = index.item(j);
      if (overlaps_area(a, b)) return;
      const double g = gap(a, b);
      if (g <= max_gap) cand.emplace_back(g, j);
    });
    const std::size_t keep = std::min(k_nearest, cand.size());
    std::partial_sort(cand.begin(), cand.begin() + static_cast<std::ptrdiff_t>(keep), cand.end());
    for (std::size_t c = 0; c < keep; ++c) {
      const std::size_t j = cand[c].second;
      kept.emplace_back(detail::pack(std::min(i, j), std::max(i, j)), cand[c].first);
    }
  }
  std::sort(kept.begin(), kept.end(), [](const auto& x, const auto& y) { return x.first < y.first; });
  for (std::size_t t = 0; t < kept.size(); ++t) {
    if (t > 0 && kept[t].first == kept[t - 1].first) continue;
    pairs.push_back(detail::first_of(kept[t].first));
    pairs.push_back(detail::second_of(kept[t].first));
    gaps.push_back(kept[t].second);
  }
}

void alignment_pairs(const double* boxes, std::size_t n, double tol, std::vector<std::int64_t>& pairs,
                     std::vector<std::int8_t>& kinds) {
  check_boxes(boxes, n);
  detail::check_tolerance(tol, "tol");
  std::vector<std::pair<double, std::size_t>> keyed(n);
  std::vector<std::pair<double, std::size_t>> line;
  std::vector<std::uint64_t> found;
  for (int kind = kAlignLeft; kind <= kAlignBottom; ++kind) {
    const bool vertical_line = kind <= kAlignRight;  // left/center-x/right align along a vertical line
    for (std::size_t i = 0; i < n; ++i) {
      const Rect r = rect_at(boxes, i);
      double key = 0;
      switch (kind) {
        case kAlignLeft: key = r.x0; break;
        case kAlignCenterX: key = (r.x0 + r.x1) * 0.5; break;
        case kAlignRight: key = r.x1; break;
        case kAlignTop: key = r.y0; break;
        case kAlignCenterY: key = (r.y0 + r.y1) * 0.5; break;
        default: key = r.y1; break;
      }
      keyed[i] = {key, i};
    }
    std::sort(keyed.begin(), keyed.end());
    found.clear();
    for (std::size_t s = 0; s < n;) {
      std::size_t e = s + 1;
      while (e < n && keyed[e].first - keyed[s].first <= tol) ++e;
      if (e - s > 1) {
        line.clear();
        for (std::size_t t = s; t < e; ++t) {
          const Rect r = rect_at(boxes, keyed[t].second);
          const double along = vertical_line ? (r.y0 + r.y1) * 0.5 : (r.x0 + r.x1) * 0.5;
          line.emplace_back(along, keyed[t].second);
        }
        std::sort(line.begin(), line.end());
        for (std::size_t t = 0; t + 1 < line.size(); ++t) {
          const std::size_t a = line[t].second, b = line[t + 1].second;
          found.push_back(detail::pack(std::min(a, b), std::max(a, b)));
        }
      }
      s = e;
    }
    std::sort(found.begin(), found.end());
    for (std::uint64_t k : found) {
      pairs.push_back(detail::first_of(k));
      pairs.push_back(detail::second_of(k));
      kinds.push_back(static_cast<std::int8_t>(kind));
    }
  }
}

std::vector<std::int64_t> reading_order(const double* boxes, std::size_t n, double row_tol) {
  check_boxes(boxes, n);
  detail::check_tolerance(row_tol, "row_tol");
  struct Item {
    double cy, x0;
    std::size_t id;
    bool operator<(const Item& o) const {
      if (cy != o.cy) return cy < o.cy;
      if (x0 != o.x0) return x0 < o.x0;
      return id < o.id;
    }
  };
  std::vector<Item> items(n);
  for (std::size_t i = 0; i < n; ++i) {
    const Rect r = rect_at(boxes, i);
    items[i] = Item{(r.y0 + r.y1) * 0.5, r.x0, i};
  }
  std::sort(items.begin(), items.end());
  std::vector<std::int64_t> rank(n);
  std::int64_t next = 0;
  for (std::size_t s = 0; s < n;) {
    std::size_t e = s + 1;
    while (e < n && items[e].cy - items[s].cy <= row_tol) ++e;
    std::sort(items.begin() + static_cast<std::ptrdiff_t>(s), items.begin() + static_cast<std::ptrdiff_t>(e),
              [](const Item& a, const Item& b) {
                if (a.x0 != b.x0) return a.x0 < b.x0;
                if (a.cy != b.cy) return a.cy < b.cy;
                return a.id < b.id;
              });
    for (std::size_t t = s; t < e; ++t) rank[items[t].id] = next++;
    s = e;
  }
  return rank;
}

}  // namespace spatialobs
