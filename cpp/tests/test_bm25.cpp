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

// Doc ids past 65,536 and 131,072 (postings keep the low 16 bits; the high
// half is an escape where it changes, and so is every low half of 0xffff):
// lists that cross the runs of ids in the term record, in arena blocks and
// past the largest, with repeats on both sides, against the formula from
// per-term counts, and the gated selection against the exhaustive one.
void check_past_65536() {
  constexpr std::uint32_t kDocs = 140000;
  Bm25Index ix;
  std::map<std::uint64_t, std::map<std::uint32_t, int>> tf;  // term -> doc -> tf
  std::vector<std::size_t> len;
  double total = 0;
  std::mt19937_64 rng(9);
  std::uniform_int_distribution<int> filler(7, 200), extra(0, 2);
  std::vector<std::int64_t> ids, want_ids;
  std::vector<double> scores, want_scores;
  for (std::uint32_t i = 0; i < kDocs; ++i) {
    std::vector<std::uint64_t> d{1};
    for (int e = extra(rng); e > 0; --e) d.push_back(static_cast<std::uint64_t>(filler(rng)));
    const std::uint32_t low = i & 0xffff;
    if (low == 0xffff || low == 0 || low == 1) d.insert(d.end(), 1 + i % 3, 2);
    if (i >= 65530 && i < 65545) d.push_back(3);
    if (i == 65535) d.push_back(4);
    if (i == 70000) d.push_back(5);
    if (i % 1000 == 0 || i == 131071) d.insert(d.end(), i % 2000 == 0 ? 2 : 1, 6);
    ix.add(d.data(), d.size());
    for (std::uint64_t t : d) ++tf[t][i];
    len.push_back(d.size());
    total += static_cast<double>(d.size());
    if (i + 1 != 65536 && i + 1 != 65537 && i + 1 != 131073 && i + 1 != kDocs) continue;
    const double n = static_cast<double>(i + 1), avgdl = total / n;
    for (const std::vector<std::uint64_t>& q : {std::vector<std::uint64_t>{2}, {3}, {4}, {5}, {6}, {2, 3, 4, 5, 6, 9}}) {
      std::map<std::uint32_t, double> want;
      for (std::uint64_t t : q) {
        const auto& docs = tf[t];
        const double df = static_cast<double>(docs.size());
        const double idf = std::log(1 + (n - df + 0.5) / (df + 0.5));
        for (const auto& [doc, f] : docs) {
          want[doc] += idf * f / (f + 1.5 * (1 - 0.75 + 0.75 * static_cast<double>(len[doc]) / avgdl));
        }
      }
      ix.top_k(q.data(), q.size(), want.size() + 5, ids, scores);
      CHECK(ids.size() == want.size());
      for (std::size_t r = 0; r < ids.size(); ++r) {
        CHECK(want.count(static_cast<std::uint32_t>(ids[r])) == 1);
        CHECK(std::fabs(scores[r] - want[static_cast<std::uint32_t>(ids[r])]) <= 1e-9);
      }
      for (std::size_t k : {std::size_t{1}, std::size_t{20}, want.size()}) {
        ix.top_k(q.data(), q.size(), k, ids, scores);
        ix.top_k_exhaustive(q.data(), q.size(), k, want_ids, want_scores);
        CHECK(ids == want_ids && scores == want_scores);
      }
    }
  }
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
  check_past_65536();
  return spatialobs_test::finish("test_bm25");
}
