// Straight arrows (arrows.hpp): known answers worked out by hand, invariants
// over random scenes (the box is the ends' box, isValid is a positive length,
// finite input gives finite output) and rejection of bad input. The bit-level
// comparison with the Python twin lives in the Python tests.
#include <cmath>
#include <cstdint>
#include <random>
#include <stdexcept>
#include <vector>

#include "check.hpp"
#include "spatialobs/arrows.hpp"

using namespace spatialobs;
using spatialobs_test::kNaN;

namespace {

// Rows [x, y, rotation] of the page transforms, outlines, arrows; the input is
// assembled from them.
struct Scene {
  std::vector<double> px, py, rot;
  std::vector<std::int64_t> arrow_row, target, outline, box_outline, offsets{0};
  std::vector<double> points, scale, stroke, anchor, outline_points, bounds, outline_stroke;
  std::vector<char> heads, precise, exact, closed;  // bytes, read as bool

  std::int64_t add_row(double x, double y, double r) {
    px.push_back(x);
    py.push_back(y);
    rot.push_back(r);
    return static_cast<std::int64_t>(px.size() - 1);
  }
  // An axis-aligned w x h box outline (closed, four points).
  std::int64_t add_box(double w, double h, double half_stroke) {
    const double p[8] = {0, 0, w, 0, w, h, 0, h};
    outline_points.insert(outline_points.end(), p, p + 8);
    offsets.push_back(static_cast<std::int64_t>(outline_points.size() / 2));
    closed.push_back(1);
    const double b[4] = {0, 0, w, h};
    bounds.insert(bounds.end(), b, b + 4);
    outline_stroke.push_back(half_stroke);
    return static_cast<std::int64_t>(closed.size() - 1);
  }
  // One arrow; a terminal with target -1 is free at its point.
  void add_arrow(std::int64_t row, const double pts[4], std::int64_t t0, std::int64_t o0, std::int64_t t1,
                 std::int64_t o1, bool head0, bool head1) {
    arrow_row.push_back(row);
    points.insert(points.end(), pts, pts + 4);
    scale.push_back(1.0);
    stroke.push_back(3.5);
    heads.push_back(head0);
    heads.push_back(head1);
    const std::int64_t t[2] = {t0, t1}, o[2] = {o0, o1};
    for (int j = 0; j < 2; ++j) {
      target.push_back(t[j]);
      outline.push_back(t[j] < 0 ? 0 : o[j]);
      box_outline.push_back(t[j] < 0 ? 0 : o[j]);
      anchor.push_back(0.5);
      anchor.push_back(0.5);
      precise.push_back(0);
      exact.push_back(0);
    }
  }
  StraightArrowsInput input() const {
    StraightArrowsInput in{};
    in.px = px.data();
    in.py = py.data();
    in.rotation = rot.data();
    in.n_rows = px.size();
    in.n = arrow_row.size();
    in.arrow_row = arrow_row.data();
    in.points = points.data();
    in.scale = scale.data();
    in.stroke = stroke.data();
    in.heads = reinterpret_cast<const bool*>(heads.data());
    in.target = target.data();
    in.outline = outline.data();
    in.box_outline = box_outline.data();
    in.anchor = anchor.data();
    in.precise = reinterpret_cast<const bool*>(precise.data());
    in.exact = reinterpret_cast<const bool*>(exact.data());
    in.n_outlines = closed.size();
    in.offsets = offsets.data();
    in.outline_points = outline_points.data();
    in.closed = reinterpret_cast<const bool*>(closed.data());
    in.bounds = bounds.data();
    in.outline_stroke = outline_stroke.data();
    return in;
  }
};

struct Result {
  std::vector<double> boxes, ends;
  std::vector<char> valid;
};

Result run(const Scene& s) {
  const std::size_t n = s.arrow_row.size();
  Result r{std::vector<double>(4 * n), std::vector<double>(4 * n), std::vector<char>(n)};
  resolve_straight_arrows(s.input(), {r.boxes.data(), r.ends.data(), reinterpret_cast<bool*>(r.valid.data())});
  return r;
}

// An arrow at the origin with a free start at (0, 50) and its end bound to a
// 100 x 100 box at (200, 0): the end meets the box's left edge at x = 200 and
// stops 10 + 3.5 / 2 + 1.75 short of it.
void test_known_answers() {
  Scene s;
  const std::int64_t arrow = s.add_row(0, 0, 0), box = s.add_row(200, 0, 0);
  const std::int64_t o = s.add_box(100, 100, 1.75);
  const double pts[4] = {0, 50, 0, 0};
  s.add_arrow(arrow, pts, -1, 0, box, o, false, true);
  s.add_arrow(arrow, pts, -1, 0, box, o, false, false);  // no head: the end stays on the edge
  const Result r = run(s);
  CHECK(r.ends[0] == 0.0 && r.ends[1] == 50.0 && r.ends[2] == 186.5 && r.ends[3] == 50.0);
  CHECK(r.boxes[0] == 0.0 && r.boxes[1] == 50.0 && r.boxes[2] == 186.5 && r.boxes[3] == 50.0);
  CHECK(r.ends[6] == 200.0 && r.valid[0] && r.valid[1]);
}

void test_hypot_is_cpython_hypot() {
  for (HypotVariant v : {HypotVariant::kSplit, HypotVariant::kFma}) {
    CHECK(python_hypot(3.0, 4.0, v) == 5.0);
    CHECK(python_hypot(-3.0, 4.0, v) == 5.0);
    CHECK(python_hypot(0.0, -0.0, v) == 0.0 && !std::signbit(python_hypot(0.0, -0.0, v)));
    CHECK(std::isinf(python_hypot(kNaN, -spatialobs_test::kInf, v)));  // an infinity wins over a NaN
    CHECK(std::isnan(python_hypot(kNaN, 1.0, v)));
    CHECK(python_hypot(5e-324, 0.0, v) == 5e-324);
    CHECK(python_hypot(1e308, 1e308, v) == 1.4142135623730951e308);
  }
}

// Random scenes: targets turned or not, anchors anywhere, heads on and off,
// arrows bound twice to one box or to nested boxes.
void test_random_scenes() {
  std::mt19937_64 rng(17);
  std::uniform_real_distribution<double> pos(-300, 300), size(0, 200), unit(-0.2, 1.2), turn(-4, 4);
  std::uniform_int_distribution<int> coin(0, 1), pick(-1, 3);
  for (int round = 0; round < 300; ++round) {
    Scene s;
    const std::int64_t arrow = s.add_row(pos(rng), pos(rng), coin(rng) ? turn(rng) : 0.0);
    std::int64_t rows[4], outlines[4];
    for (int k = 0; k < 4; ++k) {
      rows[k] = s.add_row(pos(rng), pos(rng), coin(rng) ? turn(rng) : 0.0);
      outlines[k] = s.add_box(coin(rng) ? size(rng) : 0.0, size(rng), coin(rng) ? 1.75 : 0.0);
    }
    for (int a = 0; a < 6; ++a) {
      const double pts[4] = {pos(rng), pos(rng), pos(rng), pos(rng)};
      const int t0 = pick(rng), t1 = pick(rng);
      s.add_arrow(arrow, pts, t0 < 0 ? -1 : rows[t0], t0 < 0 ? 0 : outlines[t0], t1 < 0 ? -1 : rows[t1],
                  t1 < 0 ? 0 : outlines[t1], coin(rng), coin(rng));
      for (int j = 0; j < 2; ++j) {
        const std::size_t at = 2 * (s.arrow_row.size() - 1) + j;
        s.anchor[2 * at] = unit(rng);
        s.anchor[2 * at + 1] = unit(rng);
        s.precise[at] = static_cast<char>(coin(rng));
        s.exact[at] = static_cast<char>(coin(rng) && coin(rng));
      }
    }
    const Result r = run(s);
    for (std::size_t i = 0; i < s.arrow_row.size(); ++i) {
      const double* e = &r.ends[4 * i];
      const double* b = &r.boxes[4 * i];
      bool finite = true;
      for (int j = 0; j < 4; ++j) finite = finite && std::isfinite(e[j]);
      CHECK(finite);
      CHECK(b[0] == std::fmin(e[0], e[2]) && b[1] == std::fmin(e[1], e[3]));
      CHECK(b[2] == std::fmax(e[0], e[2]) && b[3] == std::fmax(e[1], e[3]));
      if (r.valid[i]) CHECK(e[0] != e[2] || e[1] != e[3]);
    }
  }
}

void test_bad_input() {
  Scene s;
  const std::int64_t arrow = s.add_row(0, 0, 0), box = s.add_row(200, 0, 0);
  const std::int64_t o = s.add_box(100, 100, 1.75);
  const double pts[4] = {0, 50, 0, 0};
  s.add_arrow(arrow, pts, -1, 0, box, o, false, true);
  auto with = [&](auto change) {
    Scene t = s;
    change(t);
    run(t);
  };
  CHECK_THROWS(std::out_of_range, with([](Scene& t) { t.arrow_row[0] = 2; }));
  CHECK_THROWS(std::out_of_range, with([](Scene& t) { t.target[1] = -2; }));
  CHECK_THROWS(std::out_of_range, with([](Scene& t) { t.outline[1] = 1; }));
  CHECK_THROWS(std::out_of_range, with([](Scene& t) { t.box_outline[1] = -1; }));
  CHECK_THROWS(std::invalid_argument, with([](Scene& t) { t.anchor[2] = kNaN; }));
  CHECK_THROWS(std::invalid_argument, with([](Scene& t) { t.px[1] = kNaN; }));
  CHECK_THROWS(std::invalid_argument, with([](Scene& t) { t.rot[0] = spatialobs_test::kInf; }));
  CHECK_THROWS(std::invalid_argument, with([](Scene& t) { t.points[1] = kNaN; }));
  CHECK_THROWS(std::invalid_argument, with([](Scene& t) { t.scale[0] = 0.0; }));
  CHECK_THROWS(std::invalid_argument, with([](Scene& t) { t.outline_points[3] = kNaN; }));
  CHECK_THROWS(std::invalid_argument, with([](Scene& t) { t.offsets = {1, 4}; }));
  CHECK_THROWS(std::invalid_argument, with([](Scene& t) { t.offsets = {0, 0}; }));
  // a free terminal's unused columns are not read
  Scene free = s;
  free.target[1] = -1;
  free.outline[1] = 99;
  free.anchor[2] = kNaN;
  const Result r = run(free);
  CHECK(r.ends[2] == 0.0 && r.ends[3] == 0.0);
}

}  // namespace

int main() {
  test_known_answers();
  test_hypot_is_cpython_hypot();
  test_random_scenes();
  test_bad_input();
  return spatialobs_test::finish("test_arrows");
}
