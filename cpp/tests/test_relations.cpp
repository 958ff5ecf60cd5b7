// Pairwise relations and reading order (relations.hpp) against brute force:
// overlap, containment and proximity pairs; alignment and reading-order
// invariants; empty input, duplicates, zero-area boxes, NaN rejection.
#include <algorithm>
#include <set>

#include "check.hpp"
#include "spatialobs/relations.hpp"

using namespace spatialobs;

namespace {

using Pairs = std::vector<std::pair<std::int64_t, std::int64_t>>;

Pairs rows_to_pairs(const std::vector<std::int64_t>& rows) {
  Pairs out;
  const std::size_t k = rows.size() / 2;
  for (std::size_t t = 0; t < k; ++t) out.emplace_back(rows[t], rows[k + t]);
  return out;
}

// Every (outer, inner) pair, inner inside outer, by testing all of them.
Pairs brute_force_containment(const std::vector<double>& b) {
  const std::size_t n = b.size() / 4;
  Pairs want;
  for (std::size_t i = 0; i < n; ++i)
    for (std::size_t j = 0; j < n; ++j)
      if (i != j && contains(rect_at(b.data(), i), rect_at(b.data(), j))) want.emplace_back(i, j);
  return want;
}

void check_against_brute_force(const std::vector<double>& b) {
  const std::size_t n = b.size() / 4;
  std::vector<std::int64_t> rows;
  std::vector<double> values;
  overlap_pairs(b.data(), n, rows, values);
  Pairs want;
  std::vector<double> want_areas;
  for (std::size_t i = 0; i < n; ++i)
    for (std::size_t j = i + 1; j < n; ++j)
      if (overlaps_area(rect_at(b.data(), i), rect_at(b.data(), j))) {
        want.emplace_back(i, j);
        want_areas.push_back(overlap_area(rect_at(b.data(), i), rect_at(b.data(), j)));
      }
  CHECK(rows_to_pairs(rows) == want && values == want_areas);

  CHECK(rows_to_pairs(containment_pairs(b.data(), n)) == brute_force_containment(b));

  // Proximity with k large enough to keep every neighbour: all non-overlapping pairs within the gap.
  proximity_pairs(b.data(), n, 2.0, n + 1, rows, values);
  want.clear();
  for (std::size_t i = 0; i < n; ++i)
    for (std::size_t j = i + 1; j < n; ++j) {
      const Rect ri = rect_at(b.data(), i), rj = rect_at(b.data(), j);
      if (!overlaps_area(ri, rj) && gap(ri, rj) <= 2.0) want.emplace_back(i, j);
    }
  CHECK(rows_to_pairs(rows) == want);

  // Alignment pairs are within tolerance on their kind's key, sorted, i < j.
  std::vector<std::int8_t> kinds;
  alignment_pairs(b.data(), n, 0.0, rows, kinds);
  const Pairs al = rows_to_pairs(rows);
  CHECK(al.size() == kinds.size());
  for (std::size_t t = 0; t < al.size(); ++t) {
    const Rect ri = rect_at(b.data(), al[t].first), rj = rect_at(b.data(), al[t].second);
    const double key[6][2] = {{ri.x0, rj.x0}, {(ri.x0 + ri.x1) * 0.5, (rj.x0 + rj.x1) * 0.5}, {ri.x1, rj.x1},
                              {ri.y0, rj.y0}, {(ri.y0 + ri.y1) * 0.5, (rj.y0 + rj.y1) * 0.5}, {ri.y1, rj.y1}};
    CHECK(kinds[t] >= 0 && kinds[t] < 6 && key[kinds[t]][0] == key[kinds[t]][1]);
    CHECK(al[t].first < al[t].second);
  }

  // Reading order is a permutation of 0..n-1.
  std::vector<std::int64_t> rank = reading_order(b.data(), n, 1.0);
  std::sort(rank.begin(), rank.end());
  for (std::size_t i = 0; i < n; ++i) CHECK(rank[i] == static_cast<std::int64_t>(i));
}

// The Scratch and threads overloads give the serial results, bit for bit,
// for every thread count and when one Scratch serves calls of other sizes.
void check_threads_and_scratch(const std::vector<double>& b, Scratch& s) {
  const std::size_t n = b.size() / 4;
  for (std::size_t node_size : {std::size_t{2}, std::size_t{16}}) {
    const BoxIndex ix(b.data(), n, node_size);
    std::vector<std::int64_t> rows, rows_t;
    std::vector<double> values, values_t;
    std::vector<std::int8_t> kinds, kinds_t;
    overlap_pairs(ix, rows, values);
    const std::vector<std::int64_t> contained = containment_pairs(ix);
    std::vector<std::int64_t> near;
    std::vector<double> gaps;
    proximity_pairs(ix, 3.0, 2, near, gaps);
    alignment_pairs(b.data(), n, 0.5, rows_t, kinds);
    const std::vector<std::int64_t> aligned = rows_t;
    for (std::size_t threads : {std::size_t{1}, std::size_t{2}, std::size_t{3}, std::size_t{8}}) {
      overlap_pairs(ix, rows_t, values_t, s, threads);
      CHECK(rows_t == rows && values_t == values);
      CHECK(containment_pairs(ix, s, threads) == contained);
      proximity_pairs(ix, 3.0, 2, rows_t, values_t, s, threads);
      CHECK(rows_t == near && values_t == gaps);
      alignment_pairs(b.data(), n, 0.5, rows_t, kinds_t, s, threads);
      CHECK(rows_t == aligned && kinds_t == kinds);
    }
    // One kind: that kind's rows of the full result, in order.
    const std::size_t k = kinds.size();
    for (int kind = 0; kind < 6; ++kind) {
      std::vector<std::int64_t> want_a, want_b;
      for (std::size_t t = 0; t < k; ++t)
        if (kinds[t] == kind) {
          want_a.push_back(aligned[t]);
          want_b.push_back(aligned[k + t]);
        }
      want_a.insert(want_a.end(), want_b.begin(), want_b.end());
      alignment_pairs(b.data(), n, 0.5, rows_t, kinds_t, s, 2, kind);
      CHECK(rows_t == want_a && std::all_of(kinds_t.begin(), kinds_t.end(), [&](std::int8_t c) { return c == kind; }));
    }
    CHECK_THROWS(std::invalid_argument, alignment_pairs(b.data(), n, 0.5, rows_t, kinds_t, s, 1, 6));
  }
}

// overlap_any_ranked against the pairs of overlap_pairs_between reduced to one flag per query, both ways,
// over every node size (the walk ended early must find what the whole walk finds).
void check_any_ranked(const std::vector<double>& b, const std::vector<double>& q, std::mt19937_64& rng) {
  const std::size_t n = b.size() / 4, m = q.size() / 4;
  std::vector<std::int64_t> ranks(n), qranks(m);
  for (auto& r : ranks) r = static_cast<std::int64_t>(rng() % 9) - 4;
  for (auto& r : qranks) r = static_cast<std::int64_t>(rng() % 9) - 4;
  for (std::size_t node : {std::size_t{2}, std::size_t{16}}) {
    const BoxIndex ix(b.data(), n, node);
    std::vector<std::int64_t> rows;
    std::vector<double> areas;
    overlap_pairs_between(ix, q.data(), m, rows, areas);
    const std::size_t k = rows.size() / 2;
    for (bool above : {true, false}) {
      std::vector<std::uint8_t> want(m, 0), got(m, 7);
      for (std::size_t t = 0; t < k; ++t) {
        const std::int64_t i = rows[t], j = rows[k + t];
        if (above ? ranks[i] > qranks[j] : ranks[i] < qranks[j]) want[j] = 1;
      }
      overlap_any_ranked(ix, ranks.data(), q.data(), qranks.data(), m, above, got.data());
      CHECK(got == want);
    }
  }
}

}  // namespace

int main() {
  std::mt19937_64 rng(5);
  for (std::size_t n : {std::size_t{0}, std::size_t{1}, std::size_t{2}, std::size_t{33}, std::size_t{250}})
    check_against_brute_force(spatialobs_test::lattice_boxes(rng, n));
  // containment_pairs' two serial paths, either side of their size gate
  for (std::size_t n : {kContainmentPlainBelow - 1, kContainmentPlainBelow}) {
    std::vector<double> b = spatialobs_test::lattice_boxes(rng, n, 60);
    // wide boxes (kept out of the tree): one covering the page, two over parts of it
    const double wide[3][4] = {{-5, -5, 90, 90}, {0, 0, 40, 70}, {10, 30, 70, 60}};
    for (std::size_t t = 0; t < 3; ++t) std::copy(wide[t], wide[t] + 4, b.begin() + 4 * (n / 3 * t));
    const Pairs want = brute_force_containment(b);
    CHECK(want.size() > n / 4);
    CHECK(rows_to_pairs(containment_pairs(b.data(), n)) == want);
  }
  {
    Scratch s;  // shared by every size below, large and small in turn
    for (std::size_t n : {std::size_t{3000}, std::size_t{0}, std::size_t{1}, std::size_t{40}, std::size_t{700}})
      check_threads_and_scratch(spatialobs_test::lattice_boxes(rng, n, n > 1000 ? 300 : 12), s);
    CHECK(s.bytes() > 0);
    s.release();
    CHECK(s.bytes() == 0);
  }
  for (std::size_t n : {std::size_t{0}, std::size_t{1}, std::size_t{40}, std::size_t{600}})
    check_any_ranked(spatialobs_test::lattice_boxes(rng, n, 12), spatialobs_test::lattice_boxes(rng, 90, 12), rng);
  {
    // a pile of one box with wide boxes beside it (kept out of the tree)
    std::vector<double> pile;
    for (int t = 0; t < 200; ++t) pile.insert(pile.end(), {3, 3, 9, 9});
    for (int t = 0; t < 3; ++t) pile.insert(pile.end(), {-1e9, -1e9, 1e9, 1e9});
    check_any_ranked(pile, std::vector<double>{3, 3, 9, 9, 4, 4, 5, 5, 20, 20, 21, 21}, rng);
  }
  // Duplicates contain each other, overlap with their full area, and are adjacent in reading order.
  const double dup[12] = {1, 1, 4, 4, 1, 1, 4, 4, 2, 2, 2, 2};
  check_against_brute_force(std::vector<double>(dup, dup + 12));
  CHECK(rows_to_pairs(containment_pairs(dup, 3)) == (Pairs{{0, 1}, {0, 2}, {1, 0}, {1, 2}}));
  // Bad input: NaN boxes, negative or NaN tolerances.
  const double nan_box[4] = {0, 0, 1, spatialobs_test::kNaN};
  std::vector<std::int64_t> rows;
  std::vector<double> values;
  std::vector<std::int8_t> kinds;
  CHECK_THROWS(std::invalid_argument, overlap_pairs(nan_box, 1, rows, values));
  CHECK_THROWS(std::invalid_argument, containment_pairs(nan_box, 1));
  CHECK_THROWS(std::invalid_argument, proximity_pairs(nan_box, 1, 1.0, 3, rows, values));
  CHECK_THROWS(std::invalid_argument, proximity_pairs(dup, 3, -1.0, 3, rows, values));
  CHECK_THROWS(std::invalid_argument, proximity_pairs(dup, 3, spatialobs_test::kNaN, 3, rows, values));
  CHECK_THROWS(std::invalid_argument, alignment_pairs(nan_box, 1, 0.0, rows, kinds));
  CHECK_THROWS(std::invalid_argument, alignment_pairs(dup, 3, spatialobs_test::kInf, rows, kinds));
  {
    const BoxIndex ix(dup, 3);
    const std::int64_t r[3] = {0, 1, 2};
    std::uint8_t flag = 0;
    CHECK_THROWS(std::invalid_argument, overlap_any_ranked(ix, r, nan_box, r, 1, true, &flag));
  }
  CHECK_THROWS(std::invalid_argument, reading_order(nan_box, 1, 1.0));
  CHECK_THROWS(std::invalid_argument, reading_order(dup, 3, -0.5));
  return spatialobs_test::finish("test_relations");
}
