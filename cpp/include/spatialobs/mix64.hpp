// splitmix64's finalizer: spreads every input bit over the word, so hash tables
// keyed by caller-chosen values (atoms, terms) do not trust their low bits.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace spatialobs::detail {

inline std::uint64_t mix64(std::uint64_t x) {
  x ^= x >> 30;
  x *= 0xbf58476d1ce4e5b9ULL;
  x ^= x >> 27;
  x *= 0x94d049bb133111ebULL;
  x ^= x >> 31;
  return x;
}

// The slots of an open-addressing table of term ids (slot = id + 1, 0 = empty; linear
// probing from mix64 of the key), twice as many as `slots` (or `first` when empty),
// refilled with the ids 0..count-1 whose keys key_of gives.
template <class KeyOf>
std::vector<std::uint32_t> grown_slots(const std::vector<std::uint32_t>& slots, std::size_t first, std::size_t count,
                                       KeyOf key_of) {
  std::vector<std::uint32_t> out(slots.empty() ? first : 2 * slots.size(), 0);
  const std::size_t mask = out.size() - 1;
  for (std::size_t t = 0; t < count; ++t) {
    std::size_t i = mix64(key_of(t)) & mask;
    while (out[i] != 0) i = (i + 1) & mask;
    out[i] = static_cast<std::uint32_t>(t + 1);
  }
  return out;
}

}  // namespace spatialobs::detail
