// Elbow arrows (elbow.hpp): known routes worked out by hand, invariants over
// random scenes (the inner legs axis-aligned, free ends where they are, finite
// input gives finite output) and rejection of bad input. The bit-level
// comparison with the Python twin lives in the Python tests.
#include <cmath>
#include <random>
#include <stdexcept>
#include <vector>

#include "check.hpp"
#include "spatialobs/elbow.hpp"

using namespace spatialobs;

namespace {

const double kBox[8] = {0, 0, 100, 0, 100, 100, 0, 100};

ElbowTerminal box_at(double x, double y) {
  ElbowTerminal t;
  t.points = kBox;
  t.n_points = 4;
  t.closed = true;
  t.xf[0] = x;
  t.xf[1] = y;
  t.target_stroke = 1.75;
  return t;
}

ElbowInput arrow(const ElbowTerminal* s, const ElbowTerminal* e) {
  ElbowInput in;
  in.start = s;
  in.end = e;
  in.stroke = 1.75;  // size m: 3.5 / 2
  in.expand_len = 36.0;
  in.min_len = 10.5;
  return in;
}

void known_routes() {
  // out of a's right side, through the mid-line, into b's left side short by the arrowhead gap
  const ElbowTerminal a = box_at(0, 0), b = box_at(400, 200);
  ElbowOutput out;
  CHECK(elbow_route(arrow(&a, &b), out));
  const std::vector<double> want{100, 50, 250, 50, 250, 250, 386.5, 250};
  CHECK(out.points == want);
  CHECK(out.has_mid && out.mid[0] == 250 && out.mid[1] == 150);
  CHECK(out.start_offset == 0 && out.end_offset == 13.5);  // 1.75 + 1.75 + 10: the end has a head
  CHECK(out.start_handle[0] == 50 && out.end_handle[0] == 450);
  // elbowMidPoint 0: the mid-line at a's expanded edge (leg 36)
  ElbowInput in = arrow(&a, &b);
  in.mid = 0.0;
  CHECK(elbow_route(in, out));
  CHECK(out.points[2] == 136.0 && out.points[3] == 50.0);
  // both ends free: (0, 0) to (100, 60) through x = 50
  in = arrow(nullptr, nullptr);
  in.free_end[0] = 100;
  in.free_end[1] = 60;
  CHECK(elbow_route(in, out));
  CHECK((out.points == std::vector<double>{0, 0, 50, 0, 50, 60, 100, 60}));
  CHECK(out.start_offset == 0 && out.end_offset == 0);
}

void invariants() {
  std::mt19937_64 rng(7);
  std::uniform_real_distribution<double> coord(-600, 600), unit(0, 1);
  int routed = 0;
  for (int i = 0; i < 4000; ++i) {
    const ElbowTerminal a = box_at(coord(rng), coord(rng)), b = box_at(coord(rng), coord(rng));
    const int ends = i % 4;  // both bound, start only, end only, none
    ElbowInput in = arrow(ends == 0 || ends == 1 ? &a : nullptr, ends == 0 || ends == 2 ? &b : nullptr);
    in.free_start[0] = coord(rng);
    in.free_start[1] = coord(rng);
    in.free_end[0] = coord(rng);
    in.free_end[1] = coord(rng);
    in.mid = unit(rng);
    in.variant = i % 2 ? HypotVariant::kFma : HypotVariant::kSplit;
    ElbowOutput out;
    if (!elbow_route(in, out)) continue;
    ++routed;
    const std::vector<double>& p = out.points;
    CHECK(p.size() >= 4 && p.size() % 2 == 0);
    for (double v : p) CHECK(std::isfinite(v));
    // every leg axis-aligned but the end legs, which a backward arrowhead gap may bend (as in tldraw)
    for (std::size_t k = 2; k + 5 < p.size(); k += 2) {
      CHECK(std::fabs(p[k] - p[k + 2]) < 0.02 || std::fabs(p[k + 1] - p[k + 3]) < 0.02);
    }
    if (in.start == nullptr) CHECK(std::fabs(p[0] - in.free_start[0]) < 0.02 && std::fabs(p[1] - in.free_start[1]) < 0.02);
    if (in.end == nullptr && out.points.size() > 4) {
      CHECK(std::fabs(p[p.size() - 2] - in.free_end[0]) < 0.02 && std::fabs(p[p.size() - 1] - in.free_end[1]) < 0.02);
    }
    CHECK(out.start_offset >= 0 && out.end_offset >= 0);
  }
  CHECK(routed > 3000);
}

void bad_input() {
  ElbowTerminal empty = box_at(0, 0);
  empty.n_points = 0;
  const ElbowTerminal b = box_at(400, 0);
  ElbowOutput out;
  CHECK_THROWS(std::invalid_argument, elbow_route(arrow(&empty, &b), out));
  CHECK_THROWS(std::invalid_argument, elbow_route(arrow(&b, &empty), out));
  ElbowInput in = arrow(&b, nullptr);
  in.variant = static_cast<HypotVariant>(7);
  CHECK_THROWS(std::invalid_argument, elbow_route(in, out));
  // a line whose anchor lies 1e200 off it: the squared distance overflows, as Python's x ** 2 does
  const double line[4] = {0, 0, 1e200, 1e200};
  ElbowTerminal far;
  far.points = line;
  far.n_points = 2;
  far.closed = false;
  far.precise = true;
  far.anchor[0] = 0;
  far.anchor[1] = 1;
  in = arrow(nullptr, &far);
  in.free_start[0] = -1e5;
  CHECK_THROWS(std::overflow_error, elbow_route(in, out));
  CHECK(out.points.empty());  // nothing written when it throws
}

}  // namespace

int main() {
  known_routes();
  invariants();
  bad_input();
  return spatialobs_test::finish("test_elbow");
}
