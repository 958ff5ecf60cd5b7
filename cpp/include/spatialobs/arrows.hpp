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

// Every arrow of `in` resolved as tldraw resolves an arc or straight arrow
// (elbow arrows aside): arrow i is an arc when `arc[i]` (tldraw's test on the
// kind, the bend and the scale, made by the caller) with `bend[i]`, and falls
// back to the straight body as tldraw does (coincident handles, an arc too
// flat or too large). `boxes` are the body's box (an arc's sampled vertices),
// without a label. Bad input throws as resolve_straight_arrows does, and for
// a bend that is not finite.
struct ArrowsInput {
  StraightArrowsInput base;
  const double* bend;  // n values
  const bool* arc;     // n values
};

struct ArrowsOutput {
  StraightArrowsOutput base;
  bool* is_arc;        // n values: the body drawn is an arc
  double* centers;     // n rows [x, y]: an arc's centre (0 for a straight body)
  bool* sweep_large;   // n rows [sweep, large]: an arc's flags
};

void resolve_arrows(const ArrowsInput& in, const ArrowsOutput& out);

// Arrow labels placed along resolved bodies (outputs of resolve_arrows), as
// tldraw places them: per label the body (a straight segment between `ends`
// or, when `is_arc`, the arc about `centers` sampled one vertex per 20 units),
// the body's box, the label's measured size (width, height, padding
// included), the padding kept from bound ends or arrowheads, labelPosition
// and whether the start and end clamp the position. Writes the box of the
// body and the label rectangle to `boxes` (n rows) and the label rectangle
// to `labels`. A size, padding or position that is not finite throws
// std::invalid_argument naming the label.
struct LabelsInput {
  std::size_t n;
  const bool* is_arc;
  const double* ends;         // n rows [start x, y, end x, y]
  const double* centers;      // n rows [x, y]
  const bool* sweep_large;    // n rows [sweep, large]
  const double* body_boxes;   // n rows [x0, y0, x1, y1]
  const double* size;         // n rows [width, height]
  const double* pad;          // n values
  const double* position;     // n values
  const bool* clamp;          // n rows [start, end]
  HypotVariant hypot = HypotVariant::kSplit;
};

void place_arrow_labels(const LabelsInput& in, double* boxes, double* labels);

// CPython's math.hypot(x, y) as `variant` computes it.
double python_hypot(double x, double y, HypotVariant variant);

}  // namespace spatialobs
