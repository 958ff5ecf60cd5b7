#include "spatialobs/hybrid_insert.hpp"

#include <algorithm>
#include <stdexcept>
#include <string>
#include <vector>

#include "spatialobs/atoms.hpp"
#include "spatialobs/rrf.hpp"

namespace spatialobs {

HybridInsertResult hybrid_insert(Bm25Index& bm25, AtomStore& store, std::uint32_t meta, const std::uint64_t* control,
                                 std::size_t nc, const std::uint64_t* text, std::size_t nt, const std::int64_t* dense,
                                 std::size_t num_dense, const std::int32_t* rows, std::size_t num_rows,
                                 std::size_t top_k, double rrf_k, const Ratio& tau) {
  check_atom_set(control, nc, "control");
  check_atom_set(text, nt, "text");
  check_threshold(tau);
  if (nc > AtomStore::kMaxSetSize || nt > AtomStore::kMaxSetSize) {
    throw std::invalid_argument("an atom set holds fewer than 2^31 atoms");
  }
  if (num_rows != bm25.size()) {
    throw std::invalid_argument("the row map has " + std::to_string(num_rows) + " rows, the BM25 index " +
                                std::to_string(bm25.size()) + " documents");
  }
  // Dense rows index the same partition; the BM25 rows are below its size.
  std::vector<std::int64_t> dense_rows;
  dense_rows.reserve(num_dense);
  for (std::size_t i = 0; i < num_dense; ++i) {
    if (dense[i] < 0) continue;
    if (static_cast<std::uint64_t>(dense[i]) >= num_rows) {
      throw std::out_of_range("dense row " + std::to_string(dense[i]) + " is past the partition's " +
                              std::to_string(num_rows) + " rows");
    }
    dense_rows.push_back(dense[i]);
  }
  // The BM25 document: the query of retrieval, then the postings' entries.
  std::vector<std::uint64_t> doc(control, control + nc);
  doc.insert(doc.end(), text, text + nt);
  std::vector<std::int64_t> bm_ids, fused;
  std::vector<double> bm_scores, fused_scores;
  bm25.top_k(doc.data(), doc.size(), top_k, bm_ids, bm_scores);
  const std::int64_t* lists[2] = {bm_ids.data(), dense_rows.data()};
  const std::size_t sizes[2] = {bm_ids.size(), dense_rows.size()};
  rrf_fuse(lists, sizes, 2, rrf_k, fused, fused_scores);
  // Only the rows kept are checked (the whole map would cost a pass over the
  // partition per add); all before the first write.
  const std::size_t k = std::min(top_k, fused.size());
  std::vector<std::int64_t> ids(k);
  for (std::size_t i = 0; i < k; ++i) {
    const std::int32_t obs = rows[fused[i]];
    if (obs < 0 || static_cast<std::size_t>(obs) >= store.size()) {
      throw std::out_of_range("row " + std::to_string(fused[i]) + " maps to observation " + std::to_string(obs) +
                              ", but the store holds " + std::to_string(store.size()));
    }
    ids[i] = obs;
  }
  bm25.add(doc.data(), doc.size());
  HybridInsertResult out;
  if (k > 0) {
    std::vector<double> scores(k);
    std::vector<std::uint8_t> pass(k);
    const VerifyResult v = store.verify(control, nc, text, nt, ids.data(), k, tau, scores.data(), pass.data());
    out.top_score = *std::max_element(scores.begin(), scores.end());
    if (v.best >= 0) {
      out.best = ids[static_cast<std::size_t>(v.best)];
      out.best_score = v.best_score;
    }
  }
  out.observation = store.add(meta, control, nc, text, nt);
  return out;
}

}  // namespace spatialobs
