// visibility (visibility.hpp): labels and gaps against a hand-checked
// viewport, empty input, zero-area viewports and boxes, bad arguments.
#include "check.hpp"
#include "spatialobs/visibility.hpp"

using namespace spatialobs;

int main() {
  const Rect vp{0, 0, 100, 50};
  // inside, touching inside edge, straddling, near (gap 10), far (gap 1000), zero-area on the edge
  const double boxes[24] = {10, 10, 20, 20, 0, 0, 100, 50, 90, 40, 120, 60,
                            110, 0, 120, 10, 1100, 0, 1200, 10, 100, 50, 100, 50};
  std::int8_t labels[6];
  double gaps[6];
  visibility(boxes, 6, vp, 0.5, labels, gaps);
  CHECK(labels[0] == kVisible && labels[1] == kVisible && labels[2] == kPartial);
  CHECK(labels[3] == kOffscreenNear && gaps[3] == 10.0);
  CHECK(labels[4] == kOffscreenFar && gaps[4] == 1000.0);
  CHECK(labels[5] == kVisible && gaps[5] == 0.0);
  // near_factor 0: only touching counts as near, and touching already intersects.
  visibility(boxes, 6, vp, 0.0, labels, gaps);
  CHECK(labels[3] == kOffscreenFar);
  // Empty input writes nothing and does not throw.
  visibility(nullptr, 0, vp, 1.0, nullptr, nullptr);
  // A zero-area viewport: a box through its point is partial, the point itself visible.
  const double pt[8] = {5, 5, 5, 5, 0, 0, 10, 10};
  visibility(pt, 2, Rect{5, 5, 5, 5}, 1.0, labels, gaps);
  CHECK(labels[0] == kVisible && labels[1] == kPartial);
  // Bad arguments.
  const double nan_box[4] = {0, 0, spatialobs_test::kNaN, 1};
  CHECK_THROWS(std::invalid_argument, visibility(nan_box, 1, vp, 1.0, labels, gaps));
  CHECK_THROWS(std::invalid_argument, visibility(boxes, 1, (Rect{0, 0, spatialobs_test::kInf, 1}), 1.0, labels, gaps));
  CHECK_THROWS(std::invalid_argument, visibility(boxes, 1, vp, spatialobs_test::kNaN, labels, gaps));
  CHECK_THROWS(std::invalid_argument, visibility(boxes, 1, vp, -1.0, labels, gaps));
  // Extreme but finite boxes: the gap may be huge, never NaN.
  const double big = std::numeric_limits<double>::max();
  const double far_box[4] = {big / 2, big / 2, big, big};
  visibility(far_box, 1, Rect{-big, -big, -big / 2, -big / 2}, 1.0, labels, gaps);
  CHECK(!std::isnan(gaps[0]) && labels[0] != kVisible);
  return spatialobs_test::finish("test_visibility");
}
