// BoxIndex (box_index.hpp) against brute force: queries, containing queries
// and the self-join, on lattice boxes full of duplicates, touching and
// zero-area boxes; empty input; every node size; invalid arguments.
#include <algorithm>
#include <set>
#include <utility>

#include "check.hpp"
#include "spatialobs/box_index.hpp"

using namespace spatialobs;

namespace {

void compare_with_brute_force(const std::vector<double>& boxes, std::size_t node_size, std::mt19937_64& rng) {
  const std::size_t n = boxes.size() / 4;
  const BoxIndex ix(boxes.data(), n, node_size);
  CHECK(ix.size() == n);
  std::vector<double> queries = spatialobs_test::lattice_boxes(rng, 20);
  for (std::size_t q = 0; q < 20; ++q) {
    const Rect r = rect_at(queries.data(), q);
    std::vector<std::int64_t> expect;
    for (std::size_t i = 0; i < n; ++i)
      if (intersects(rect_at(boxes.data(), i), r)) expect.push_back(static_cast<std::int64_t>(i));
    CHECK(ix.query(r) == expect);
    std::vector<std::int64_t> containing, want;
    ix.search_containing(r, [&](std::size_t i) { containing.push_back(static_cast<std::int64_t>(i)); });
    std::sort(containing.begin(), containing.end());
    for (std::size_t i = 0; i < n; ++i)
      if (contains(rect_at(boxes.data(), i), r)) want.push_back(static_cast<std::int64_t>(i));
    CHECK(containing == want);
  }
  // query_many: each query's hits in turn, beside the query.
  const std::vector<std::int64_t> many = ix.query_many(queries.data(), 20);
  std::vector<std::int64_t> ids, of;
  for (std::size_t q = 0; q < 20; ++q)
    for (std::int64_t i : ix.query(rect_at(queries.data(), q))) {
      ids.push_back(i);
      of.push_back(static_cast<std::int64_t>(q));
    }
  ids.insert(ids.end(), of.begin(), of.end());
  CHECK(many == ids);
  // Self-join: every unordered intersecting pair exactly once.
  const std::vector<std::int64_t> rows = ix.query_pairs();
  const std::size_t k = rows.size() / 2;
  std::vector<std::pair<std::int64_t, std::int64_t>> got, want;
  for (std::size_t t = 0; t < k; ++t) got.emplace_back(rows[t], rows[k + t]);
  for (std::size_t i = 0; i < n; ++i)
    for (std::size_t j = i + 1; j < n; ++j)
      if (intersects(rect_at(boxes.data(), i), rect_at(boxes.data(), j)))
        want.emplace_back(static_cast<std::int64_t>(i), static_cast<std::int64_t>(j));
  CHECK(got == want);
}

}  // namespace

int main() {
  std::mt19937_64 rng(7);
  // Empty and single-box indexes.
  const BoxIndex empty(nullptr, 0);
  CHECK(empty.size() == 0 && empty.query(Rect{0, 0, 1, 1}).empty() && empty.query_pairs().empty());
  const double one[4] = {0, 0, 0, 0};
  const BoxIndex single(one, 1);
  CHECK(single.query(Rect{0, 0, 0, 0}) == std::vector<std::int64_t>{0});
  CHECK(single.query_pairs().empty());
  // All duplicates: every pair intersects.
  std::vector<double> dup;
  for (int i = 0; i < 40; ++i) dup.insert(dup.end(), {3, 3, 3, 3});
  CHECK(BoxIndex(dup.data(), 40).query_pairs().size() == 2 * (40 * 39 / 2));
  for (std::size_t node_size : {std::size_t{2}, std::size_t{3}, std::size_t{16}, std::size_t{64}}) {
    for (std::size_t n : {std::size_t{1}, std::size_t{2}, std::size_t{17}, std::size_t{300}}) {
      compare_with_brute_force(spatialobs_test::lattice_boxes(rng, n), node_size, rng);
    }
  }
  // Wide boxes (over 1/64 of the page and ~256 boxes' worth of it) stay out
  // of the tree, at most kMaxWide of them: 80 big boxes and one over the
  // whole page among 1,400 small ones fill the cap; the answers do not change.
  {
    std::vector<double> b = spatialobs_test::lattice_boxes(rng, 1400, 40);
    std::uniform_int_distribution<int> corner(0, 12), side(22, 44);
    b.insert(b.end(), {0, 0, 44, 44});
    for (int i = 0; i < 80; ++i) {
      const double x = corner(rng), y = corner(rng);
      b.insert(b.end(), {x, y, x + side(rng), y + side(rng)});
    }
    for (std::size_t node_size : {std::size_t{2}, std::size_t{16}}) {
      const BoxIndex ix(b.data(), b.size() / 4, node_size);
      CHECK(ix.wide().size() == BoxIndex::kMaxWide);
      CHECK(std::is_sorted(ix.wide().begin(), ix.wide().end()));
      compare_with_brute_force(b, node_size, rng);
    }
  }
  // Invalid arguments: node sizes out of range, NaN and inverted boxes.
  CHECK_THROWS(std::invalid_argument, BoxIndex(one, 1, 1));
  CHECK_THROWS(std::invalid_argument, BoxIndex(one, 1, 65));
  const double nan_box[4] = {0, spatialobs_test::kNaN, 1, 1};
  CHECK_THROWS(std::invalid_argument, BoxIndex(nan_box, 1));
  const double inverted[4] = {1, 0, 0, 1};
  CHECK_THROWS(std::invalid_argument, BoxIndex(inverted, 1));
  // Boxes spanning the whole double range still index (the Hilbert keys clamp).
  const double big = std::numeric_limits<double>::max();
  const double extreme[12] = {-big, -big, big, big, big, big, big, big, 0, 0, 1, 1};
  const BoxIndex wide(extreme, 3);
  CHECK(wide.query(Rect{0, 0, 1, 1}) == (std::vector<std::int64_t>{0, 2}));
  CHECK(wide.query_pairs().size() == 4);
  {
    // assign rebuilds in place: the same answers as a fresh index over the new
    // boxes, at every size in turn; rejected boxes leave the index as it was.
    std::mt19937_64 rng(11);
    std::vector<std::uint64_t> keys, tmp;
    BoxIndex kept(nullptr, 0, 4);
    for (std::size_t n : {std::size_t{500}, std::size_t{0}, std::size_t{3}, std::size_t{90}, std::size_t{1}}) {
      const std::vector<double> b = spatialobs_test::lattice_boxes(rng, n, 40);
      kept.assign(b.data(), n, keys, tmp);
      const BoxIndex fresh(b.data(), n, 4);
      CHECK(kept.size() == n && kept.query_pairs() == fresh.query_pairs());
      CHECK(kept.query(Rect{5, 5, 20, 20}) == fresh.query(Rect{5, 5, 20, 20}));
    }
    const std::vector<std::int64_t> before = kept.query_pairs();
    const double bad[8] = {0, 0, 1, 1, 0, 0, spatialobs_test::kNaN, 1};
    CHECK_THROWS(std::invalid_argument, kept.assign(bad, 2, keys, tmp));
    CHECK(kept.size() == 1 && kept.query_pairs() == before);
  }
  return spatialobs_test::finish("test_box_index");
}
