// Visibility of boxes against a viewport.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "spatialobs/box.hpp"

namespace spatialobs {

// Label codes, shared with Python (spatialobs.geometry.VISIBLE, ...).
enum Label : std::int8_t {
  kVisible = 0,
  kPartial = 1,
  kOccluded = 2,
  kOffscreenNear = 3,
  kOffscreenFar = 4,
};

// Per box: kVisible when inside the viewport (closed), kPartial when it
// intersects the viewport (closed) without being inside, else
// kOffscreenNear when its gap to the viewport is <= near_factor * max(w, h)
// of the viewport, else kOffscreenFar. gaps[i] is that gap (0 when it
// intersects); gaps may be null when only the labels are wanted. Linear;
// needs no index.
void visibility(const double* boxes, std::size_t n, const Rect& viewport, double near_factor,
                std::int8_t* labels, double* gaps);

}  // namespace spatialobs
