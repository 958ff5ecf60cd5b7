// Box predicates and validation (box.hpp): the closed boundary rule, zero-area
// boxes, and rejection of NaN, infinity and inverted rows.
#include "check.hpp"
#include "spatialobs/box.hpp"

using namespace spatialobs;
using spatialobs_test::kInf;
using spatialobs_test::kNaN;

int main() {
  const Rect a{0, 0, 10, 10}, touching{10, 0, 20, 10}, inside{2, 2, 5, 5}, apart{13, 14, 20, 20};
  const Rect point{10, 10, 10, 10}, line{0, 5, 10, 5};

  // Closed: touching edges intersect but do not overlap with positive area.
  CHECK(intersects(a, touching) && intersects(touching, a));
  CHECK(!overlaps_area(a, touching));
  CHECK(overlap_area(a, inside) == 9.0);
  // A box contains itself and its nested boxes, never the other way round.
  CHECK(contains(a, a) && contains(a, inside) && !contains(inside, a));
  // Zero-area boxes: a corner point and a line inside are contained, never overlapping.
  CHECK(contains(a, point) && contains(a, line) && intersects(a, point));
  CHECK(!overlaps_area(a, point) && !overlaps_area(line, line));
  // gap: 0 when intersecting, symmetric, Euclidean between closest points.
  CHECK(gap(a, touching) == 0.0 && gap(a, inside) == 0.0);
  CHECK(gap(a, apart) == 5.0 && gap(apart, a) == 5.0);
  const Rect c = clip(a, Rect{5, -5, 15, 5});
  CHECK(c.x0 == 5 && c.y0 == 0 && c.x1 == 10 && c.y1 == 5);

  // Validation: every non-finite value and inverted row is rejected, naming the row.
  const double good[8] = {0, 0, 1, 1, 2, 2, 2, 2};
  check_boxes(good, 2);
  check_boxes(nullptr, 0);  // empty input is fine
  for (double bad : {kNaN, kInf, -kInf}) {
    for (int k = 0; k < 4; ++k) {
      double rows[8] = {0, 0, 1, 1, 0, 0, 1, 1};
      rows[4 + k] = bad;
      bool named = false;
      try {
        check_boxes(rows, 2, "boxes");
      } catch (const std::invalid_argument& e) {
        named = std::string(e.what()).find("row 1") != std::string::npos;
      }
      CHECK(named);
    }
    CHECK_THROWS(std::invalid_argument, check_box((Rect{0, 0, bad, 1}), "viewport"));
  }
  const double inverted[4] = {5, 0, 4, 1};
  CHECK_THROWS(std::invalid_argument, check_boxes(inverted, 1));
  CHECK_THROWS(std::invalid_argument, check_box((Rect{0, 5, 1, 4}), "viewport"));
  // The extremes of the double range are accepted (and stay finite in the predicates).
  const double big = std::numeric_limits<double>::max();
  const double huge[4] = {-big, -big, big, big};
  check_boxes(huge, 1);
  CHECK(contains(rect_at(huge, 0), a));
  return spatialobs_test::finish("test_boxes");
}
