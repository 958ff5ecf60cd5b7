// polygon_coverage (coverage.hpp): boxes against a brute force over a fine
// lattice (exact for lattice boxes: each unit cell is in or out), hand-checked
// polygons (a disc in a square, a diamond, a duplicate), random convex
// polygons against their shoelace areas, and bad offsets and indices.
#include <array>
#include <cmath>

#include "check.hpp"
#include "spatialobs/coverage.hpp"

using namespace spatialobs;

namespace {

struct Polys {
  std::vector<double> v;
  std::vector<std::int64_t> s{0};
  void add(std::initializer_list<double> xy) {
    v.insert(v.end(), xy);
    s.push_back(static_cast<std::int64_t>(v.size() / 2));
  }
  PolygonSet set() const { return PolygonSet{v.data(), v.size() / 2, s.data(), s.size() - 1}; }
};

void one(const Polys& p, std::int64_t target, const std::vector<std::int64_t>& cover, double& area, double& covered,
         std::int64_t& best) {
  const std::int64_t cs[2] = {0, static_cast<std::int64_t>(cover.size())};
  polygon_coverage(p.set(), &target, 1, cs, cover.data(), cover.size(), &area, &covered, &best);
}

}  // namespace

int main() {
  std::mt19937_64 rng(7);
  // lattice boxes: the covered area counted cell by cell
  for (int trial = 0; trial < 300; ++trial) {
    std::uniform_int_distribution<int> pos(0, 12), size(0, 8), count(0, 5);
    Polys p;
    std::vector<std::array<int, 4>> boxes;
    const int k = 1 + count(rng);
    for (int b = 0; b < k; ++b) {
      const int x = pos(rng), y = pos(rng), w = size(rng), h = size(rng);
      boxes.push_back({x, y, x + w, y + h});
      p.add({double(x), double(y), double(x + w), double(y), double(x + w), double(y + h), double(x), double(y + h)});
    }
    std::vector<std::int64_t> cover;
    for (int b = 1; b < k; ++b) cover.push_back(b);
    double area, covered;
    std::int64_t best;
    one(p, 0, cover, area, covered, best);
    int want_area = 0, want_cov = 0;
    for (int cx = 0; cx < 24; ++cx) {
      for (int cy = 0; cy < 24; ++cy) {
        auto in = [&](const std::array<int, 4>& b) { return b[0] <= cx && cx + 1 <= b[2] && b[1] <= cy && cy + 1 <= b[3]; };
        if (!in(boxes[0])) continue;
        ++want_area;
        for (int b = 1; b < k; ++b) {
          if (in(boxes[b])) {
            ++want_cov;
            break;
          }
        }
      }
    }
    CHECK(std::fabs(area - want_area) < 1e-9 && std::fabs(covered - want_cov) < 1e-9);
  }
  // a disc inside a square covers the disc, not the square's corners
  Polys d;
  d.add({0, 0, 10, 0, 10, 10, 0, 10});
  {
    std::vector<double> disc;
    for (int i = 0; i < 64; ++i) {
      const double a = 2 * 3.14159265358979323846 * i / 64;
      d.v.push_back(5 + 5 * std::cos(a));
      d.v.push_back(5 + 5 * std::sin(a));
    }
    d.s.push_back(static_cast<std::int64_t>(d.v.size() / 2));
  }
  double area, covered;
  std::int64_t best;
  one(d, 1, {0}, area, covered, best);
  CHECK(std::fabs(covered - area) < 1e-9 * area && best == 0);
  one(d, 0, {1}, area, covered, best);
  CHECK(std::fabs(area - 100) < 1e-9 && covered < 0.8 * area && covered > 0.75 * area);
  // a diamond is half its box; a duplicate covers exactly
  Polys q;
  q.add({5, 0, 10, 5, 5, 10, 0, 5});
  q.add({0, 0, 10, 0, 10, 10, 0, 10});
  q.add({5, 0, 10, 5, 5, 10, 0, 5});
  one(q, 1, {0}, area, covered, best);
  CHECK(std::fabs(area - 100) < 1e-12 && std::fabs(covered - 50) < 1e-9);
  one(q, 0, {2}, area, covered, best);
  CHECK(std::fabs(area - 50) < 1e-12 && std::fabs(covered - 50) < 1e-9 && best == 0);
  // nothing to cover with
  one(q, 0, {}, area, covered, best);
  CHECK(covered == 0 && best == -1);
  // bad input
  const std::int64_t t0 = 0, t9 = 9, cs1[2] = {0, 1}, cs0[2] = {0, 0}, c9 = 9;
  CHECK_THROWS(std::out_of_range, polygon_coverage(q.set(), &t9, 1, cs0, nullptr, 0, &area, &covered, &best));
  CHECK_THROWS(std::out_of_range, polygon_coverage(q.set(), &t0, 1, cs1, &c9, 1, &area, &covered, &best));
  const std::int64_t bad_cs[2] = {0, 2};
  CHECK_THROWS(std::invalid_argument, polygon_coverage(q.set(), &t0, 1, bad_cs, &c9, 1, &area, &covered, &best));
  Polys n;
  n.add({0, 0, spatialobs_test::kNaN, 0, 1, 1});
  CHECK_THROWS(std::invalid_argument, polygon_coverage(n.set(), &t0, 1, cs0, nullptr, 0, &area, &covered, &best));
  return spatialobs_test::finish("test_coverage");
}
