// splitmix64's finalizer: spreads every input bit over the word, so hash tables
// keyed by caller-chosen values (atoms, terms) do not trust their low bits.
#pragma once

#include <cstdint>

namespace spatialobs::detail {

inline std::uint64_t mix64(std::uint64_t x) {
  x ^= x >> 30;
  x *= 0xbf58476d1ce4e5b9ULL;
  x ^= x >> 27;
  x *= 0x94d049bb133111ebULL;
  x ^= x >> 31;
  return x;
}

}  // namespace spatialobs::detail
