// Greedy placement (placement.hpp): one box against a brute-force scan of
// every lattice corner, many boxes against the placement conditions (inside
// the room, no overlap with positive area), and rejection of bad input.
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <random>
#include <vector>

#include "check.hpp"
#include "spatialobs/placement.hpp"

using namespace spatialobs;
using spatialobs_test::kInf;
using spatialobs_test::kNaN;

namespace {

struct Scene {
  std::vector<double> sizes, wants, obstacles;
  Rect room;
};

std::int64_t run(const Scene& s, std::vector<double>& corners) {
  const std::size_t n = s.sizes.size() / 2;
  std::vector<std::int64_t> order(n);
  for (std::size_t i = 0; i < n; ++i) order[i] = static_cast<std::int64_t>(i);
  corners.assign(2 * n, 0.0);
  const PlacementInput in{s.sizes.data(), s.wants.data(), n, order.data(), n, s.room, s.obstacles.data(),
                          s.obstacles.size() / 4};
  return place_greedy(in, corners.data());
}

bool free_at(double x, double y, double w, double h, const std::vector<double>& obstacles, std::size_t m) {
  const Rect b{x, y, x + w, y + h};
  for (std::size_t i = 0; i < m; ++i) {
    if (overlaps_area(b, rect_at(obstacles.data(), i))) return false;
  }
  return true;
}

// The largest overlap area with any of the first m obstacles.
double worst_overlap(double x, double y, double w, double h, const std::vector<double>& obstacles, std::size_t m) {
  const Rect b{x, y, x + w, y + h};
  double worst = 0;
  for (std::size_t i = 0; i < m; ++i) {
    const Rect o = rect_at(obstacles.data(), i);
    if (overlaps_area(b, o)) worst = std::max(worst, overlap_area(b, o));
  }
  return worst;
}

// Squared distance of the nearest free integer corner, or -1 when there is none.
double nearest_lattice(const Scene& s) {
  const double w = s.sizes[0], h = s.sizes[1];
  double best = -1;
  for (double x = s.room.x0; x + w <= s.room.x1; x += 1) {
    for (double y = s.room.y0; y + h <= s.room.y1; y += 1) {
      if (!free_at(x, y, w, h, s.obstacles, s.obstacles.size() / 4)) continue;
      const double d = (x - s.wants[0]) * (x - s.wants[0]) + (y - s.wants[1]) * (y - s.wants[1]);
      if (best < 0 || d < best) best = d;
    }
  }
  return best;
}

}  // namespace

int main() {
  std::mt19937_64 rng(17);

  // One box on a lattice: the nearest free corner is exact (integer inputs keep it on the lattice).
  for (int trial = 0; trial < 400; ++trial) {
    std::uniform_int_distribution<int> box(0, 12), pos(-5, 35), count(0, 10);
    Scene s;
    s.room = Rect{0, 0, 30, 30};
    s.sizes = {double(box(rng)), double(box(rng))};
    s.wants = {double(pos(rng) - 10), double(pos(rng) - 10)};
    s.obstacles = spatialobs_test::lattice_boxes(rng, static_cast<std::size_t>(count(rng)), 30);
    std::vector<double> c;
    const std::int64_t failed = run(s, c);
    const double best = nearest_lattice(s);
    CHECK((failed == 0) == (best < 0));
    if (failed == -1) {
      const double d = (c[0] - s.wants[0]) * (c[0] - s.wants[0]) + (c[1] - s.wants[1]) * (c[1] - s.wants[1]);
      CHECK(d == best);
      CHECK(free_at(c[0], c[1], s.sizes[0], s.sizes[1], s.obstacles, s.obstacles.size() / 4));
    }
  }

  // Many boxes among many obstacles (past the strips' sizes), some wide, tall or beyond the room:
  // every placed box lies in the room and overlaps nothing (beyond rounding); a failure names a box; runs repeat exactly.
  for (int trial = 0; trial < 60; ++trial) {
    std::uniform_real_distribution<double> pos(-20, 420), ext(0, 30), wish(-50, 450);
    Scene s;
    s.room = Rect{0, 0, 400, 300 + 10.0 * (trial % 7)};
    const std::size_t m = 20 + static_cast<std::size_t>(trial) * 3;
    for (std::size_t i = 0; i < m; ++i) {
      const double x = pos(rng), y = pos(rng);
      const double w = i % 17 == 0 ? 300 : ext(rng), h = i % 19 == 0 ? 250 : ext(rng);
      s.obstacles.insert(s.obstacles.end(), {x, y, x + w, y + h});
    }
    const std::size_t n = 40 + static_cast<std::size_t>(trial);
    for (std::size_t i = 0; i < n; ++i) {
      s.sizes.insert(s.sizes.end(), {ext(rng), ext(rng)});
      s.wants.insert(s.wants.end(), {wish(rng), wish(rng)});
    }
    std::vector<double> c, again;
    const std::int64_t failed = run(s, c);
    CHECK(run(s, again) == failed && again == c);
    const std::size_t placed = failed < 0 ? n : static_cast<std::size_t>(failed);
    CHECK(failed >= -1 && failed < static_cast<std::int64_t>(n));
    std::vector<double> boxes = s.obstacles;
    for (std::size_t k = 0; k < placed; ++k) {
      const double w = s.sizes[2 * k], h = s.sizes[2 * k + 1], x = c[2 * k], y = c[2 * k + 1];
      CHECK(x >= s.room.x0 && y >= s.room.y0 && x + w <= s.room.x1 && y + h <= s.room.y1);
      // free up to rounding: a y is tested against o.y0 - h, an edge computed in floating point
      const double worst = worst_overlap(x, y, w, h, boxes, boxes.size() / 4);
      if (worst > 1e-9) std::fprintf(stderr, "overlap %.17g\n", worst);
      CHECK(worst <= 1e-9);
      boxes.insert(boxes.end(), {x, y, x + w, y + h});
    }
  }

  // Bad input: std::invalid_argument, an order entry outside the boxes std::out_of_range.
  {
    double sizes[4] = {1, 1, 1, 1}, wants[4] = {0, 0, 0, 0}, obstacle[4] = {0, 0, 1, 1}, out[4];
    std::int64_t order[2] = {0, 1};
    const Rect room{0, 0, 10, 10};
    auto call = [&](const Rect& r, std::size_t m) {
      const PlacementInput in{sizes, wants, 2, order, 2, r, obstacle, m};
      return place_greedy(in, out);
    };
    CHECK(call(room, 1) == -1);
    for (double bad : {kNaN, kInf, -1.0}) {
      sizes[3] = bad;
      CHECK_THROWS(std::invalid_argument, call(room, 0));
      sizes[3] = 1;
    }
    wants[2] = kInf;
    CHECK_THROWS(std::invalid_argument, call(room, 0));
    wants[2] = 0;
    CHECK_THROWS(std::invalid_argument, call((Rect{0, 0, kNaN, 10}), 0));
    CHECK_THROWS(std::invalid_argument, call((Rect{5, 0, 4, 10}), 0));
    obstacle[2] = -1;
    CHECK_THROWS(std::invalid_argument, call(room, 1));
    obstacle[2] = 1;
    order[1] = 2;
    CHECK_THROWS(std::out_of_range, call(room, 0));
    order[1] = -1;
    CHECK_THROWS(std::out_of_range, call(room, 0));
  }
  return spatialobs_test::finish("test_placement");
}
