// Bm25Index (bm25.hpp) against the Lucene formula computed directly: scores,
// ordering and ties, repeated atoms, empty documents and queries, parameters.
#include <algorithm>
#include <map>
#include <set>

#include "check.hpp"
#include "spatialobs/bm25.hpp"

using namespace spatialobs;

namespace {

double lucene(const std::vector<std::vector<std::uint64_t>>& docs, const std::vector<std::uint64_t>& q,
              std::size_t d, double k1, double b) {
  double total = 0;
  for (const auto& x : docs) total += static_cast<double>(x.size());
  const double n = static_cast<double>(docs.size()), avgdl = total / n;
  const std::set<std::uint64_t> terms(q.begin(), q.end());
  double s = 0;
  for (std::uint64_t t : terms) {
    double df = 0;
    for (const auto& x : docs) df += std::count(x.begin(), x.end(), t) > 0;
    const double tf = static_cast<double>(std::count(docs[d].begin(), docs[d].end(), t));
    if (tf == 0) continue;
    const double idf = std::log(1 + (n - df + 0.5) / (df + 0.5));
    s += idf * tf / (tf + k1 * (1 - b + b * static_cast<double>(docs[d].size()) / avgdl));
  }
  return s;
}

}  // namespace

int main() {
  std::mt19937_64 rng(3);
  std::uniform_int_distribution<int> term(1, 30), len(0, 12);
  Bm25Index ix;
  std::vector<std::int64_t> ids;
  std::vector<double> scores;
  // Empty index, empty query.
  ix.top_k(nullptr, 0, 10, ids, scores);
  CHECK(ids.empty());
  std::vector<std::vector<std::uint64_t>> docs;
  for (int d = 0; d < 300; ++d) {
    std::vector<std::uint64_t> doc(static_cast<std::size_t>(len(rng)));
    for (auto& t : doc) t = static_cast<std::uint64_t>(term(rng));  // repeats raise tf
    CHECK(ix.add(doc.data(), doc.size()) == static_cast<std::uint32_t>(d));
    docs.push_back(doc);
  }
  CHECK(ix.size() == 300);
  for (int trial = 0; trial < 30; ++trial) {
    std::vector<std::uint64_t> q(static_cast<std::size_t>(len(rng)));
    for (auto& t : q) t = static_cast<std::uint64_t>(term(rng));
    ix.top_k(q.data(), q.size(), 400, ids, scores);
    // Every document sharing a query atom is returned, best first, ties to the lower id.
    std::size_t sharing = 0;
    for (const auto& doc : docs)
      sharing += std::any_of(doc.begin(), doc.end(), [&](std::uint64_t t) { return std::count(q.begin(), q.end(), t); });
    CHECK(ids.size() == sharing);
    for (std::size_t i = 0; i < ids.size(); ++i) {
      CHECK(std::fabs(scores[i] - lucene(docs, q, static_cast<std::size_t>(ids[i]), 1.5, 0.75)) <= 1e-9);
      if (i) CHECK(scores[i - 1] > scores[i] || (scores[i - 1] == scores[i] && ids[i - 1] < ids[i]));
    }
    ix.top_k(q.data(), q.size(), 0, ids, scores);
    CHECK(ids.empty());
    // The gated selection returns what the exhaustive one does, bit for bit,
    // for k below, around and above the number of matching documents.
    for (std::size_t k : {std::size_t{1}, std::size_t{3}, std::size_t{40}, sharing, sharing + 1, std::size_t{1} << 40}) {
      std::vector<std::int64_t> want_ids;
      std::vector<double> want_scores;
      ix.top_k(q.data(), q.size(), k, ids, scores);
      ix.top_k_exhaustive(q.data(), q.size(), k, want_ids, want_scores);
      CHECK(ids == want_ids && scores == want_scores);
    }
  }
  // An unknown atom matches nothing; duplicated query atoms count once.
  const std::uint64_t unknown[1] = {999};
  ix.top_k(unknown, 1, 5, ids, scores);
  CHECK(ids.empty());
  const std::uint64_t once[1] = {7}, twice[2] = {7, 7};
  std::vector<std::int64_t> ids2;
  std::vector<double> scores2;
  ix.top_k(once, 1, 50, ids, scores);
  ix.top_k(twice, 2, 50, ids2, scores2);
  CHECK(ids == ids2 && scores == scores2);
  // Parameters.
  CHECK_THROWS(std::invalid_argument, Bm25Index(-1.0, 0.5));
  CHECK_THROWS(std::invalid_argument, Bm25Index(spatialobs_test::kNaN, 0.5));
  CHECK_THROWS(std::invalid_argument, Bm25Index(1.2, 1.5));
  CHECK_THROWS(std::invalid_argument, Bm25Index(1.2, spatialobs_test::kNaN));
  // An index of empty documents only.
  Bm25Index blank;
  blank.add(nullptr, 0);
  blank.add(nullptr, 0);
  blank.top_k(once, 1, 5, ids, scores);
  CHECK(ids.empty());
  return spatialobs_test::finish("test_bm25");
}
