// Pairwise spatial relations and reading order. Pair outputs are flat
// vectors in row layout [a0, a1, ..., b0, b1, ...], sorted by (a, b): the
// memory of a C-order (2, k) array, handed to numpy without a copy.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "spatialobs/box.hpp"
#include "spatialobs/box_index.hpp"
#include "spatialobs/scratch.hpp"

namespace spatialobs {

namespace detail {
// Throws std::invalid_argument unless v is finite and >= 0, naming it.
void check_tolerance(double v, const char* name);
}  // namespace detail

// Pairs i < j whose intersection has positive area, sorted by (i, j), and
// those areas.
void overlap_pairs(const double* boxes, std::size_t n, std::vector<std::int64_t>& pairs,
                   std::vector<double>& areas);

// Pairs (outer, inner), inner inside outer (closed), outer != inner as
// indices, sorted by (outer, inner). Identical boxes contain each other.
std::vector<std::int64_t> containment_pairs(const double* boxes, std::size_t n);

// Pairs i < j that do not overlap with positive area and whose gap is
// <= max_gap. Each box keeps its k_nearest closest such neighbours (gap,
// then index, breaks ties); a pair is reported once, when either of its
// boxes keeps the other. Sorted by (i, j), with the gaps.
void proximity_pairs(const double* boxes, std::size_t n, double max_gap, std::size_t k_nearest,
                     std::vector<std::int64_t>& pairs, std::vector<double>& gaps);

// The same three kernels over a prebuilt index whose items are the boxes:
// one index built per page version serves every kernel of an observation.
// Results are identical to the overloads above, which build their own.
void overlap_pairs(const BoxIndex& index, std::vector<std::int64_t>& pairs, std::vector<double>& areas);
std::vector<std::int64_t> containment_pairs(const BoxIndex& index);
void proximity_pairs(const BoxIndex& index, double max_gap, std::size_t k_nearest, std::vector<std::int64_t>& pairs,
                     std::vector<double>& gaps);

// The same kernels with working memory kept by the caller between calls
// (see Scratch) and run on `threads` threads (0: one per hardware thread;
// capped at kMaxThreads). The results are identical for every thread count:
// each pair is found once, by whichever thread, and the output is sorted.
constexpr std::size_t kMaxThreads = 64;
// On one thread, containment_pairs takes a plain join below this many boxes
// and a join that visits fewer pairs from it; both give the same pairs (the
// crossover measured in benchmarks/README.md, "`containment_pairs` at 10^3:
// a plain join below 2,048 boxes").
constexpr std::size_t kContainmentPlainBelow = 2048;
void overlap_pairs(const BoxIndex& index, std::vector<std::int64_t>& pairs, std::vector<double>& areas, Scratch& scratch,
                   std::size_t threads = 1);
std::vector<std::int64_t> containment_pairs(const BoxIndex& index, Scratch& scratch, std::size_t threads = 1);
void proximity_pairs(const BoxIndex& index, double max_gap, std::size_t k_nearest, std::vector<std::int64_t>& pairs,
                     std::vector<double>& gaps, Scratch& scratch, std::size_t threads = 1);

// Pairs (item i of the index, query j) whose intersection has positive area,
// sorted by (i, j), with the areas. Queries are validated like boxes; m must
// be below 2^32.
void overlap_pairs_between(const BoxIndex& index, const double* queries, std::size_t m,
                           std::vector<std::int64_t>& pairs, std::vector<double>& areas);

// For each query j, out[j] = 1 when an item i of the index overlaps it with
// positive area and ranks above it (above: ranks[i] > query_ranks[j]; else
// below: ranks[i] < query_ranks[j]), else 0: overlap_pairs_between's pairs
// reduced to one flag per query, each query's search ended at its first such
// item (no pair is written or sorted). ranks holds one value per item of the
// index, query_ranks one per query. Queries are validated like boxes.
void overlap_any_ranked(const BoxIndex& index, const std::int64_t* ranks, const double* queries,
                        const std::int64_t* query_ranks, std::size_t m, bool above, std::uint8_t* out);

enum AlignKind : std::int8_t {
  kAlignLeft = 0,
  kAlignCenterX = 1,
  kAlignRight = 2,
  kAlignTop = 3,
  kAlignCenterY = 4,
  kAlignBottom = 5,
};

// For each of the six kinds, boxes are sorted by the key (left edge, center
// x, ...; then index) and cut greedily into lines: a line starts at the
// smallest key not yet taken and takes every box whose key is within tol of
// that first key, so any two boxes of a line are within tol. Within a line,
// boxes are ordered along the line (center on the other axis, then index)
// and each consecutive pair is reported as (min, max) index with its kind.
// Sorted by (kind, i, j).
void alignment_pairs(const double* boxes, std::size_t n, double tol, std::vector<std::int64_t>& pairs,
                     std::vector<std::int8_t>& kinds);
// The same with the caller's Scratch, the six kinds spread over up to six
// threads; identical results. With only_kind in 0..5, the pairs of that kind
// alone (the others are not cut); -1 for all six.
void alignment_pairs(const double* boxes, std::size_t n, double tol, std::vector<std::int64_t>& pairs,
                     std::vector<std::int8_t>& kinds, Scratch& scratch, std::size_t threads = 1,
                     int only_kind = -1);

// The pairs of alignment_pairs merged per axis: one entry (i, j, axis) per
// pair and axis (0: left/center-x/right, the vertical lines; 1: top/center-y/
// bottom) with a bit mask of its kinds (bit k for kind k). With group (n
// entries, may be null) only pairs whose boxes share a group are kept, after
// the lines are paired as in alignment_pairs. Sorted by (i, j, axis).
void alignment_masks(const double* boxes, std::size_t n, double tol, const std::int64_t* group,
                     std::vector<std::int64_t>& pairs, std::vector<std::int8_t>& axes,
                     std::vector<std::int8_t>& masks);

// Rank per box. Boxes sorted by (center y, left edge, index) are cut into
// rows greedily: a row starts at the first box not yet taken and takes every
// following box whose center y is within row_tol of the row's first box.
// Rows are ranked top to bottom; inside a row by (left edge, center y,
// index).
std::vector<std::int64_t> reading_order(const double* boxes, std::size_t n, double row_tol);

}  // namespace spatialobs
