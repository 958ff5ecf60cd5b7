#include "spatialobs/visibility.hpp"

#include <algorithm>
#include <string>

namespace spatialobs {

void visibility(const double* boxes, std::size_t n, const Rect& viewport, double near_factor,
                std::int8_t* labels, double* gaps) {
  check_boxes(boxes, n);
  check_box(viewport, "viewport");
  if (!(std::isfinite(near_factor) && near_factor >= 0)) {
    throw std::invalid_argument("near_factor must be a finite number >= 0, got " + std::to_string(near_factor));
  }
  const double near = near_factor * std::max(viewport.x1 - viewport.x0, viewport.y1 - viewport.y0);
  for (std::size_t i = 0; i < n; ++i) {
    const Rect r = rect_at(boxes, i);
    if (contains(viewport, r)) {
      labels[i] = kVisible;
      gaps[i] = 0.0;
    } else if (intersects(viewport, r)) {
      labels[i] = kPartial;
      gaps[i] = 0.0;
    } else {
      const double g = gap(r, viewport);
      labels[i] = g <= near ? kOffscreenNear : kOffscreenFar;
      gaps[i] = g;
    }
  }
}

}  // namespace spatialobs
