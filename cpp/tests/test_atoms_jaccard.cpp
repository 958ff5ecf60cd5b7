// Atoms, the two-set Jaccard score and the atom store (atoms.hpp,
// jaccard.hpp, atom_store.hpp): known hash values, grid clamping, J(∅, ∅) = 1,
// exact thresholds, the exact-duplicate table and bad input.
#include <algorithm>

#include "check.hpp"
#include "spatialobs/atom_store.hpp"
#include "spatialobs/atoms.hpp"
#include "spatialobs/jaccard.hpp"
#include "spatialobs/ngram_embed.hpp"

using namespace spatialobs;

int main() {
  // FNV-1a 64 reference values (the empty string is the offset basis).
  CHECK(fnv1a64("", 0) == kFnvOffset);
  CHECK(fnv1a64("a", 1) == 0xaf63dc4c8601ec8cULL);
  CHECK(atom_hash('c', 1, 2, "x") == 12870049167146173273ULL);  // the value Python documents

  // Grid cells clamp to [0, grid - 1]; zero-area elements and elements off the screen are fine.
  const double boxes[16] = {0, 0, 0, 0, 99, 99, 100, 100, -50, -50, -40, -40, 500, 500, 600, 600};
  std::int32_t cols[4], rows[4];
  grid_cells(boxes, 4, 100, 100, 10, cols, rows);
  CHECK(cols[0] == 0 && rows[0] == 0 && cols[1] == 9 && cols[2] == 0 && cols[3] == 9 && rows[3] == 9);
  CHECK_THROWS(std::invalid_argument, grid_cells(boxes, 4, 0, 100, 10, cols, rows));
  CHECK_THROWS(std::invalid_argument, grid_cells(boxes, 4, spatialobs_test::kNaN, 100, 10, cols, rows));
  CHECK_THROWS(std::invalid_argument, grid_cells(boxes, 4, 100, 100, 0, cols, rows));
  CHECK_THROWS(std::invalid_argument, grid_cells(boxes, 4, 100, 100, kMaxGrid + 1, cols, rows));
  const double nan_box[4] = {0, spatialobs_test::kNaN, 1, 1};
  CHECK_THROWS(std::invalid_argument, grid_cells(nan_box, 1, 100, 100, 10, cols, rows));

  // Atom sets: duplicates collapse, empty texts give no text atom, empty input gives empty sets.
  std::vector<std::uint64_t> control, text;
  const double same[8] = {0, 0, 10, 10, 0, 0, 10, 10};
  screen_atoms(same, 2, 100, 100, 30, {"button", "button"}, {"ok", ""}, control, text);
  CHECK(control.size() == 1 && text.size() == 1);
  screen_atoms(nullptr, 0, 100, 100, 30, {}, {}, control, text);
  CHECK(control.empty() && text.empty());
  CHECK_THROWS(std::invalid_argument, screen_atoms(same, 2, 100, 100, 30, {"button"}, {"", ""}, control, text));

  // Jaccard: J(∅, ∅) = 1 on both sides; exact threshold at the boundary.
  const std::uint64_t a[4] = {1, 2, 3, 4}, b[2] = {1, 2};
  CHECK(jaccard_ratio(jaccard_counts(nullptr, 0, nullptr, 0, nullptr, 0, nullptr, 0)).value() == 1.0);
  const Ratio r = jaccard_ratio(jaccard_counts(a, 4, nullptr, 0, b, 2, nullptr, 0));
  CHECK(r.value() == 0.75);
  CHECK(ratio_at_least(r, Ratio{3, 4}) && !ratio_greater(r, Ratio{3, 4}) && !ratio_at_least(r, Ratio{76, 100}));
  CHECK(intersection_size(a, 4, a, 4) == 4 && intersection_size(a, 4, nullptr, 0) == 0);
  check_threshold(Ratio{93, 100});
  CHECK_THROWS(std::invalid_argument, check_threshold(Ratio{1, 0}));
  CHECK_THROWS(std::invalid_argument, check_threshold(Ratio{2, 1}));
  CHECK_THROWS(std::invalid_argument, check_threshold(Ratio{1, 1ULL << 32}));
  // Products near 2^64 compare exactly.
  const std::uint64_t m = ~std::uint64_t{0};
  CHECK(ratio_at_least(Ratio{m, m}, Ratio{1, 1}) && !ratio_greater(Ratio{m - 1, m}, Ratio{1, 1}));

  // Atom store: ids in order, exact duplicates found (and only with the same metadata), verify.
  AtomStore store;
  CHECK(store.add(0, a, 4, b, 2) == 0 && store.add(0, b, 2, nullptr, 0) == 1 && store.add(1, a, 4, b, 2) == 2);
  CHECK(store.find_exact(0, a, 4, b, 2) == 0 && store.find_exact(1, a, 4, b, 2) == 2);
  CHECK(store.find_exact(2, a, 4, b, 2) == -1 && store.find_exact(0, nullptr, 0, nullptr, 0) == -1);
  const std::int64_t ids[3] = {0, 1, 2};
  double scores[3];
  std::uint8_t pass[3];
  const VerifyResult v = store.verify(a, 4, b, 2, ids, 3, Ratio{93, 100}, scores, pass);
  CHECK(v.best == 0 && scores[0] == 1.0 && pass[0] && !pass[1] && scores[2] == 1.0);
  store.verify(a, 4, b, 2, nullptr, 0, Ratio{1, 2}, nullptr, nullptr);  // no candidates
  const std::int64_t bad_ids[2] = {0, 3};
  CHECK_THROWS(std::out_of_range, store.verify(a, 4, b, 2, bad_ids, 2, Ratio{1, 2}, scores, pass));
  const std::int64_t negative[1] = {-1};
  CHECK_THROWS(std::out_of_range, store.verify(a, 4, b, 2, negative, 1, Ratio{1, 2}, scores, pass));
  const std::uint64_t unsorted[2] = {2, 1};
  CHECK_THROWS(std::invalid_argument, store.add(0, unsorted, 2, nullptr, 0));

  // The n-gram embedder: unit norm, zero vector for empty text, invalid UTF-8 rejected.
  std::vector<float> out(64);
  ngram_embed("hello", 3, 64, out.data());
  double sq = 0;
  for (float x : out) sq += static_cast<double>(x) * x;
  CHECK(std::fabs(sq - 1.0) < 1e-6);
  ngram_embed("", 3, 64, out.data());
  CHECK(std::all_of(out.begin(), out.end(), [](float x) { return x == 0.0f; }));
  CHECK_THROWS(std::invalid_argument, ngram_embed("\xff", 3, 64, out.data()));
  CHECK_THROWS(std::invalid_argument, ngram_embed("ab\xe2\x82", 3, 64, out.data()));
  CHECK_THROWS(std::invalid_argument, ngram_embed("x", 0, 64, out.data()));
  CHECK_THROWS(std::invalid_argument, ngram_embed("x", 3, 0, out.data()));
  return spatialobs_test::finish("test_atoms_jaccard");
}
