#include "spatialobs/relations.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <string>
#include <utility>

#include "spatialobs/box_index.hpp"
#include "spatialobs/radix_sort.hpp"

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

// A finite double's bits as an unsigned integer with the same order
// (negatives flipped whole, positives with the sign bit set); -0.0 is folded
// into +0.0 first so that equal values get equal keys.
inline std::uint64_t order_bits(double v) {
  v += 0.0;
  std::uint64_t u;
  std::memcpy(&u, &v, sizeof u);
  return (u >> 63) ? ~u : (u | (std::uint64_t{1} << 63));
}

// Sorted packed keys -> row layout [firsts..., seconds...].
std::vector<std::int64_t> unpack_rows(const std::vector<std::uint64_t>& keys) {
  const std::size_t k = keys.size();
  std::vector<std::int64_t> rows(2 * k);
  for (std::size_t t = 0; t < k; ++t) {
    rows[t] = first_of(keys[t]);
    rows[k + t] = second_of(keys[t]);
  }
  return rows;
}

}  // namespace detail

namespace detail {

struct AreaHit {
  std::uint64_t key;
  double area;
};

// Sorted hits -> row layout pairs and their areas.
void unpack_hits(std::vector<AreaHit>& hits, std::vector<std::int64_t>& pairs, std::vector<double>& areas) {
  radix_sort_by_key(hits);
  const std::size_t k = hits.size();
  pairs.resize(2 * k);
  areas.resize(k);
  for (std::size_t t = 0; t < k; ++t) {
    pairs[t] = first_of(hits[t].key);
    pairs[k + t] = second_of(hits[t].key);
    areas[t] = hits[t].area;
  }
}

}  // namespace detail

void overlap_pairs(const double* boxes, std::size_t n, std::vector<std::int64_t>& pairs,
                   std::vector<double>& areas) {
  overlap_pairs(BoxIndex(boxes, n), pairs, areas);
}

std::vector<std::int64_t> containment_pairs(const double* boxes, std::size_t n) {
  return containment_pairs(BoxIndex(boxes, n));
}

void proximity_pairs(const double* boxes, std::size_t n, double max_gap, std::size_t k_nearest,
                     std::vector<std::int64_t>& pairs, std::vector<double>& gaps) {
  detail::check_tolerance(max_gap, "max_gap");
  proximity_pairs(BoxIndex(boxes, n), max_gap, k_nearest, pairs, gaps);
}

void overlap_pairs_between(const BoxIndex& index, const double* queries, std::size_t m,
                           std::vector<std::int64_t>& pairs, std::vector<double>& areas) {
  check_boxes(queries, m, "queries");
  if (m > std::numeric_limits<std::uint32_t>::max()) throw std::invalid_argument("too many queries (2^32 or more)");
  std::vector<detail::AreaHit> hits;
  for (std::size_t j = 0; j < m; ++j) {
    const Rect q = rect_at(queries, j);
    // the closed search finds every candidate; positive area decides
    index.search(q, [&](std::size_t i) {
      const Rect& r = index.item(i);
      if (overlaps_area(r, q)) hits.push_back(detail::AreaHit{detail::pack(i, j), overlap_area(r, q)});
    });
  }
  detail::unpack_hits(hits, pairs, areas);
}

void overlap_pairs(const BoxIndex& index, std::vector<std::int64_t>& pairs, std::vector<double>& areas) {
  const std::size_t n = index.size();
  // Positive-area overlap is monotone (boxes containing two overlapping
  // boxes overlap too), so it prunes node pairs directly. Each hit carries
  // its area through the sort, so nothing is looked up again afterwards.
  std::vector<detail::AreaHit> hits;
  hits.reserve(2 * n);  // canvases hold a few overlaps per box; saves most regrowth
  index.join([](const Rect& a, const Rect& b) { return overlaps_area(a, b); },
             [&](std::size_t a, std::size_t b, const Rect& ra, const Rect& rb) {
               hits.push_back(detail::AreaHit{detail::pack(std::min(a, b), std::max(a, b)), overlap_area(ra, rb)});
             });
  detail::unpack_hits(hits, pairs, areas);
}

std::vector<std::int64_t> containment_pairs(const BoxIndex& index) {
  const std::size_t n = index.size();
  std::vector<std::uint64_t> keys;
  keys.reserve(2 * n);
  // Containment implies (closed) intersection, so the intersection join
  // finds every candidate; both directions are tested.
  index.join([](const Rect& a, const Rect& b) { return intersects(a, b); },
             [&](std::size_t a, std::size_t b, const Rect& ra, const Rect& rb) {
               if (contains(ra, rb)) keys.push_back(detail::pack(a, b));
               if (contains(rb, ra)) keys.push_back(detail::pack(b, a));
             });
  detail::radix_sort(keys);
  return detail::unpack_rows(keys);
}

void proximity_pairs(const BoxIndex& index, double max_gap, std::size_t k_nearest, std::vector<std::int64_t>& pairs,
                     std::vector<double>& gaps) {
  detail::check_tolerance(max_gap, "max_gap");
  const std::size_t n = index.size();
  if (k_nearest == 0) return;
  // Candidates from a join pruned by the gap between node bounds: a node
  // contains its items, so its gap is never larger (the subtraction, the
  // squares and sqrt are all monotone in floating point), and pruning is
  // exact. Each candidate is recorded from both ends.
  struct Cand {
    std::uint32_t from, to;
    double gap;
  };
  std::vector<Cand> cand;
  index.join([max_gap](const Rect& a, const Rect& b) { return gap(a, b) <= max_gap; },
             [&](std::size_t a, std::size_t b, const Rect& ra, const Rect& rb) {
               if (overlaps_area(ra, rb)) return;
               const double g = gap(ra, rb);
               cand.push_back(Cand{static_cast<std::uint32_t>(a), static_cast<std::uint32_t>(b), g});
               cand.push_back(Cand{static_cast<std::uint32_t>(b), static_cast<std::uint32_t>(a), g});
             });
  // Bucket the candidates by the box that keeps them (a counting sort), then
  // keep the k closest of each bucket by (gap, id).
  std::vector<std::size_t> start(n + 1, 0);
  for (const Cand& c : cand) ++start[c.from + 1];
  for (std::size_t i = 0; i < n; ++i) start[i + 1] += start[i];
  std::vector<std::pair<double, std::uint32_t>> bucket(cand.size());
  {
    std::vector<std::size_t> fill(start.begin(), start.end() - 1);
    for (const Cand& c : cand) bucket[fill[c.from]++] = {c.gap, c.to};
  }
  std::vector<std::pair<std::uint64_t, double>> kept;
  for (std::size_t i = 0; i < n; ++i) {
    auto first = bucket.begin() + static_cast<std::ptrdiff_t>(start[i]);
    auto last = bucket.begin() + static_cast<std::ptrdiff_t>(start[i + 1]);
    const auto keep = std::min<std::ptrdiff_t>(static_cast<std::ptrdiff_t>(k_nearest), last - first);
    std::partial_sort(first, first + keep, last);
    for (auto it = first; it != first + keep; ++it) {
      const std::size_t j = it->second;
      kept.emplace_back(detail::pack(std::min(i, j), std::max(i, j)), it->first);
    }
  }
  std::sort(kept.begin(), kept.end(), [](const auto& x, const auto& y) { return x.first < y.first; });
  std::vector<std::uint64_t> keys;
  for (std::size_t t = 0; t < kept.size(); ++t) {
    if (t > 0 && kept[t].first == kept[t - 1].first) continue;
    keys.push_back(kept[t].first);
    gaps.push_back(kept[t].second);
  }
  pairs = detail::unpack_rows(keys);
}

void alignment_pairs(const double* boxes, std::size_t n, double tol, std::vector<std::int64_t>& pairs,
                     std::vector<std::int8_t>& kinds) {
  check_boxes(boxes, n);
  detail::check_tolerance(tol, "tol");
  struct Keyed {
    std::uint64_t key;  // the coordinate's bits, mapped so that integer order is numeric order
    std::uint32_t id;
  };
  std::vector<Keyed> keyed(n);
  std::vector<double> value(n), along(n);
  std::vector<std::pair<double, std::size_t>> line;
  std::vector<std::uint64_t> found, all;
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
      value[i] = key;
      along[i] = vertical_line ? (r.y0 + r.y1) * 0.5 : (r.x0 + r.x1) * 0.5;
      keyed[i] = Keyed{detail::order_bits(key), static_cast<std::uint32_t>(i)};
    }
    // stable radix sort on the key: equal keys keep index order, i.e. sorted by (key, index)
    detail::radix_sort_by_key(keyed);
    found.clear();
    for (std::size_t s = 0; s < n;) {
      const double start = value[keyed[s].id];
      std::size_t e = s + 1;
      while (e < n && value[keyed[e].id] - start <= tol) ++e;
      if (e - s > 1) {
        line.clear();
        for (std::size_t t = s; t < e; ++t) line.emplace_back(along[keyed[t].id], keyed[t].id);
        std::sort(line.begin(), line.end());
        for (std::size_t t = 0; t + 1 < line.size(); ++t) {
          const std::size_t a = line[t].second, b = line[t + 1].second;
          found.push_back(detail::pack(std::min(a, b), std::max(a, b)));
        }
      }
      s = e;
    }
    detail::radix_sort(found);
    all.insert(all.end(), found.begin(), found.end());
    kinds.insert(kinds.end(), found.size(), static_cast<std::int8_t>(kind));
  }
  pairs = detail::unpack_rows(all);
}

void alignment_masks(const double* boxes, std::size_t n, double tol, const std::int64_t* group,
                     std::vector<std::int64_t>& pairs, std::vector<std::int8_t>& axes,
                     std::vector<std::int8_t>& masks) {
  check_boxes(boxes, n);
  detail::check_tolerance(tol, "tol");
  if (n >= (std::size_t{1} << 31)) throw std::invalid_argument("too many boxes for alignment_masks (2^31 or more)");
  struct Keyed {
    std::uint64_t key;
    std::uint32_t id;
  };
  // one record per (pair, kind): key (i << 33 | j << 1 | axis) sorts as (i, j, axis); kinds OR-ed after
  struct Hit {
    std::uint64_t key;
    std::uint32_t bit;
  };
  std::vector<Keyed> keyed(n);
  std::vector<double> value(n), along(n);
  std::vector<std::pair<double, std::uint32_t>> line;
  std::vector<Hit> hits;
  for (int kind = kAlignLeft; kind <= kAlignBottom; ++kind) {
    const bool vertical_line = kind <= kAlignRight;
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
      value[i] = key;
      along[i] = vertical_line ? (r.y0 + r.y1) * 0.5 : (r.x0 + r.x1) * 0.5;
      keyed[i] = Keyed{detail::order_bits(key), static_cast<std::uint32_t>(i)};
    }
    detail::radix_sort_by_key(keyed);  // stable: (key, index), the cut of alignment_pairs
    const std::uint64_t axis = vertical_line ? 0 : 1;
    for (std::size_t s = 0; s < n;) {
      const double start = value[keyed[s].id];
      std::size_t e = s + 1;
      while (e < n && value[keyed[e].id] - start <= tol) ++e;
      if (e - s > 1) {
        line.clear();
        for (std::size_t t = s; t < e; ++t) line.emplace_back(along[keyed[t].id], keyed[t].id);
        std::sort(line.begin(), line.end());
        for (std::size_t t = 0; t + 1 < line.size(); ++t) {
          const std::uint64_t a = std::min(line[t].second, line[t + 1].second);
          const std::uint64_t b = std::max(line[t].second, line[t + 1].second);
          if (group != nullptr && group[a] != group[b]) continue;
          hits.push_back(Hit{(a << 33) | (b << 1) | axis, std::uint32_t{1} << kind});
        }
      }
      s = e;
    }
  }
  detail::radix_sort_by_key(hits);
  std::size_t k = 0;
  for (std::size_t t = 0; t < hits.size(); ++t) k += (t == 0 || hits[t].key != hits[t - 1].key);
  pairs.assign(2 * k, 0);
  axes.assign(k, 0);
  masks.assign(k, 0);
  std::size_t u = 0;
  for (std::size_t t = 0; t < hits.size(); ++t) {
    if (t > 0 && hits[t].key == hits[t - 1].key) {
      masks[u - 1] = static_cast<std::int8_t>(masks[u - 1] | hits[t].bit);
      continue;
    }
    pairs[u] = static_cast<std::int64_t>(hits[t].key >> 33);
    pairs[k + u] = static_cast<std::int64_t>((hits[t].key >> 1) & 0xffffffffu);
    axes[u] = static_cast<std::int8_t>(hits[t].key & 1u);
    masks[u] = static_cast<std::int8_t>(hits[t].bit);
    ++u;
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
