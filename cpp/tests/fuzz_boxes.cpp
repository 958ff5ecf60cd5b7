// Fuzz target for the box kernels: every kernel that takes boxes runs on the
// same input, which is either valid (then results are checked for basic
// invariants) or rejected with std::invalid_argument; anything else (another
// exception, a crash, a sanitizer report) is a failure.
//
// Two drivers share run_one(): libFuzzer (build with clang and
// -DSPATIALOBS_LIBFUZZER -fsanitize=fuzzer) and a plain seeded loop, the
// default, which needs no special compiler:
//
//   fuzz_boxes [iterations] [seed]
//
// The loop builds structured inputs: coordinates drawn from a small lattice
// (touching, duplicate and nested boxes), extreme finite values, signed
// zeros, subnormals, NaN and infinities, and inverted rows.
#include <cstring>

#include "check.hpp"
#include "spatialobs/box_index.hpp"
#include "spatialobs/occlusion.hpp"
#include "spatialobs/relations.hpp"
#include "spatialobs/visibility.hpp"

using namespace spatialobs;

namespace {

template <class F>
void expect_valid_or_rejected(F&& f) {
  try {
    f();
  } catch (const std::invalid_argument&) {
  }
}

// The input: a parameter byte, then 8-byte doubles; the first four doubles
// are the viewport, the rest the boxes (a trailing partial box is dropped).
void run_one(const std::uint8_t* data, std::size_t size) {
  if (size < 1 + 8 * 4) return;
  const std::uint8_t param = data[0];
  std::vector<double> v((size - 1) / 8);
  std::memcpy(v.data(), data + 1, v.size() * 8);
  const Rect viewport{v[0], v[1], v[2], v[3]};
  const std::size_t n = (v.size() - 4) / 4;
  std::vector<double> boxes(v.begin() + 4, v.begin() + 4 + static_cast<std::ptrdiff_t>(4 * n));
  const double* b = boxes.data();
  const double tol = static_cast<double>(param & 0x0f);

  std::vector<std::int8_t> labels(n);
  std::vector<double> gaps(n);
  expect_valid_or_rejected([&] {
    visibility(b, n, viewport, tol, labels.data(), gaps.data());
    for (std::size_t i = 0; i < n; ++i) CHECK(labels[i] >= 0 && labels[i] <= 4 && !(gaps[i] < 0));
  });
  expect_valid_or_rejected([&] {
    const BoxIndex ix(b, n, 2 + (param >> 4) % 15);
    const std::vector<std::int64_t> pairs = ix.query_pairs();
    CHECK(pairs.size() % 2 == 0 && pairs.size() / 2 <= n * (n - (n ? 1 : 0)) / 2);
    for (std::int64_t id : ix.query(viewport)) CHECK(id >= 0 && static_cast<std::size_t>(id) < n);
  });
  std::vector<std::int64_t> rows;
  std::vector<double> values;
  std::vector<std::int8_t> kinds;
  expect_valid_or_rejected([&] {
    overlap_pairs(b, n, rows, values);
    // Positive-area pairs; the area itself may underflow to 0 (subnormal
    // overlaps) or overflow to infinity (spans near the double range), never NaN.
    for (double a : values) CHECK(a >= 0);
  });
  expect_valid_or_rejected([&] { containment_pairs(b, n); });
  expect_valid_or_rejected([&] { proximity_pairs(b, n, tol, 1 + param % 5, rows, values); });
  expect_valid_or_rejected([&] { alignment_pairs(b, n, tol / 4, rows, kinds); });
  expect_valid_or_rejected([&] {
    std::vector<std::int64_t> rank = reading_order(b, n, tol);
    std::sort(rank.begin(), rank.end());
    for (std::size_t i = 0; i < n; ++i) CHECK(rank[i] == static_cast<std::int64_t>(i));
  });
  std::vector<std::int64_t> order(n);
  std::vector<double> opacity(n);
  std::vector<std::uint8_t> hidden(n);
  for (std::size_t i = 0; i < n; ++i) {
    order[i] = static_cast<std::int64_t>((i * 7 + param) % 5);
    opacity[i] = (i + param) % 3 ? 1.0 : 0.5;
    hidden[i] = (i + param) % 4 == 0;
  }
  const OcclusionInput in{b, order.data(), opacity.data(), hidden.data(), n, viewport, (param & 1) ? 1.0 : 0.5};
  expect_valid_or_rejected([&] { occluders(in); });
  expect_valid_or_rejected([&] {
    std::vector<std::int64_t> occ(n);
    std::vector<double> frac(n);
    occluders_union(in, occ.data(), frac.data());
    for (std::size_t i = 0; i < n; ++i) CHECK(frac[i] >= 0.0 && frac[i] <= 1.0);
  });
}

double pick(std::mt19937_64& rng) {
  static const double special[] = {0.0, -0.0, 1.0, -1.0, 0.5, 1e-310, -1e-310, 1e15, -1e15, 9007199254740993.0,
                                   1e300, -1e300, std::numeric_limits<double>::max(),
                                   -std::numeric_limits<double>::max(), std::numeric_limits<double>::min(),
                                   spatialobs_test::kNaN, spatialobs_test::kInf, -spatialobs_test::kInf};
  std::uniform_int_distribution<int> kind(0, 19);
  const int k = kind(rng);
  if (k < 14) return static_cast<double>(std::uniform_int_distribution<int>(-3, 12)(rng));  // the lattice
  if (k < 18) return special[std::uniform_int_distribution<std::size_t>(0, 14)(rng)];        // finite extremes
  if (k < 19) return special[std::uniform_int_distribution<std::size_t>(15, 17)(rng)];       // NaN, infinities
  return std::uniform_real_distribution<double>(-1e6, 1e6)(rng);
}

}  // namespace

#ifdef SPATIALOBS_LIBFUZZER
extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  run_one(data, size);
  return 0;
}
#else
int main(int argc, char** argv) {
  const long iterations = argc > 1 ? std::atol(argv[1]) : 3000;
  const unsigned long long seed = argc > 2 ? std::strtoull(argv[2], nullptr, 10) : 1;
  std::mt19937_64 rng(seed);
  std::uniform_int_distribution<int> boxes_per_input(0, 48), invalid(0, 7);
  std::vector<std::uint8_t> buf;
  for (long it = 0; it < iterations; ++it) {
    const std::size_t n = static_cast<std::size_t>(boxes_per_input(rng));
    std::vector<double> v;
    // a mostly valid viewport
    const double x = pick(rng), y = pick(rng);
    v.insert(v.end(), {x, y, x + std::fabs(pick(rng)), y + std::fabs(pick(rng))});
    for (std::size_t i = 0; i < n; ++i) {
      const double x0 = pick(rng), y0 = pick(rng);
      double w = std::fabs(pick(rng)), h = std::fabs(pick(rng));
      if (invalid(rng) == 0) w = -w;  // now and then an inverted row
      v.insert(v.end(), {x0, y0, x0 + w, y0 + h});
      if (invalid(rng) == 0 && i) {  // a duplicate of an earlier box
        std::copy(v.end() - 8, v.end() - 4, v.end() - 4);
      }
    }
    buf.assign(1 + 8 * v.size(), 0);
    buf[0] = static_cast<std::uint8_t>(rng());
    std::memcpy(buf.data() + 1, v.data(), 8 * v.size());
    run_one(buf.data(), buf.size());
    if (spatialobs_test::failures()) {
      std::fprintf(stderr, "fuzz_boxes: input %ld of seed %llu failed\n", it, seed);
      break;
    }
  }
  return spatialobs_test::finish("fuzz_boxes");
}
#endif
