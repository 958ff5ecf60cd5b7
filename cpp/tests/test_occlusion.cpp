// occluders / occluders_union (occlusion.hpp): bounds mode against a brute
// force written from the definition, union mode on hand-checked cases, empty
// input, and bad opacity, NaN boxes and viewports.
#include "check.hpp"
#include "spatialobs/occlusion.hpp"

using namespace spatialobs;

namespace {

std::vector<std::int64_t> brute_bounds(const OcclusionInput& in) {
  std::vector<std::int64_t> out(in.n, -1);
  for (std::size_t i = 0; i < in.n; ++i) {
    const Rect r = rect_at(in.boxes, i);
    if (!intersects(r, in.viewport)) continue;
    const Rect q = clip(r, in.viewport);
    std::int64_t best = -1;
    for (std::size_t j = 0; j < in.n; ++j) {
      if (j == i || in.order[j] <= in.order[i] || in.hidden[j] || in.opacity[j] < in.min_opacity) continue;
      if (!contains(rect_at(in.boxes, j), q)) continue;
      if (best < 0 || in.order[j] < in.order[best] || (in.order[j] == in.order[best] && static_cast<std::int64_t>(j) < best))
        best = static_cast<std::int64_t>(j);
    }
    out[i] = best;
  }
  return out;
}

}  // namespace

int main() {
  std::mt19937_64 rng(11);
  std::uniform_int_distribution<int> coin(0, 3), layer(0, 6);
  for (std::size_t n : {std::size_t{0}, std::size_t{1}, std::size_t{5}, std::size_t{60}, std::size_t{400}}) {
    std::vector<double> boxes = spatialobs_test::lattice_boxes(rng, n);
    std::vector<std::int64_t> order(n);
    std::vector<double> opacity(n);
    std::vector<std::uint8_t> hidden(n);
    for (std::size_t i = 0; i < n; ++i) {
      order[i] = layer(rng);  // many ties in paint order
      opacity[i] = coin(rng) == 0 ? 0.25 : 1.0;
      hidden[i] = coin(rng) == 0;
    }
    const OcclusionInput in{boxes.data(), order.data(), opacity.data(), hidden.data(), n, Rect{2, 2, 10, 10}, 0.5};
    CHECK(occluders(in) == brute_bounds(in));
    std::vector<std::int64_t> occ(n);
    std::vector<double> frac(n);
    occluders_union(in, occ.data(), frac.data());
    const std::vector<std::int64_t> bounds = brute_bounds(in);
    for (std::size_t i = 0; i < n; ++i) {
      CHECK(frac[i] >= 0.0 && frac[i] <= 1.0);
      if (bounds[i] >= 0) CHECK(occ[i] == bounds[i] && frac[i] == 1.0);
    }
  }
  // Two halves cover a box exactly although neither contains it.
  const double halves[12] = {0, 0, 10, 10, 0, 0, 5, 10, 5, 0, 10, 10};
  const std::int64_t order[3] = {0, 1, 2};
  const double opacity[3] = {1, 1, 1};
  const std::uint8_t hidden[3] = {0, 0, 0};
  const OcclusionInput in{halves, order, opacity, hidden, 3, Rect{-100, -100, 100, 100}, 1.0};
  CHECK(occluders(in)[0] == -1);
  std::int64_t occ[3];
  double frac[3];
  occluders_union(in, occ, frac);
  CHECK(frac[0] == 1.0 && occ[0] == 1);
  // Asked for the covered box only: its answer, the others -1 and 0 (the halves still cover it).
  const std::uint8_t first_only[3] = {1, 0, 0};
  const std::uint8_t halves_only[3] = {0, 1, 1};
  std::int64_t occ_t[3];
  double frac_t[3];
  occluders_union(in, occ_t, frac_t, first_only);
  CHECK(frac_t[0] == 1.0 && occ_t[0] == 1 && occ_t[1] == -1 && frac_t[1] == 0.0 && occ_t[2] == -1 && frac_t[2] == 0.0);
  occluders_union(in, occ_t, frac_t, halves_only);
  CHECK(occ_t[0] == -1 && frac_t[0] == 0.0 && occ_t[1] == occ[1] && frac_t[1] == frac[1] && frac_t[2] == frac[2]);
  // Bad arguments: opacity outside [0, 1] or NaN, NaN box, bad viewport, bad min_opacity.
  const double bad_opacity[3] = {1, spatialobs_test::kNaN, 1};
  CHECK_THROWS(std::invalid_argument, occluders(OcclusionInput{halves, order, bad_opacity, hidden, 3, in.viewport, 1.0}));
  const double too_opaque[3] = {1, 1.5, 1};
  CHECK_THROWS(std::invalid_argument, occluders(OcclusionInput{halves, order, too_opaque, hidden, 3, in.viewport, 1.0}));
  const double nan_boxes[4] = {0, 0, 1, spatialobs_test::kNaN};
  CHECK_THROWS(std::invalid_argument, occluders(OcclusionInput{nan_boxes, order, opacity, hidden, 1, in.viewport, 1.0}));
  CHECK_THROWS(std::invalid_argument,
               occluders(OcclusionInput{halves, order, opacity, hidden, 3, Rect{0, 0, -1, 1}, 1.0}));
  CHECK_THROWS(std::invalid_argument,
               occluders(OcclusionInput{halves, order, opacity, hidden, 3, in.viewport, spatialobs_test::kNaN}));
  return spatialobs_test::finish("test_occlusion");
}
