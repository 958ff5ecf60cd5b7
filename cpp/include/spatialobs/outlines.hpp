// Target outlines of tldraw shapes that arrows meet, in a batch: the vertices
// spatialobs.canvas.document.arrows.target_outline gives a box or a polygonal
// geo shape (its twin), with the same floating-point operations in the same
// order, so the points and bounds are bit-identical.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace spatialobs {

// What an outline of the batch is. kExplicit takes the next outline given by
// the caller (points and bounds computed elsewhere); kBox is a shape without an
// outline of its own (its box, four points, bounds (0, 0, w, h)); the others
// are the geo kinds, sized max(1, w) by max(1, h), flipped, closed as tldraw's
// PathBuilder closes them.
enum class OutlineKind : std::int64_t {
  kExplicit = -1,
  kBox = 0,
  kRectangle = 1,  // rectangle, x-box, check-box and kinds tldraw does not know
  kTriangle = 2,
  kDiamond = 3,
  kRhombus = 4,
  kRhombus2 = 5,
  kTrapezoid = 6,
  kArrowLeft = 7,
  kArrowRight = 8,
  kArrowUp = 9,
  kArrowDown = 10,
  kPentagon = 11,
  kHexagon = 12,
  kOctagon = 13,
  kStar = 14,
};

inline constexpr std::int64_t kOutlineKindLast = 14;

struct OutlinesInput {
  std::size_t n;                    // outlines in the batch
  const std::int64_t* kind;         // n OutlineKind values
  const double* size;               // n rows [w, h]
  const bool* flip;                 // n rows [flipX, flipY] (geo kinds only)
  std::size_t n_explicit;           // outlines of kind kExplicit, in order
  const std::int64_t* ex_offsets;   // n_explicit + 1 values, from 0, non-decreasing
  const double* ex_points;          // ex_offsets[n_explicit] rows [x, y]
  const double* ex_bounds;          // n_explicit rows [x0, y0, x1, y1]
};

struct OutlinesOutput {
  std::vector<std::int64_t> offsets;  // n + 1 values: outline k is points [offsets[k], offsets[k + 1])
  std::vector<double> points;         // rows [x, y]
  std::vector<double> bounds;         // n rows [x0, y0, x1, y1]
};

// Builds every outline of `in`. A kind out of range, a count of kExplicit
// outlines other than n_explicit, or explicit offsets that do not start at 0
// and ascend throw std::invalid_argument naming the outline.
OutlinesOutput target_outlines(const OutlinesInput& in);

}  // namespace spatialobs
