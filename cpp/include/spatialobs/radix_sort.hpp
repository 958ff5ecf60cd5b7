// LSD radix sort of 64-bit keys, used to order packed (i << 32 | j) pairs.
// Byte passes whose digit is the same for every key are skipped, so pairs
// of small ids cost few passes. Sorting from bit `low` up orders by the bits
// above it only; the sort is stable, so ties keep their input order.
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>
#include <vector>

namespace spatialobs::detail {

inline void radix_sort(std::vector<std::uint64_t>& keys, std::vector<std::uint64_t>& tmp, int low = 0) {
  const std::size_t n = keys.size();
  if (n < 2) return;
  if (n < 256) {
    const std::uint64_t mask = low >= 64 ? 0 : ~std::uint64_t{0} << low;
    std::stable_sort(keys.begin(), keys.end(),
                     [mask](std::uint64_t a, std::uint64_t b) { return (a & mask) < (b & mask); });
    return;
  }
  tmp.resize(n);
  std::uint64_t all_or = 0, all_and = ~std::uint64_t{0};
  for (std::uint64_t k : keys) {
    all_or |= k;
    all_and &= k;
  }
  const std::uint64_t varying = all_or ^ all_and;
  for (int shift = low; shift < 64; shift += 8) {
    if (((varying >> shift) & 0xffu) == 0) continue;
    std::array<std::size_t, 257> count{};
    for (std::uint64_t k : keys) ++count[((k >> shift) & 0xffu) + 1];
    for (std::size_t d = 1; d < 257; ++d) count[d] += count[d - 1];
    for (std::uint64_t k : keys) tmp[count[(k >> shift) & 0xffu]++] = k;
    keys.swap(tmp);
  }
}

inline void radix_sort(std::vector<std::uint64_t>& keys, int low = 0) {
  std::vector<std::uint64_t> tmp;
  radix_sort(keys, tmp, low);
}

// The same sort for records with a `key` member, moved whole; tmp is room
// for the passes (kept by the caller to reuse its pages). One read counts the
// digits of every pass.
template <class Record>
inline void radix_sort_by_key(std::vector<Record>& recs, std::vector<Record>& tmp) {
  const std::size_t n = recs.size();
  if (n < 2) return;
  if (n < 256) {
    std::stable_sort(recs.begin(), recs.end(), [](const Record& a, const Record& b) { return a.key < b.key; });
    return;
  }
  if (tmp.size() < n) tmp.resize(n);
  std::uint64_t all_or = 0, all_and = ~std::uint64_t{0};
  std::vector<std::array<std::size_t, 256>> count(8);
  for (auto& c : count) c.fill(0);
  for (const Record& r : recs) {
    all_or |= r.key;
    all_and &= r.key;
    for (int d = 0; d < 8; ++d) ++count[d][(r.key >> (8 * d)) & 0xffu];
  }
  const std::uint64_t varying = all_or ^ all_and;
  Record* src = recs.data();
  Record* dst = tmp.data();
  for (int d = 0; d < 8; ++d) {
    if (((varying >> (8 * d)) & 0xffu) == 0) continue;
    std::size_t at = 0;
    for (std::size_t& c : count[d]) {
      const std::size_t here = c;
      c = at;
      at += here;
    }
    const int shift = 8 * d;
    for (std::size_t t = 0; t < n; ++t) dst[count[d][(src[t].key >> shift) & 0xffu]++] = src[t];
    std::swap(src, dst);
  }
  if (src != recs.data()) std::copy(src, src + n, recs.data());
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
