#include "spatialobs/atoms.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "spatialobs/box.hpp"

namespace spatialobs {

namespace detail {

// Appends the decimal digits of v (v >= 0) without locale or allocation.
inline void append_decimal(std::string& s, std::int32_t v) {
  char buf[12];
  int k = 0;
  do {
    buf[k++] = static_cast<char>('0' + v % 10);
    v /= 10;
  } while (v > 0);
  while (k > 0) s.push_back(buf[--k]);
}

inline std::int32_t quantize(double lo, double hi, std::int32_t grid, double extent) {
  const double c = (lo + hi) * 0.5;
  const double v = std::floor(c * grid / extent);
  if (!(v > 0.0)) return 0;  // also catches -0.0
  if (v >= static_cast<double>(grid - 1)) return grid - 1;
  return static_cast<std::int32_t>(v);
}

inline void sort_unique(std::vector<std::uint64_t>& v) {
  std::sort(v.begin(), v.end());
  v.erase(std::unique(v.begin(), v.end()), v.end());
}

}  // namespace detail

std::uint64_t atom_hash(char kind, std::int32_t col, std::int32_t row, const std::string& value) {
  std::string key;
  key.reserve(value.size() + 16);
  key.push_back(kind);
  key.push_back(':');
  detail::append_decimal(key, col);
  key.push_back(':');
  detail::append_decimal(key, row);
  key.push_back(':');
  key += value;
  return fnv1a64(key.data(), key.size());
}

void grid_cells(const double* boxes, std::size_t n, double width, double height, std::int32_t grid,
                std::int32_t* cols, std::int32_t* rows) {
  if (!(std::isfinite(width) && width > 0) || !(std::isfinite(height) && height > 0)) {
    throw std::invalid_argument("screen width and height must be finite and > 0, got " + std::to_string(width) +
                                " x " + std::to_string(height));
  }
  if (grid < 1 || grid > kMaxGrid) {
    throw std::invalid_argument("grid must be between 1 and " + std::to_string(kMaxGrid) + ", got " +
                                std::to_string(grid));
  }
  check_boxes(boxes, n, "element bounds");
  for (std::size_t i = 0; i < n; ++i) {
    const Rect r = rect_at(boxes, i);
    cols[i] = detail::quantize(r.x0, r.x1, grid, width);
    rows[i] = detail::quantize(r.y0, r.y1, grid, height);
  }
}

void screen_atoms(const double* boxes, std::size_t n, double width, double height, std::int32_t grid,
                  const std::vector<std::string>& roles, const std::vector<std::string>& texts,
                  std::vector<std::uint64_t>& control, std::vector<std::uint64_t>& text) {
  if (roles.size() != n || texts.size() != n) {
    throw std::invalid_argument("roles and texts must hold one string per element (" + std::to_string(n) + "), got " +
                                std::to_string(roles.size()) + " and " + std::to_string(texts.size()));
  }
  std::vector<std::int32_t> cols(n), rows(n);
  grid_cells(boxes, n, width, height, grid, cols.data(), rows.data());
  control.clear();
  text.clear();
  control.reserve(n);
  text.reserve(n);
  for (std::size_t i = 0; i < n; ++i) {
    control.push_back(atom_hash('c', cols[i], rows[i], roles[i]));
    if (!texts[i].empty()) text.push_back(atom_hash('t', cols[i], rows[i], texts[i]));
  }
  detail::sort_unique(control);
  detail::sort_unique(text);
}

void check_atom_set(const std::uint64_t* a, std::size_t n, const char* what) {
  for (std::size_t i = 1; i < n; ++i) {
    if (!(a[i - 1] < a[i])) {
      throw std::invalid_argument(std::string(what) + " must be sorted and unique (np.unique gives that); position " +
                                  std::to_string(i) + " breaks the order");
    }
  }
}

}  // namespace spatialobs
