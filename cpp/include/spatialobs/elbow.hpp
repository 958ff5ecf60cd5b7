// tldraw elbow arrows routed as tldraw 5.4.2 routes them: the same floating-point
// operations, in the same order, as the Python path in
// spatialobs.canvas.document.elbow (its twin), so the routes are bit-identical.
#pragma once

#include <cstddef>
#include <vector>

#include "spatialobs/arrows.hpp"

namespace spatialobs {

// A bound terminal: the target's outline in its local frame, its page transform
// and the binding.
struct ElbowTerminal {
  const double* points = nullptr;  // n_points rows [x, y]: the outline (the Python Outline.points)
  std::size_t n_points = 0;
  bool closed = false;            // whether the last point joins the first
  double xf[4] = {0, 0, 1, 0};    // the target's page transform: origin, cosine, sine
  double anchor[2] = {0.5, 0.5};  // the binding's normalized anchor
  bool precise = false;
  bool exact = false;
  bool edge_snap = false;      // the binding's snap is "edge" or "edge-point"
  double target_stroke = 0.0;  // half the target's stroke times its scale
};

struct ElbowInput {
  double arrow_xf[4] = {0, 0, 1, 0};  // the arrow's page transform
  double free_start[2] = {0, 0};      // the stored points of free terminals
  double free_end[2] = {0, 0};
  const ElbowTerminal* start = nullptr;  // nullptr: a free terminal
  const ElbowTerminal* end = nullptr;
  bool same_target = false;  // both ends bound to one shape
  bool heads[2] = {false, true};
  double stroke = 0.0;      // half the arrow's stroke width, times its scale
  double scale = 1.0;       // the arrow's scale
  double expand_len = 0.0;  // tldraw's expandElbowLegLength times scale
  double min_len = 0.0;     // tldraw's minElbowLegLength times scale
  double mid = 0.5;         // the arrow's elbowMidPoint
  // How the host's math.hypot rounds and how its sum() adds floats (CPython
  // 3.10-3.11: kSplit and plain sums; 3.12+: kFma and Neumaier's sums).
  HypotVariant variant = HypotVariant::kSplit;
};

struct ElbowOutput {
  std::vector<double> points;  // the route's vertices, rows [x, y], start to end
  double start_handle[2] = {0, 0};
  double end_handle[2] = {0, 0};
  bool has_mid = false;  // whether the route has a mid-line handle
  double mid[2] = {0, 0};
  double start_offset = 0.0;
  double end_offset = 0.0;
};

// Routes one elbow arrow; false when no route exists (tldraw then draws it
// straight) and `out` is left as it was. A bound terminal without outline
// points throws std::invalid_argument; Python's x ** 2 overflowing throws
// std::overflow_error, as the twin raises OverflowError.
bool elbow_route(const ElbowInput& in, ElbowOutput& out);

}  // namespace spatialobs
