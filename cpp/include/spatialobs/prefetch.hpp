// A cache hint for loads known ahead of time (candidates scattered over a
// store, the terms of a query), so that their misses overlap.
#pragma once

#include <cstddef>
#include <cstdint>

namespace spatialobs::detail {

// Asks for the cache lines of [p, p + bytes); does nothing where the compiler
// offers no prefetch builtin. Addresses go through integers, so no pointer
// past an allocation is formed, and a prefetch never faults.
inline void prefetch(const void* p, std::size_t bytes = 1) {
#if defined(__GNUC__) || defined(__clang__)
  const auto a = reinterpret_cast<std::uintptr_t>(p);
  for (std::uintptr_t line = a & ~static_cast<std::uintptr_t>(63); line < a + bytes; line += 64) {
    __builtin_prefetch(reinterpret_cast<const void*>(line));
  }
#else
  (void)p;
  (void)bytes;
#endif
}

}  // namespace spatialobs::detail
