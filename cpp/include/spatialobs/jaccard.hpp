// The two-set Jaccard score of DESIGN §7 and its exact threshold test.
//
// score(a, b) = 0.5 * J(a.control, b.control) + 0.5 * J(a.text, b.text),
// J(x, y) = |x ∩ y| / |x ∪ y| and J(∅, ∅) = 1. Written over integers,
// score = (ic * ut + it * uc) / (2 * uc * ut), so "score >= tau" with a
// rational tau = p / q is decided exactly by cross-multiplication in 128-bit
// unsigned arithmetic; no rounding can move a pair across the threshold.
// Set sizes must stay below 2^31 so that every product of two counts fits in
// 64 bits (the atom store enforces this).
#pragma once

#include <cstddef>
#include <cstdint>

namespace spatialobs {

// An exact non-negative ratio num / den with den > 0.
struct Ratio {
  std::uint64_t num;
  std::uint64_t den;
  double value() const { return static_cast<double>(num) / static_cast<double>(den); }
};

// Intersection and union sizes of the control and text sets of two screens.
struct JaccardCounts {
  std::uint64_t inter_control, union_control, inter_text, union_text;
};

// |a ∩ b| of two sorted unique arrays, by a linear merge.
std::size_t intersection_size(const std::uint64_t* a, std::size_t na, const std::uint64_t* b, std::size_t nb);

JaccardCounts jaccard_counts(const std::uint64_t* ac, std::size_t nac, const std::uint64_t* at, std::size_t nat,
                             const std::uint64_t* bc, std::size_t nbc, const std::uint64_t* bt, std::size_t nbt);

// The two-set score as an exact ratio (J(∅, ∅) = 1 for either set).
Ratio jaccard_ratio(const JaccardCounts& c);

// a >= b, exactly.
bool ratio_at_least(const Ratio& a, const Ratio& b);
// a > b, exactly.
bool ratio_greater(const Ratio& a, const Ratio& b);

// Throws std::invalid_argument unless 0 <= tau <= 1 as num / den with den > 0
// and den < 2^32.
void check_threshold(const Ratio& tau);

}  // namespace spatialobs
