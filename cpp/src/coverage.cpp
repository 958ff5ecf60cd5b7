#include "spatialobs/coverage.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace spatialobs {

namespace detail {

struct CovEdge {
  double x0, y0, x1, y1;  // x0 < x1 (vertical edges add nothing to a cross-section)
  std::size_t owner;      // 0: the target, 1 + j: the j-th covering polygon of the query
};

inline double y_at(const CovEdge& e, double x) { return e.y0 + (e.y1 - e.y0) * ((x - e.x0) / (e.x1 - e.x0)); }

// x of the proper crossing of two edges, if they cross strictly inside both x ranges.
inline bool crossing_x(const CovEdge& a, const CovEdge& b, double& x) {
  const double lo = std::max(a.x0, b.x0), hi = std::min(a.x1, b.x1);
  if (!(lo < hi)) return false;
  const double da = y_at(a, lo) - y_at(b, lo), db = y_at(a, hi) - y_at(b, hi);
  if (!((da < 0 && db > 0) || (da > 0 && db < 0))) return false;
  x = lo + (hi - lo) * (da / (da - db));
  return x > lo && x < hi;
}

using Intervals = std::vector<std::pair<double, double>>;

// The even-odd intervals of a sorted list of crossing ys.
inline void pair_up(std::vector<double>& ys, Intervals& out) {
  out.clear();
  std::sort(ys.begin(), ys.end());
  for (std::size_t i = 0; i + 1 < ys.size(); i += 2) out.emplace_back(ys[i], ys[i + 1]);
}

// Length of the intersection of two sorted disjoint interval lists.
inline double overlap_len(const Intervals& a, const Intervals& b) {
  double s = 0;
  std::size_t i = 0, j = 0;
  while (i < a.size() && j < b.size()) {
    const double lo = std::max(a[i].first, b[j].first), hi = std::min(a[i].second, b[j].second);
    if (hi > lo) s += hi - lo;
    if (a[i].second < b[j].second) ++i; else ++j;
  }
  return s;
}

void check_polygon(const PolygonSet& p, std::int64_t idx, const char* what) {
  if (idx < 0 || static_cast<std::size_t>(idx) >= p.k) {
    throw std::out_of_range(std::string(what) + " polygon " + std::to_string(idx) + " is not in [0, " +
                            std::to_string(p.k) + ")");
  }
}

void add_edges(const PolygonSet& p, std::int64_t idx, std::size_t owner, std::vector<CovEdge>& edges,
               double& xmin, double& xmax) {
  const std::int64_t a = p.starts[idx], b = p.starts[idx + 1];
  for (std::int64_t v = a; v < b; ++v) {
    const std::int64_t w = v + 1 < b ? v + 1 : a;
    double x0 = p.verts[2 * v], y0 = p.verts[2 * v + 1], x1 = p.verts[2 * w], y1 = p.verts[2 * w + 1];
    xmin = std::min(xmin, x0);
    xmax = std::max(xmax, x0);
    if (x0 == x1) continue;
    if (x0 > x1) {
      std::swap(x0, x1);
      std::swap(y0, y1);
    }
    edges.push_back(CovEdge{x0, y0, x1, y1, owner});
  }
}

}  // namespace detail

void polygon_coverage(const PolygonSet& polys, const std::int64_t* targets, std::size_t t,
                      const std::int64_t* cover_starts, const std::int64_t* cover, std::size_t c, double* area,
                      double* covered, std::int64_t* best) {
  using namespace detail;
  if (polys.starts[0] != 0 || static_cast<std::size_t>(polys.starts[polys.k]) != polys.m) {
    throw std::invalid_argument("polygon starts must begin at 0 and end at the vertex count (" +
                                std::to_string(polys.m) + ")");
  }
  for (std::size_t p = 0; p < polys.k; ++p) {
    if (polys.starts[p + 1] < polys.starts[p]) {
      throw std::invalid_argument("polygon starts must not decrease (polygon " + std::to_string(p) + ")");
    }
  }
  for (std::size_t v = 0; v < 2 * polys.m; ++v) {
    if (!std::isfinite(polys.verts[v])) {
      throw std::invalid_argument("polygon vertex " + std::to_string(v / 2) + " is not finite");
    }
  }
  if (cover_starts[0] != 0 || static_cast<std::size_t>(cover_starts[t]) != c) {
    throw std::invalid_argument("cover starts must begin at 0 and end at the cover count (" + std::to_string(c) + ")");
  }
  for (std::size_t q = 0; q < t; ++q) {
    if (cover_starts[q + 1] < cover_starts[q]) {
      throw std::invalid_argument("cover starts must not decrease (query " + std::to_string(q) + ")");
    }
    check_polygon(polys, targets[q], "target");
  }
  for (std::size_t j = 0; j < c; ++j) check_polygon(polys, cover[j], "cover");

  std::vector<CovEdge> edges;
  std::vector<double> xs;
  std::vector<std::vector<double>> ys;
  std::vector<Intervals> iv;
  Intervals uni, tmp;
  std::vector<double> share;
  for (std::size_t q = 0; q < t; ++q) {
    const std::int64_t c0 = cover_starts[q], c1 = cover_starts[q + 1];
    const std::size_t nc = static_cast<std::size_t>(c1 - c0);
    edges.clear();
    double tx0 = INFINITY, tx1 = -INFINITY, dummy0 = INFINITY, dummy1 = -INFINITY;
    add_edges(polys, targets[q], 0, edges, tx0, tx1);
    const std::size_t n_target = edges.size();
    for (std::size_t j = 0; j < nc; ++j) add_edges(polys, cover[c0 + j], 1 + j, edges, dummy0, dummy1);
    area[q] = 0;
    covered[q] = 0;
    best[q] = -1;
    if (!n_target) continue;
    // cut points: vertices and crossings inside the target's x range
    xs.clear();
    for (const CovEdge& e : edges) {
      if (e.x0 >= tx0 && e.x0 <= tx1) xs.push_back(e.x0);
      if (e.x1 >= tx0 && e.x1 <= tx1) xs.push_back(e.x1);
    }
    xs.push_back(tx0);
    xs.push_back(tx1);
    for (std::size_t i = 0; i < edges.size(); ++i) {
      if (edges[i].x1 <= tx0 || edges[i].x0 >= tx1) continue;
      for (std::size_t j = i + 1; j < edges.size(); ++j) {
        double x;
        if (crossing_x(edges[i], edges[j], x) && x > tx0 && x < tx1) xs.push_back(x);
      }
    }
    std::sort(xs.begin(), xs.end());
    xs.erase(std::unique(xs.begin(), xs.end()), xs.end());
    ys.assign(1 + nc, {});
    iv.assign(1 + nc, {});
    share.assign(nc, 0.0);
    for (std::size_t s = 0; s + 1 < xs.size(); ++s) {
      const double a = xs[s], b = xs[s + 1], w = b - a;
      if (!(w > 0)) continue;
      const double xm = a + 0.5 * w;
      for (auto& v : ys) v.clear();
      for (const CovEdge& e : edges) {
        if (e.x0 < xm && xm < e.x1) ys[e.owner].push_back(y_at(e, xm));
      }
      pair_up(ys[0], iv[0]);
      if (iv[0].empty()) continue;
      double tl = 0;
      for (const auto& p : iv[0]) tl += p.second - p.first;
      area[q] += w * tl;
      // the union of the covers' intervals
      tmp.clear();
      for (std::size_t j = 0; j < nc; ++j) {
        pair_up(ys[1 + j], iv[1 + j]);
        if (iv[1 + j].empty()) continue;
        const double o = overlap_len(iv[0], iv[1 + j]);
        share[j] += w * o;
        tmp.insert(tmp.end(), iv[1 + j].begin(), iv[1 + j].end());
      }
      if (tmp.empty()) continue;
      std::sort(tmp.begin(), tmp.end());
      uni.clear();
      for (const auto& p : tmp) {
        if (!uni.empty() && p.first <= uni.back().second) uni.back().second = std::max(uni.back().second, p.second);
        else uni.push_back(p);
      }
      covered[q] += w * overlap_len(iv[0], uni);
    }
    double top = 0;
    for (std::size_t j = 0; j < nc; ++j) {
      if (share[j] > top) {
        top = share[j];
        best[q] = c0 + static_cast<std::int64_t>(j);
      }
    }
  }
}

}  // namespace spatialobs
