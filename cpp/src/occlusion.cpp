#include "spatialobs/occlusion.hpp"

#include <algorithm>
#include <limits>
#include <string>

#include "spatialobs/box_index.hpp"

namespace spatialobs {

namespace detail {

// One pass over the input: validates every row (box and opacity), and
// collects the boxes in view and the possible occluders among them. An
// occluder contains a box clipped to the viewport, so it meets the viewport
// too: the index is built over shown, opaque-enough boxes in view only,
// usually a small fraction of the page. ids maps index positions back to
// input rows.
struct Occluders {
  std::vector<std::int64_t> ids;
  std::vector<std::size_t> inview;
  BoxIndex index;
};

Occluders prepare(const OcclusionInput& in) {
  check_box(in.viewport, "viewport");
  if (!(std::isfinite(in.min_opacity) && in.min_opacity >= 0 && in.min_opacity <= 1)) {
    throw std::invalid_argument("min_opacity must lie in [0, 1], got " + std::to_string(in.min_opacity));
  }
  std::vector<std::int64_t> ids;
  std::vector<std::size_t> inview;
  std::vector<double> flat;
  for (std::size_t j = 0; j < in.n; ++j) {
    const Rect r = rect_at(in.boxes, j);
    const double a = in.opacity[j];
    // cheap combined test first; the precise messages come from the checks
    if (!(r.x0 <= r.x1 && r.y0 <= r.y1 && a >= 0 && a <= 1) || !std::isfinite(r.x0 + r.y0 + r.x1 + r.y1)) {
      check_box_row(in.boxes + 4 * j, j, "boxes");
      if (!(a >= 0 && a <= 1)) {
        throw std::invalid_argument("opacity row " + std::to_string(j) + " must lie in [0, 1], got " +
                                    std::to_string(a));
      }
    }
    if (!intersects(r, in.viewport)) continue;
    inview.push_back(j);
    if (in.hidden[j] || a < in.min_opacity) continue;
    ids.push_back(static_cast<std::int64_t>(j));
    flat.insert(flat.end(), in.boxes + 4 * j, in.boxes + 4 * j + 4);
  }
  BoxIndex index(flat.data(), ids.size());
  return Occluders{std::move(ids), std::move(inview), std::move(index)};
}

// True when candidate (order oc, id c) is lower in paint order than the
// current best (order ob, id b); b < 0 means no best yet.
inline bool lower(std::int64_t oc, std::int64_t c, std::int64_t ob, std::int64_t b) {
  return b < 0 || oc < ob || (oc == ob && c < b);
}

std::int64_t bounds_occluder(const OcclusionInput& in, const Occluders& occ, std::size_t i, const Rect& q) {
  std::int64_t best = -1;
  const std::int64_t oi = in.order[i];
  occ.index.search_containing(q, [&](std::size_t p) {
    const std::int64_t j = occ.ids[p];
    if (in.order[j] > oi && lower(in.order[j], j, best < 0 ? 0 : in.order[best], best)) best = j;
  });
  return best;
}

// Area of the union of rects (all inside q) and whether they cover q
// completely. Sweep over x with a segment tree over the elementary y
// intervals; `full` is decided structurally (every elementary interval of
// every slab covered), never by comparing summed areas.
struct Coverage {
  double area;
  bool full;
};

class CoverTree {
 public:
  explicit CoverTree(const std::vector<double>& ys) : ys_(ys), m_(ys.size() - 1), cnt_(4 * m_), len_(4 * m_), full_(4 * m_) {}
  void add(double y0, double y1, int delta) {
    std::size_t a = static_cast<std::size_t>(std::lower_bound(ys_.begin(), ys_.end(), y0) - ys_.begin());
    std::size_t b = static_cast<std::size_t>(std::lower_bound(ys_.begin(), ys_.end(), y1) - ys_.begin());
    if (a < b) update(1, 0, m_, a, b, delta);
  }
  double covered() const { return len_[1]; }
  bool full() const { return full_[1]; }

 private:
  void update(std::size_t node, std::size_t lo, std::size_t hi, std::size_t a, std::size_t b, int delta) {
    if (b <= lo || hi <= a) return;
    if (a <= lo && hi <= b) {
      cnt_[node] += delta;
    } else {
      std::size_t mid = (lo + hi) / 2;
      update(2 * node, lo, mid, a, b, delta);
      update(2 * node + 1, mid, hi, a, b, delta);
    }
    if (cnt_[node] > 0) {
      len_[node] = ys_[hi] - ys_[lo];
      full_[node] = true;
    } else if (hi - lo == 1) {
      len_[node] = 0;
      full_[node] = false;
    } else {
      len_[node] = len_[2 * node] + len_[2 * node + 1];
      full_[node] = full_[2 * node] && full_[2 * node + 1];
    }
  }
  const std::vector<double>& ys_;
  std::size_t m_;
  std::vector<int> cnt_;
  std::vector<double> len_;
  std::vector<char> full_;
};

Coverage union_coverage(const Rect& q, const std::vector<Rect>& rects) {
  if (rects.empty()) return Coverage{0.0, false};
  std::vector<double> ys{q.y0, q.y1};
  std::vector<double> xs{q.x0, q.x1};
  struct Event {
    double x;
    int delta;
    double y0, y1;
  };
  std::vector<Event> events;
  events.reserve(2 * rects.size());
  for (const Rect& r : rects) {
    ys.push_back(r.y0);
    ys.push_back(r.y1);
    xs.push_back(r.x0);
    xs.push_back(r.x1);
    events.push_back({r.x0, +1, r.y0, r.y1});
    events.push_back({r.x1, -1, r.y0, r.y1});
  }
  std::sort(ys.begin(), ys.end());
  ys.erase(std::unique(ys.begin(), ys.end()), ys.end());
  std::sort(xs.begin(), xs.end());
  xs.erase(std::unique(xs.begin(), xs.end()), xs.end());
  std::sort(events.begin(), events.end(), [](const Event& a, const Event& b) { return a.x < b.x; });
  CoverTree tree(ys);
  double area = 0.0;
  bool full = true;
  std::size_t e = 0;
  for (std::size_t t = 0; t + 1 < xs.size(); ++t) {
    while (e < events.size() && events[e].x <= xs[t]) {
      tree.add(events[e].y0, events[e].y1, events[e].delta);
      ++e;
    }
    area += tree.covered() * (xs[t + 1] - xs[t]);
    full = full && tree.full();
  }
  return Coverage{area, full};
}

}  // namespace detail

std::vector<std::int64_t> occluders(const OcclusionInput& in) {
  const detail::Occluders occ = detail::prepare(in);
  std::vector<std::int64_t> out(in.n, -1);
  for (std::size_t i : occ.inview) out[i] = detail::bounds_occluder(in, occ, i, clip(rect_at(in.boxes, i), in.viewport));
  return out;
}

void occluders_union(const OcclusionInput& in, std::int64_t* occ_out, double* fraction, const std::uint8_t* targets) {
  const detail::Occluders occ = detail::prepare(in);
  const double below_one = std::nextafter(1.0, 0.0);
  std::fill(occ_out, occ_out + in.n, -1);
  std::fill(fraction, fraction + in.n, 0.0);
  std::vector<Rect> parts;
  for (std::size_t i : occ.inview) {
    if (targets != nullptr && !targets[i]) continue;
    const Rect q = clip(rect_at(in.boxes, i), in.viewport);
    const std::int64_t bounded = detail::bounds_occluder(in, occ, i, q);
    if (bounded >= 0) {
      occ_out[i] = bounded;
      fraction[i] = 1.0;
      continue;
    }
    if (!(q.x1 > q.x0 && q.y1 > q.y0)) continue;  // zero area: only a single container counts
    parts.clear();
    std::int64_t first = -1;
    const std::int64_t oi = in.order[i];
    occ.index.search(q, [&](std::size_t p) {
      const std::int64_t j = occ.ids[p];
      const Rect b = occ.index.item(p);
      if (in.order[j] <= oi || !overlaps_area(b, q)) return;
      parts.push_back(clip(b, q));
      if (detail::lower(in.order[j], j, first < 0 ? 0 : in.order[first], first)) first = j;
    });
    const detail::Coverage cov = detail::union_coverage(q, parts);
    if (cov.full) {
      occ_out[i] = first;
      fraction[i] = 1.0;
    } else {
      fraction[i] = std::min(cov.area / ((q.x1 - q.x0) * (q.y1 - q.y0)), below_one);
    }
  }
}

}  // namespace spatialobs
