#include "spatialobs/jaccard.hpp"

#include <stdexcept>
#include <string>

namespace spatialobs {

namespace detail {

struct U128 {
  std::uint64_t hi, lo;
};

// Full 64 x 64 -> 128-bit product from 32-bit limbs (portable: no __int128).
inline U128 mul_u64(std::uint64_t a, std::uint64_t b) {
  const std::uint64_t a_lo = a & 0xffffffffULL, a_hi = a >> 32;
  const std::uint64_t b_lo = b & 0xffffffffULL, b_hi = b >> 32;
  const std::uint64_t ll = a_lo * b_lo, lh = a_lo * b_hi, hl = a_hi * b_lo, hh = a_hi * b_hi;
  const std::uint64_t mid = (ll >> 32) + (lh & 0xffffffffULL) + (hl & 0xffffffffULL);
  return U128{hh + (lh >> 32) + (hl >> 32) + (mid >> 32), (mid << 32) | (ll & 0xffffffffULL)};
}

inline int compare(const U128& x, const U128& y) {
  if (x.hi != y.hi) return x.hi < y.hi ? -1 : 1;
  if (x.lo != y.lo) return x.lo < y.lo ? -1 : 1;
  return 0;
}

}  // namespace detail

std::size_t intersection_size(const std::uint64_t* a, std::size_t na, const std::uint64_t* b, std::size_t nb) {
  std::size_t i = 0, j = 0, k = 0;
  while (i < na && j < nb) {
    if (a[i] < b[j]) {
      ++i;
    } else if (b[j] < a[i]) {
      ++j;
    } else {
      ++k;
      ++i;
      ++j;
    }
  }
  return k;
}

JaccardCounts jaccard_counts(const std::uint64_t* ac, std::size_t nac, const std::uint64_t* at, std::size_t nat,
                             const std::uint64_t* bc, std::size_t nbc, const std::uint64_t* bt, std::size_t nbt) {
  const std::uint64_t ic = intersection_size(ac, nac, bc, nbc);
  const std::uint64_t it = intersection_size(at, nat, bt, nbt);
  return JaccardCounts{ic, nac + nbc - ic, it, nat + nbt - it};
}

Ratio jaccard_ratio(const JaccardCounts& c) {
  // J(∅, ∅) = 1 is the ratio 1 / 1.
  const std::uint64_t ic = c.union_control ? c.inter_control : 1, uc = c.union_control ? c.union_control : 1;
  const std::uint64_t it = c.union_text ? c.inter_text : 1, ut = c.union_text ? c.union_text : 1;
  return Ratio{ic * ut + it * uc, 2 * uc * ut};
}

bool ratio_at_least(const Ratio& a, const Ratio& b) {
  return detail::compare(detail::mul_u64(a.num, b.den), detail::mul_u64(b.num, a.den)) >= 0;
}

bool ratio_greater(const Ratio& a, const Ratio& b) {
  return detail::compare(detail::mul_u64(a.num, b.den), detail::mul_u64(b.num, a.den)) > 0;
}

void check_threshold(const Ratio& tau) {
  if (tau.den == 0 || tau.num > tau.den || tau.den >= (1ULL << 32)) {
    throw std::invalid_argument("threshold must be a fraction num / den in [0, 1] with 0 < den < 2^32, got " +
                                std::to_string(tau.num) + " / " + std::to_string(tau.den));
  }
}

}  // namespace spatialobs
