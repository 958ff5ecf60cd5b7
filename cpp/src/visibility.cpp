#include "spatialobs/visibility.hpp"

#include <algorithm>
#include <string>

namespace spatialobs {

void visibility(const double* boxes, std::size_t n, const Rect& viewport, double near_factor,
                std::int8_t* labels, double* gaps) {
  check_box(viewport, "viewport");
  if (!(std::isfinite(near_factor) && near_factor >= 0)) {
    throw std::invalid_argument("near_factor must be a finite number >= 0, got " + std::to_string(near_factor));
  }
  const double near = near_factor * std::max(viewport.x1 - viewport.x0, viewport.y1 - viewport.y0);
  const double vx0 = viewport.x0, vy0 = viewport.y0, vx1 = viewport.x1, vy1 = viewport.y1;
  // One branch-free pass (the boxes stream through memory once and the loop can be
  // vectorized); a bad row is reported after it, by the full check, which names the
  // first one. A box meets the viewport (closed) exactly when both separations are 0:
  // for finite doubles a - b <= 0 holds exactly when a <= b. Its gap is then
  // sqrt(0) = 0, as gap() gives.
  bool bad = false;
  for (std::size_t i = 0; i < n; ++i) {
    const double* b = boxes + 4 * i;
    const double x0 = b[0], y0 = b[1], x1 = b[2], y1 = b[3];
    bad |= !(x0 <= x1) | !(y0 <= y1) | !std::isfinite(x0 + y0 + x1 + y1);
    const double dx = std::max(0.0, std::max(vx0 - x1, x0 - vx1));
    const double dy = std::max(0.0, std::max(vy0 - y1, y0 - vy1));
    const double g = std::sqrt(dx * dx + dy * dy);
    const bool inside = (vx0 <= x0) & (x1 <= vx1) & (vy0 <= y0) & (y1 <= vy1);
    const bool meets = (dx == 0.0) & (dy == 0.0);
    const std::int8_t off = g <= near ? kOffscreenNear : kOffscreenFar;
    labels[i] = inside ? static_cast<std::int8_t>(kVisible) : meets ? static_cast<std::int8_t>(kPartial) : off;
    if (gaps != nullptr) gaps[i] = g;  // loop-invariant: the compiler splits the loop on it
  }
  if (bad) check_boxes(boxes, n);
}

}  // namespace spatialobs
