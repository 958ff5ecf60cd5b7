// hybrid_insert (hybrid_insert.hpp) against the separate calls it replaces:
// BM25 top-k, BM25 add, RRF of the BM25 and dense lists, the row map, batch
// verification and the store's add, on random partitions; bad calls write
// nothing.
#include <algorithm>
#include <random>
#include <set>

#include "check.hpp"
#include "spatialobs/hybrid_insert.hpp"
#include "spatialobs/rrf.hpp"

using namespace spatialobs;

namespace {

std::vector<std::uint64_t> random_set(std::mt19937_64& rng) {
  std::uniform_int_distribution<int> size(0, 8), atom(0, 20);
  std::set<std::uint64_t> s;
  for (int i = size(rng); i > 0; --i) s.insert(static_cast<std::uint64_t>(atom(rng)));
  return {s.begin(), s.end()};
}

HybridInsertResult separate(Bm25Index& bm25, AtomStore& store, std::uint32_t meta, const std::vector<std::uint64_t>& c,
                            const std::vector<std::uint64_t>& t, const std::vector<std::int64_t>& dense,
                            const std::vector<std::int32_t>& rows, std::size_t top_k, double rrf_k, const Ratio& tau) {
  std::vector<std::uint64_t> doc(c);
  doc.insert(doc.end(), t.begin(), t.end());
  std::vector<std::int64_t> bm, fused, kept;
  std::vector<double> s1, s2;
  bm25.top_k(doc.data(), doc.size(), top_k, bm, s1);
  bm25.add(doc.data(), doc.size());
  for (std::int64_t d : dense) {
    if (d >= 0) kept.push_back(d);
  }
  const std::int64_t* lists[2] = {bm.data(), kept.data()};
  const std::size_t sizes[2] = {bm.size(), kept.size()};
  rrf_fuse(lists, sizes, 2, rrf_k, fused, s2);
  std::vector<std::int64_t> ids;
  for (std::size_t i = 0; i < std::min(top_k, fused.size()); ++i) ids.push_back(rows[fused[i]]);
  HybridInsertResult out;
  if (!ids.empty()) {
    std::vector<double> scores(ids.size());
    std::vector<std::uint8_t> pass(ids.size());
    const VerifyResult v = store.verify(c.data(), c.size(), t.data(), t.size(), ids.data(), ids.size(), tau,
                                        scores.data(), pass.data());
    out.top_score = *std::max_element(scores.begin(), scores.end());
    if (v.best >= 0) {
      out.best = ids[static_cast<std::size_t>(v.best)];
      out.best_score = v.best_score;
    }
  }
  out.observation = store.add(meta, c.data(), c.size(), t.data(), t.size());
  return out;
}

}  // namespace

int main() {
  std::mt19937_64 rng(31);
  for (int round = 0; round < 200; ++round) {
    Bm25Index a_bm[2], b_bm[2];
    AtomStore a_store, b_store;
    std::vector<std::int32_t> rows[2];
    const std::size_t top_k = 1 + rng() % 10;
    const double rrf_k = (round % 3 == 0) ? 0.0 : 60.0;
    const Ratio tau = round % 2 ? Ratio{93, 100} : Ratio{1, 2};
    for (int step = 0; step < 20; ++step) {
      const auto meta = static_cast<std::uint32_t>(rng() % 2);
      const auto c = random_set(rng), t = random_set(rng);
      std::vector<std::int64_t> dense;
      for (int i = static_cast<int>(rng() % 5); i > 0; --i) {
        dense.push_back(rows[meta].empty() ? -1 : static_cast<std::int64_t>(rng() % (rows[meta].size() + 1)) - 1);
      }
      std::sort(dense.begin(), dense.end());
      dense.erase(std::unique(dense.begin(), dense.end()), dense.end());
      std::shuffle(dense.begin(), dense.end(), rng);
      const HybridInsertResult got =
          hybrid_insert(a_bm[meta], a_store, meta, c.data(), c.size(), t.data(), t.size(), dense.data(), dense.size(),
                        rows[meta].data(), rows[meta].size(), top_k, rrf_k, tau);
      const HybridInsertResult want = separate(b_bm[meta], b_store, meta, c, t, dense, rows[meta], top_k, rrf_k, tau);
      CHECK(got.best == want.best && got.best_score.num == want.best_score.num &&
            got.best_score.den == want.best_score.den && got.top_score == want.top_score &&
            got.observation == want.observation);
      rows[meta].push_back(static_cast<std::int32_t>(got.observation));
    }
  }
  // Bad calls throw before anything is written.
  Bm25Index bm;
  AtomStore store;
  const std::vector<std::uint64_t> a = {1, 2, 3}, unsorted = {3, 1};
  std::vector<std::uint64_t> doc(a);
  doc.insert(doc.end(), a.begin(), a.end());
  bm.add(doc.data(), doc.size());
  const std::vector<std::int32_t> rows = {static_cast<std::int32_t>(store.add(0, a.data(), 3, a.data(), 3))};
  const std::vector<std::int64_t> dense = {0}, past = {1};
  const std::vector<std::int32_t> bad_rows = {7}, two_rows = {0, 0};
  const Ratio tau{93, 100};
  CHECK_THROWS(std::invalid_argument,
               hybrid_insert(bm, store, 0, unsorted.data(), 2, a.data(), 3, dense.data(), 1, rows.data(), 1, 5, 60, tau));
  CHECK_THROWS(std::invalid_argument, hybrid_insert(bm, store, 0, a.data(), 3, a.data(), 3, dense.data(), 1,
                                                    two_rows.data(), 2, 5, 60, tau));
  CHECK_THROWS(std::out_of_range,
               hybrid_insert(bm, store, 0, a.data(), 3, a.data(), 3, past.data(), 1, rows.data(), 1, 5, 60, tau));
  CHECK_THROWS(std::out_of_range,
               hybrid_insert(bm, store, 0, a.data(), 3, a.data(), 3, dense.data(), 1, bad_rows.data(), 1, 5, 60, tau));
  CHECK_THROWS(std::invalid_argument, hybrid_insert(bm, store, 0, a.data(), 3, a.data(), 3, dense.data(), 1,
                                                    rows.data(), 1, 5, 60, Ratio{1, 0}));
  CHECK(bm.size() == 1 && store.size() == 1);
  const HybridInsertResult ok =
      hybrid_insert(bm, store, 0, a.data(), 3, a.data(), 3, dense.data(), 1, rows.data(), 1, 5, 60, tau);
  CHECK(ok.best == 0 && ok.best_score.num == ok.best_score.den && ok.top_score == 1.0 && ok.observation == 1);
  CHECK(bm.size() == 2 && store.size() == 2);
  return spatialobs_test::finish("test_hybrid_insert");
}
