// tldraw's segment crossing, shared by the arrow and elbow kernels.
#pragma once

#include <cmath>

namespace spatialobs::detail {

// intersectLineSegmentLineSegment with precision 1e-10: whether segment a1-a2
// crosses segment b1-b2 (parallel, touching-by-a-hair and degenerate segments
// do not), and where, written to `out`. `Point` is any type with double x, y
// members and aggregate initialization; the operations and their order are
// tldraw's (and the Python twin's), so the bits are too.
template <class Point>
inline bool intersect_segment_segment(Point a1, Point a2, Point b1, Point b2, Point& out) {
  constexpr double precision = 1e-10;
  const double abx = a1.x - b1.x, aby = a1.y - b1.y;
  const double bvx = b2.x - b1.x, bvy = b2.y - b1.y;
  const double avx = a2.x - a1.x, avy = a2.y - a1.y;
  const double ua_t = bvx * aby - bvy * abx;
  const double ub_t = avx * aby - avy * abx;
  const double u_b = bvy * avx - bvx * avy;
  if (std::fabs(ua_t) <= precision || std::fabs(ub_t) <= precision || std::fabs(u_b) <= precision) return false;
  const double ua = ua_t / u_b;
  const double ub = ub_t / u_b;
  if (-precision <= ua && ua <= 1 + precision && -precision <= ub && ub <= 1 + precision) {
    out = {a1.x + ua * avx, a1.y + ua * avy};
    return true;
  }
  return false;
}

}  // namespace spatialobs::detail
