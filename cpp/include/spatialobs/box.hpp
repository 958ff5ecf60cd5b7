// Axis-aligned boxes [x0, y0, x1, y1] in page units, y down, and the
// predicates every kernel shares. All predicates are closed: touching edges
// intersect and a box contains itself.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>

// SPATIALOBS_NO_SIMD selects the scalar forms (the C++ tests build both).
#if (defined(__SSE2__) || defined(_M_X64)) && !defined(SPATIALOBS_NO_SIMD)
#include <emmintrin.h>
#define SPATIALOBS_SSE2 1
#endif

namespace spatialobs {

struct Rect {
  double x0, y0, x1, y1;
};

inline Rect rect_at(const double* boxes, std::size_t i) {
  const double* b = boxes + 4 * i;
  return Rect{b[0], b[1], b[2], b[3]};
}

// The predicates compare whole boxes at once where SSE2 is part of the
// baseline (every x86-64 build): the (x0, y0) and (x1, y1) halves are two
// lanes each, so a test is two packed comparisons. The same IEEE comparisons
// on the same values as the scalar forms below: the same answers.
#ifdef SPATIALOBS_SSE2
inline bool intersects(const Rect& a, const Rect& b) {
  const __m128d alo = _mm_loadu_pd(&a.x0), ahi = _mm_loadu_pd(&a.x1);
  const __m128d blo = _mm_loadu_pd(&b.x0), bhi = _mm_loadu_pd(&b.x1);
  return _mm_movemask_pd(_mm_and_pd(_mm_cmple_pd(alo, bhi), _mm_cmple_pd(blo, ahi))) == 3;
}

// a contains b (closed).
inline bool contains(const Rect& a, const Rect& b) {
  const __m128d alo = _mm_loadu_pd(&a.x0), ahi = _mm_loadu_pd(&a.x1);
  const __m128d blo = _mm_loadu_pd(&b.x0), bhi = _mm_loadu_pd(&b.x1);
  return _mm_movemask_pd(_mm_and_pd(_mm_cmple_pd(alo, blo), _mm_cmple_pd(bhi, ahi))) == 3;
}

// Intersection with positive area: both overlaps strictly positive.
inline bool overlaps_area(const Rect& a, const Rect& b) {
  const __m128d alo = _mm_loadu_pd(&a.x0), ahi = _mm_loadu_pd(&a.x1);
  const __m128d blo = _mm_loadu_pd(&b.x0), bhi = _mm_loadu_pd(&b.x1);
  return _mm_movemask_pd(_mm_cmpgt_pd(_mm_min_pd(ahi, bhi), _mm_max_pd(alo, blo))) == 3;
}
#else
inline bool intersects(const Rect& a, const Rect& b) {
  return (a.x0 <= b.x1) & (b.x0 <= a.x1) & (a.y0 <= b.y1) & (b.y0 <= a.y1);
}

// a contains b (closed).
inline bool contains(const Rect& a, const Rect& b) {
  return (a.x0 <= b.x0) & (b.x1 <= a.x1) & (a.y0 <= b.y0) & (b.y1 <= a.y1);
}

// Intersection with positive area: both overlaps strictly positive.
inline bool overlaps_area(const Rect& a, const Rect& b) {
  return (std::min(a.x1, b.x1) > std::max(a.x0, b.x0)) & (std::min(a.y1, b.y1) > std::max(a.y0, b.y0));
}
#endif

inline double overlap_area(const Rect& a, const Rect& b) {
  return (std::min(a.x1, b.x1) - std::max(a.x0, b.x0)) * (std::min(a.y1, b.y1) - std::max(a.y0, b.y0));
}

// Euclidean distance between the closest points of a and b, 0 when they
// intersect. Written as sqrt(dx*dx + dy*dy) (not hypot) because IEEE sqrt is
// correctly rounded, so the Python oracle computes the same bits.
inline double gap(const Rect& a, const Rect& b) {
  double dx = std::max(0.0, std::max(b.x0 - a.x1, a.x0 - b.x1));
  double dy = std::max(0.0, std::max(b.y0 - a.y1, a.y0 - b.y1));
  return std::sqrt(dx * dx + dy * dy);
}

// Closed intersection of two boxes; only meaningful when they intersect.
inline Rect clip(const Rect& a, const Rect& b) {
  return Rect{std::max(a.x0, b.x0), std::max(a.y0, b.y0), std::min(a.x1, b.x1), std::min(a.y1, b.y1)};
}

// Throws std::invalid_argument naming the first row that is not finite or
// has x1 < x0 / y1 < y0. `what` names the argument in the message.
void check_boxes(const double* boxes, std::size_t n, const char* what = "boxes");

// The same check for row `row` alone, b pointing at its four values.
void check_box_row(const double* b, std::size_t row, const char* what = "boxes");

// Same check for a single box such as a viewport.
void check_box(const Rect& r, const char* what);

}  // namespace spatialobs
