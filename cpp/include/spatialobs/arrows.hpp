// Straight tldraw arrows resolved against their bound targets, in a batch: the
// same floating-point operations, in the same order, as the Python path in
// spatialobs.canvas.document.arrows (its twin), so the results are bit-identical.
#pragma once

#include <cstddef>
#include <cstdint>

namespace spatialobs {

// How the host language's hypot rounds: CPython's math.hypot is not the C
// library's. kHypotSplit is CPython 3.10 and 3.11 (Veltkamp-split squares),
// kHypotFma CPython 3.12 and later (fused multiply-add squares).
enum class HypotVariant : int { kSplit = 0, kFma = 1 };

struct StraightArrowsInput {
  // The derivation's page transforms, one per row: origin and rotation (radians).
  const double* px;
  const double* py;
  const double* rotation;
  std::size_t n_rows;

  // Per arrow (n of them).
  std::size_t n;
  const std::int64_t* arrow_row;  // the arrow's row, in [0, n_rows)
  const double* points;           // n rows [start x, y, end x, y]: the stored points of free terminals
  const double* scale;            // the arrow's scale (non-zero)
  const double* stroke;           // the arrow's stroke width
  const bool* heads;              // n rows [start, end]: whether the terminal has an arrowhead

  // Per terminal, n rows [start, end].
  const std::int64_t* target;   // the bound target's row, or -1 for a free terminal
  const std::int64_t* outline;  // the outline the terminal meets, in [0, n_outlines) when bound
  const std::int64_t* box_outline;  // the outline whose page box decides nesting, idem
  const double* anchor;             // n rows [start x, y, end x, y]: normalized anchors
  const bool* precise;
  const bool* exact;

  // Outlines in the targets' local frames: outline k is the points
  // [offsets[k], offsets[k + 1]) of `outline_points` (rows [x, y]).
  std::size_t n_outlines;
  const std::int64_t* offsets;       // n_outlines + 1 values, from 0, non-decreasing
  const double* outline_points;      // offsets[n_outlines] rows [x, y]
  const bool* closed;                // whether the last point joins the first
  const double* bounds;              // n_outlines rows [x0, y0, x1, y1]: what anchors refer to
  const double* outline_stroke;      // half the target's stroke width

  HypotVariant hypot = HypotVariant::kSplit;
};

struct StraightArrowsOutput {
  double* boxes;  // n rows [x0, y0, x1, y1]: the body's box in the arrow's frame
  double* ends;   // n rows [start x, y, end x, y]: the body's drawn ends
  bool* valid;    // n values: tldraw's isValid (a body of positive length)
};

// Resolves every arrow of `in` as a straight arrow without a label. Bad input
// (an index out of range, an outline without points, offsets that do not
// ascend, a NaN or infinity) throws std::invalid_argument or
// std::out_of_range naming the arrow, terminal or outline; nothing is
// written then.
void resolve_straight_arrows(const StraightArrowsInput& in, const StraightArrowsOutput& out);

// CPython's math.hypot(x, y) as `variant` computes it.
double python_hypot(double x, double y, HypotVariant variant);

}  // namespace spatialobs
