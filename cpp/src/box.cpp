#include "spatialobs/box.hpp"

#include <sstream>

namespace spatialobs {

namespace detail {

std::string describe(const double* b) {
  std::ostringstream os;
  os.precision(17);
  os << "[" << b[0] << ", " << b[1] << ", " << b[2] << ", " << b[3] << "]";
  return os.str();
}

}  // namespace detail

void check_box_row(const double* b, std::size_t row, const char* what) {
  if (!(std::isfinite(b[0]) && std::isfinite(b[1]) && std::isfinite(b[2]) && std::isfinite(b[3]))) {
    throw std::invalid_argument(std::string(what) + " row " + std::to_string(row) + " is not finite: " +
                                detail::describe(b));
  }
  if (b[2] < b[0] || b[3] < b[1]) {
    throw std::invalid_argument(std::string(what) + " row " + std::to_string(row) +
                                " has x1 < x0 or y1 < y0 (boxes are [x0, y0, x1, y1]): " + detail::describe(b));
  }
}

void check_boxes(const double* boxes, std::size_t n, const char* what) {
  for (std::size_t i = 0; i < n; ++i) check_box_row(boxes + 4 * i, i, what);
}

void check_box(const Rect& r, const char* what) {
  double b[4] = {r.x0, r.y0, r.x1, r.y1};
  if (!(std::isfinite(b[0]) && std::isfinite(b[1]) && std::isfinite(b[2]) && std::isfinite(b[3]))) {
    throw std::invalid_argument(std::string(what) + " is not finite: " + detail::describe(b));
  }
  if (b[2] < b[0] || b[3] < b[1]) {
    throw std::invalid_argument(std::string(what) + " has x1 < x0 or y1 < y0 (a box is [x0, y0, x1, y1]): " +
                                detail::describe(b));
  }
}

}  // namespace spatialobs
