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

inline void radix_sort(std::vector<std::uint64_t>& keys, int low = 0) {
  const std::size_t n = keys.size();
  if (n < 2) return;
  if (n < 256) {
    const std::uint64_t mask = low >= 64 ? 0 : ~std::uint64_t{0} << low;
    std::stable_sort(keys.begin(), keys.end(),
                     [mask](std::uint64_t a, std::uint64_t b) { return (a & mask) < (b & mask); });
    return;
  }
  std::vector<std::uint64_t> tmp(n);
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

// The same sort for records with a `key` member, moved whole.
template <class Record>
inline void radix_sort_by_key(std::vector<Record>& recs) {
  const std::size_t n = recs.size();
  if (n < 2) return;
  if (n < 256) {
    std::sort(recs.begin(), recs.end(), [](const Record& a, const Record& b) { return a.key < b.key; });
    return;
  }
  std::vector<Record> tmp(n);
  std::uint64_t all_or = 0, all_and = ~std::uint64_t{0};
  for (const Record& r : recs) {
    all_or |= r.key;
    all_and &= r.key;
  }
  const std::uint64_t varying = all_or ^ all_and;
  for (int shift = 0; shift < 64; shift += 8) {
    if (((varying >> shift) & 0xffu) == 0) continue;
    std::array<std::size_t, 257> count{};
    for (const Record& r : recs) ++count[((r.key >> shift) & 0xffu) + 1];
    for (std::size_t d = 1; d < 257; ++d) count[d] += count[d - 1];
    for (const Record& r : recs) tmp[count[(r.key >> shift) & 0xffu]++] = r;
    recs.swap(tmp);
  }
}

}  // namespace spatialobs::detail
