// Occlusion by bounds: which higher, opaque, shown box hides a box's
// viewport-clipped bounds.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "spatialobs/box.hpp"

namespace spatialobs {

struct OcclusionInput {
  const double* boxes;
  const std::int64_t* order;  // paint order: j is higher than i when order[j] > order[i]
  const double* opacity;
  const std::uint8_t* hidden;  // nonzero = hidden
  std::size_t n;
  Rect viewport;
  double min_opacity;
};

// Bounds mode (the CanvasObs definition). For each box that intersects the
// viewport (closed), the index of the box lowest in paint order among those
// that are higher, not hidden, have opacity >= min_opacity, and contain the
// box clipped to the viewport (closed); ties in paint order go to the lower
// index. -1 for offscreen boxes and unoccluded ones.
std::vector<std::int64_t> occluders(const OcclusionInput& in);

// Union mode (ours). For each box that intersects the viewport: fraction[i]
// is the share of its clipped area covered by the union of qualifying boxes
// (higher, shown, opaque enough, any overlap), exactly 1.0 when the union
// covers it completely (decided exactly, without summing areas). occ[i] is
// the bounds-mode occluder when there is one; else, when the union covers
// the box, the qualifying box lowest in paint order that overlaps it with
// positive area; else -1. A clipped box of zero area is covered (fraction 1)
// only when one qualifying box contains it. Offscreen boxes: -1 and 0.
// `targets` (optional, n flags): only the boxes flagged nonzero are answered;
// the others get -1 and 0, while every box still counts as a possible cover.
void occluders_union(const OcclusionInput& in, std::int64_t* occ, double* fraction,
                     const std::uint8_t* targets = nullptr);

}  // namespace spatialobs
