// A minimal test harness for the core's own tests: no dependency beyond the
// standard library, so the sanitized build needs nothing else installed.
// CHECK records a failure and goes on; a test binary exits 1 when any check
// failed, which is what ctest reads.
#pragma once

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <functional>
#include <limits>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

namespace spatialobs_test {

inline int& failures() {
  static int count = 0;
  return count;
}

inline void fail(const char* file, int line, const std::string& what) {
  std::fprintf(stderr, "%s:%d: check failed: %s\n", file, line, what.c_str());
  ++failures();
}

// Runs f and reports whether it threw E (and nothing else).
template <class E, class F>
bool throws(F&& f) {
  try {
    f();
  } catch (const E&) {
    return true;
  } catch (...) {
    return false;
  }
  return false;
}

inline int finish(const char* name) {
  if (failures()) {
    std::fprintf(stderr, "%s: %d check(s) failed\n", name, failures());
    return 1;
  }
  std::printf("%s: ok\n", name);
  return 0;
}

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();

// n random boxes with corners on a coarse lattice, so that touching,
// duplicate, nested and zero-area boxes are common.
inline std::vector<double> lattice_boxes(std::mt19937_64& rng, std::size_t n, int cells = 12) {
  std::uniform_int_distribution<int> pos(0, cells), size(0, cells / 3);
  std::vector<double> b(4 * n);
  for (std::size_t i = 0; i < n; ++i) {
    const double x = pos(rng), y = pos(rng);
    b[4 * i] = x;
    b[4 * i + 1] = y;
    b[4 * i + 2] = x + size(rng);
    b[4 * i + 3] = y + size(rng);
  }
  return b;
}

}  // namespace spatialobs_test

#define CHECK(cond)                                                                  \
  do {                                                                               \
    if (!(cond)) ::spatialobs_test::fail(__FILE__, __LINE__, #cond);                 \
  } while (0)

#define CHECK_THROWS(E, expr) CHECK(::spatialobs_test::throws<E>([&] { expr; }))
