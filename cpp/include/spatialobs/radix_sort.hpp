// LSD radix sort of 64-bit keys, used to order packed (i << 32 | j) pairs.
// Only the bits in which the keys differ are sorted on, in passes of at most
// 11 bits (a 2,048-entry count table stays in L1), so pairs of small ids cost
// few passes. Sorting from bit `low` up orders by the bits above it only; the
// sort is stable, so ties keep their input order.
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>
#include <vector>

namespace spatialobs::detail {

// The passes of a radix sort over the bits set in `varying`: digits of at
// most 11 bits, each starting at the lowest varying bit above the previous
// one, so runs of constant bits (the zeros between the two halves of a
// packed pair of small ids) cost no pass. No digit: the keys are in order.
struct DigitPlan {
  int shift[64 / 11 + 1] = {};
  int width[64 / 11 + 1] = {};
  int passes = 0;
};

inline DigitPlan plan_digits(std::uint64_t varying) {
  constexpr int kMaxBits = 11;
  DigitPlan p;
  int hi = 63;
  if (varying == 0) return p;
  while (!((varying >> hi) & 1u)) --hi;
  for (int lo = 0; lo <= hi;) {
    if (!((varying >> lo) & 1u)) {
      ++lo;
      continue;
    }
    p.shift[p.passes] = lo;
    p.width[p.passes] = std::min(kMaxBits, hi - lo + 1);
    lo += p.width[p.passes++];
  }
  return p;
}

// Stable LSD passes over records, digit d of record r being
// (key(r) >> plan.shift[d]) & (2^plan.width[d] - 1). One read counts the
// digits of every pass. The result ends in `recs` (tmp is room, resized).
template <class Record, class Key>
inline void radix_passes(std::vector<Record>& recs, std::vector<Record>& tmp, const DigitPlan& plan, Key&& key) {
  const std::size_t n = recs.size();
  if (plan.passes == 0 || n < 2) return;
  tmp.resize(n);  // exactly n: the buffers may be swapped at the end
  constexpr std::size_t kBuckets = std::size_t{1} << 11;
  std::vector<std::size_t> count(kBuckets * static_cast<std::size_t>(plan.passes), 0);
  std::uint64_t mask[64 / 11 + 1];
  for (int d = 0; d < plan.passes; ++d) mask[d] = (std::uint64_t{1} << plan.width[d]) - 1;
  for (const Record& r : recs) {
    const std::uint64_t k = key(r);
    for (int d = 0; d < plan.passes; ++d) ++count[d * kBuckets + ((k >> plan.shift[d]) & mask[d])];
  }
  Record* src = recs.data();
  Record* dst = tmp.data();
  for (int d = 0; d < plan.passes; ++d) {
    std::size_t* c = count.data() + d * kBuckets;
    std::size_t at = 0;
    for (std::size_t b = 0; b <= mask[d]; ++b) {
      const std::size_t here = c[b];
      c[b] = at;
      at += here;
    }
    const int shift = plan.shift[d];
    const std::uint64_t m = mask[d];
    for (std::size_t t = 0; t < n; ++t) dst[c[(key(src[t]) >> shift) & m]++] = src[t];
    std::swap(src, dst);
  }
  if (src != recs.data()) recs.swap(tmp);
}

inline void radix_sort(std::vector<std::uint64_t>& keys, std::vector<std::uint64_t>& tmp, int low = 0) {
  const std::size_t n = keys.size();
  if (n < 2) return;
  const std::uint64_t above = low >= 64 ? 0 : ~std::uint64_t{0} << low;
  if (n < 256) {
    std::stable_sort(keys.begin(), keys.end(),
                     [above](std::uint64_t a, std::uint64_t b) { return (a & above) < (b & above); });
    return;
  }
  std::uint64_t all_or = 0, all_and = ~std::uint64_t{0};
  for (std::uint64_t k : keys) {
    all_or |= k;
    all_and &= k;
  }
  radix_passes(keys, tmp, plan_digits((all_or ^ all_and) & above), [](std::uint64_t k) { return k; });
}

inline void radix_sort(std::vector<std::uint64_t>& keys, int low = 0) {
  std::vector<std::uint64_t> tmp;
  radix_sort(keys, tmp, low);
}

// The same sort for records with a `key` member, moved whole; tmp is room
// for the passes (kept by the caller to reuse its pages).
template <class Record>
inline void radix_sort_by_key(std::vector<Record>& recs, std::vector<Record>& tmp) {
  const std::size_t n = recs.size();
  if (n < 2) return;
  if (n < 256) {
    std::stable_sort(recs.begin(), recs.end(), [](const Record& a, const Record& b) { return a.key < b.key; });
    return;
  }
  std::uint64_t all_or = 0, all_and = ~std::uint64_t{0};
  for (const Record& r : recs) {
    all_or |= r.key;
    all_and &= r.key;
  }
  radix_passes(recs, tmp, plan_digits(all_or ^ all_and), [](const Record& r) { return r.key; });
}

template <class Record>
inline void radix_sort_by_key(std::vector<Record>& recs) {
  std::vector<Record> tmp;
  radix_sort_by_key(recs, tmp);
}

// Sorted packed pairs (i << 32 | j) as the two rows of a 2 x k array: all i, then all j.
inline std::vector<std::int64_t> unpack_pairs(const std::vector<std::uint64_t>& keys) {
  const std::size_t k = keys.size();
  std::vector<std::int64_t> pairs(2 * k);
  for (std::size_t t = 0; t < k; ++t) {
    pairs[t] = static_cast<std::int64_t>(keys[t] >> 32);
    pairs[k + t] = static_cast<std::int64_t>(keys[t] & 0xffffffffu);
  }
  return pairs;
}

}  // namespace spatialobs::detail
