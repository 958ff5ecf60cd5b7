// One new observation of a state index's partition in one call: BM25 top-k
// of its atoms, then the document added; the BM25 list fused by RRF with the
// dense search's list; the first top_k fused rows mapped to observations and
// verified; the sets added to the atom store. The same candidates, scores
// and decision as the separate calls (bm25 top_k, bm25 add, rrf_fuse, the
// row map, verify, store add) made one after the other, without a Python
// crossing between them.
#pragma once

#include <cstddef>
#include <cstdint>

#include "spatialobs/atom_store.hpp"
#include "spatialobs/bm25.hpp"
#include "spatialobs/jaccard.hpp"

namespace spatialobs {

struct HybridInsertResult {
  // The verified candidates' best at or above tau (an observation id) and
  // its score, or -1; the highest score of any candidate (0 for none).
  std::int64_t best = -1;
  Ratio best_score{0, 1};
  double top_score = 0.0;
  // The observation id the store gave the new sets.
  std::uint32_t observation = 0;
};

// dense: the dense search's local rows (entries < 0 are skipped); rows:
// local row -> observation id for the partition's num_rows rows. Checks
// (both sets sorted and unique, every row in range) run before anything is
// written; a bad input throws std::invalid_argument or std::out_of_range
// and leaves both indexes as they were.
HybridInsertResult hybrid_insert(Bm25Index& bm25, AtomStore& store, std::uint32_t meta, const std::uint64_t* control,
                                 std::size_t nc, const std::uint64_t* text, std::size_t nt, const std::int64_t* dense,
                                 std::size_t num_dense, const std::int32_t* rows, std::size_t num_rows,
                                 std::size_t top_k, double rrf_k, const Ratio& tau);

}  // namespace spatialobs
