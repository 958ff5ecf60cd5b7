// Greedy placement: boxes put one after another into a room, each at the free
// upper-left corner nearest (Euclidean) to its wish among the obstacles and
// the boxes placed before it.
#pragma once

#include <cstddef>
#include <cstdint>

#include "spatialobs/box.hpp"

namespace spatialobs {

struct PlacementInput {
  const double* sizes;  // n rows [w, h], finite, >= 0
  const double* wants;  // n rows [x, y], finite: the wished upper-left corners
  std::size_t n;
  const std::int64_t* order;  // the boxes to place, in turn: indices in [0, n)
  std::size_t n_order;
  Rect room;                // where every box must lie (closed), finite
  const double* obstacles;  // m rows [x0, y0, x1, y1] (checked like any boxes)
  std::size_t m;
};

// Places order[0], order[1], ... in turn and writes box k's corner to
// corners[2k], corners[2k + 1]. A box may touch an obstacle or another box
// but not overlap it with positive area (beyond the rounding of an edge
// shifted by the box's size, far below a square unit). Returns -1 when every box found a
// place, else the index of the first that did not (boxes placed before it
// keep their corners; the rest of `corners` is untouched). Bad input throws
// std::invalid_argument (std::out_of_range for an order entry outside [0, n)).
//
// For one box the nearest free corner is exact: free corners are bounded by
// the room's edges and the obstacles' edges shifted by the box's size, so the
// nearest has its x on such a line or equal to the wish (clamped to the
// room). The lines (the wish, the room's left and right, the obstacles' right
// edges and left edges - w, in this order) are visited by (lower bound of the
// distance, x, order), each x once; the nearest free y is exact on each (ties:
// the smaller y), and the visit stops once a line's lower bound reaches the
// best distance found; the first line reaching a distance keeps it. On a line,
// the free y is found by following the chain of obstacles that block the
// wish's y, upwards and downwards, through vertical strips that keep the
// obstacles and the boxes placed so far sorted by top and by bottom edge.
std::int64_t place_greedy(const PlacementInput& in, double* corners);

}  // namespace spatialobs
