// Reciprocal Rank Fusion (Cormack, Clarke and Buettcher, SIGIR 2009) of ranked
// id lists: score(d) = sum over the lists of 1 / (k + rank of d), rank from 1.
//
// Determinism: an id's contributions are added largest first (an id repeated
// within one list counts at each of its ranks), so ids with the same ranks in
// any lists get bit-equal sums; the result is ordered by score descending, ties
// to the lower id.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace spatialobs {

// lists[i] points to sizes[i] ids. Writes the fused ids and their scores.
void rrf_fuse(const std::int64_t* const* lists, const std::size_t* sizes, std::size_t num_lists, double k,
              std::vector<std::int64_t>& ids, std::vector<double>& scores);

}  // namespace spatialobs
