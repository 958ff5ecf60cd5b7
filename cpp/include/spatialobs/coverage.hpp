// Coverage of polygons by unions of polygons: how much of a shape's painted
// region the painted regions of higher shapes hide, exactly on their outlines.
#pragma once

#include <cstddef>
#include <cstdint>

namespace spatialobs {

// Polygons as vertex loops: polygon p has the vertices starts[p] .. starts[p+1]-1
// of `verts` (x, y pairs); the closing edge is implied. Interior by the even-odd
// rule, so a simple polygon of either orientation is its own region.
struct PolygonSet {
  const double* verts;         // (m, 2)
  std::size_t m;
  const std::int64_t* starts;  // (k + 1), starts[0] = 0, non-decreasing, starts[k] = m
  std::size_t k;
};

// For query q: the target polygon targets[q] and the covering polygons
// cover[cover_starts[q] .. cover_starts[q+1]-1]. Writes
//   area[q]     the target's area,
//   covered[q]  the area of the target inside the union of its covering polygons,
//   best[q]     the position in `cover` of the covering polygon whose intersection
//               with the target is largest (the first such in `cover` order),
//               -1 when none meets the target with positive area.
// Exact up to rounding: the plane is cut into vertical slabs at every vertex and
// every edge crossing, inside which each cross-section measure is linear in x,
// so a slab's area is its width times the measure at its middle.
// Throws std::invalid_argument on malformed offsets or non-finite vertices,
// std::out_of_range on a polygon index outside [0, k).
void polygon_coverage(const PolygonSet& polys, const std::int64_t* targets, std::size_t t,
                      const std::int64_t* cover_starts, const std::int64_t* cover, std::size_t c, double* area,
                      double* covered, std::int64_t* best);

}  // namespace spatialobs
