#include "spatialobs/relations.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <exception>
#include <limits>
#include <string>
#include <thread>
#include <utility>

#include "spatialobs/box_index.hpp"
#include "spatialobs/prefetch.hpp"
#include "spatialobs/radix_sort.hpp"

#if defined(_MSC_VER)
#include <intrin.h>
#endif

namespace spatialobs {

namespace detail {

// Set bits of a word, and the index of its lowest set bit (x != 0): the compilers' builtins, MSVC's intrinsics.
inline std::size_t popcount64(std::uint64_t x) {
#if defined(_MSC_VER) && defined(_M_X64)
  return static_cast<std::size_t>(__popcnt64(x));
#elif defined(_MSC_VER)
  std::size_t k = 0;
  for (; x; x &= x - 1) ++k;
  return k;
#else
  return static_cast<std::size_t>(__builtin_popcountll(x));
#endif
}

inline std::size_t lowest_bit64(std::uint64_t x) {
#if defined(_MSC_VER)
  unsigned long i = 0;
  _BitScanForward64(&i, x);
  return static_cast<std::size_t>(i);
#else
  return static_cast<std::size_t>(__builtin_ctzll(x));
#endif
}

void check_tolerance(double v, const char* name) {
  if (!(std::isfinite(v) && v >= 0)) {
    throw std::invalid_argument(std::string(name) + " must be a finite number >= 0, got " + std::to_string(v));
  }
}


// A finite double's bits as an unsigned integer with the same order
// (negatives flipped whole, positives with the sign bit set); -0.0 is folded
// into +0.0 first so that equal values get equal keys.
inline std::uint64_t order_bits(double v) {
  v += 0.0;
  std::uint64_t u;
  std::memcpy(&u, &v, sizeof u);
  return (u >> 63) ? ~u : (u | (std::uint64_t{1} << 63));
}

// The value back from order_bits (-0.0 comes back as +0.0).
inline double from_order_bits(std::uint64_t k) {
  const std::uint64_t u = (k >> 63) ? (k & ~(std::uint64_t{1} << 63)) : ~k;
  double v;
  std::memcpy(&v, &u, sizeof v);
  return v;
}

}  // namespace detail

namespace detail {

std::size_t resolve_threads(std::size_t threads, std::size_t cap) {
  if (threads == 0) threads = std::max(1u, std::thread::hardware_concurrency());
  return std::max<std::size_t>(1, std::min({threads, cap, kMaxThreads}));
}

// Sorts the hits of one first id by their second id. Short runs (nearly all
// of them on a canvas) by insertion, long ones (a background box overlaps
// everything) by an 11-bit radix sort; pairs are distinct or identical, so
// stability does not matter. Returns the buffer holding the result.
PairHit* sort_run(PairHit* hits, PairHit* tmp, std::size_t m) {
  if (m < 32) {
    for (std::size_t t = 1; t < m; ++t) {
      const PairHit h = hits[t];
      std::size_t u = t;
      for (; u > 0 && hits[u - 1].b > h.b; --u) hits[u] = hits[u - 1];
      hits[u] = h;
    }
    return hits;
  }
  if (m < 1024) {
    std::sort(hits, hits + m, [](const PairHit& x, const PairHit& y) { return x.b < y.b; });
    return hits;
  }
  std::uint32_t all_or = 0, all_and = ~std::uint32_t{0};
  for (std::size_t t = 0; t < m; ++t) {
    all_or |= hits[t].b;
    all_and &= hits[t].b;
  }
  const std::uint32_t varying = all_or ^ all_and;
  constexpr int kBits = 11;
  constexpr std::uint32_t kMask = (1u << kBits) - 1;
  std::vector<std::size_t> count(std::size_t{1} << kBits);
  for (int shift = 0; shift < 32; shift += kBits) {
    if (((varying >> shift) & kMask) == 0) continue;
    std::fill(count.begin(), count.end(), 0);
    for (std::size_t t = 0; t < m; ++t) ++count[(hits[t].b >> shift) & kMask];
    std::size_t at = 0;
    for (std::size_t& c : count) {
      const std::size_t here = c;
      c = at;
      at += here;
    }
    for (std::size_t t = 0; t < m; ++t) tmp[count[(hits[t].b >> shift) & kMask]++] = hits[t];
    std::swap(hits, tmp);
  }
  return hits;
}

// Writes the hits that for_each(f) passes to f, with first ids below na,
// sorted by (a, b): firsts to first[0, k), seconds to second[0, k), values
// to value (when not null). A counting pass groups the hits by first id and
// a second pass drops each hit's second id and value straight into its
// group's slots in the outputs; each group is then sorted by second id in
// place (short ones, nearly all, by insertion; long ones through `room`),
// and its first ids written in one run. Returns k.
template <class ForEach>
std::size_t sort_pairs(ForEach&& for_each, std::size_t na, Scratch& s, std::int64_t* first, std::int64_t* second,
                       double* value) {
  s.counts.assign(na + 1, 0);
  std::size_t* start = s.counts.data();
  std::size_t k = 0;
  for_each([&](const PairHit& h) {
    ++start[h.a + 1];
    ++k;
  });
  for (std::size_t i = 0; i < na; ++i) start[i + 1] += start[i];
  // start[a] walks group a; afterwards it is group a's end, group a + 1's start
  if (value) {
    for_each([&](const PairHit& h) {
      const std::size_t at = start[h.a]++;
      second[at] = h.b;
      value[at] = h.v;
    });
  } else {
    for_each([&](const PairHit& h) { second[start[h.a]++] = h.b; });
  }
  std::size_t longest = 0;
  for (std::size_t a = 0, g0 = 0; a < na; g0 = start[a], ++a) longest = std::max(longest, start[a] - g0);
  if (longest >= 32 && s.sorted.size() < 2 * longest) s.sorted.resize(2 * longest);  // never shrunk
  for (std::size_t a = 0, g0 = 0; a < na; g0 = start[a], ++a) {
    const std::size_t m = start[a] - g0;
    std::fill(first + g0, first + g0 + m, static_cast<std::int64_t>(a));
    if (m < 2) continue;
    std::int64_t* b = second + g0;
    double* v = value ? value + g0 : nullptr;
    if (m < 32) {
      for (std::size_t t = 1; t < m; ++t) {
        const std::int64_t hb = b[t];
        const double hv = v ? v[t] : 0.0;
        std::size_t u = t;
        for (; u > 0 && b[u - 1] > hb; --u) {
          b[u] = b[u - 1];
          if (v) v[u] = v[u - 1];
        }
        b[u] = hb;
        if (v) v[u] = hv;
      }
      continue;
    }
    PairHit* run = s.sorted.data();
    for (std::size_t t = 0; t < m; ++t)
      run[t] = PairHit{static_cast<std::uint32_t>(a), static_cast<std::uint32_t>(b[t]), v ? v[t] : 0.0};
    const PairHit* in = sort_run(run, run + m, m);
    for (std::size_t t = 0; t < m; ++t) b[t] = in[t].b;
    if (v)
      for (std::size_t t = 0; t < m; ++t) v[t] = in[t].v;
  }
  return k;
}

// sort_pairs over the hit buffers of every worker.
std::size_t sort_hits(Scratch& s, std::size_t na, std::vector<std::int64_t>& pairs,
                      std::vector<double>* values) {
  std::size_t k = 0;
  for (const auto& h : s.all_hits()) k += h.size();
  pairs.clear();
  pairs.resize(2 * k);
  if (values) {
    values->clear();
    values->resize(k);
  }
  auto each = [&s](auto&& f) {
    for (const auto& part : s.all_hits())
      for (const PairHit& h : part) f(h);
  };
  return sort_pairs(each, na, s, pairs.data(), pairs.data() + k, values ? values->data() : nullptr);
}

// A visitor factory for join_parallel: worker t appends to hit buffer t.
template <class Record>
auto hit_writers(Scratch& s, Record record) {
  return [&s, record](std::size_t t) {
    std::vector<PairHit>* out = &s.hits(t);
    return [out, record](std::size_t a, std::size_t b, const Rect& ra, const Rect& rb) { record(*out, a, b, ra, rb); };
  };
}

}  // namespace detail

void overlap_pairs(const double* boxes, std::size_t n, std::vector<std::int64_t>& pairs,
                   std::vector<double>& areas) {
  Scratch s;
  overlap_pairs(BoxIndex(boxes, n), pairs, areas, s);
}

std::vector<std::int64_t> containment_pairs(const double* boxes, std::size_t n) {
  Scratch s;
  return containment_pairs(BoxIndex(boxes, n), s);
}

void proximity_pairs(const double* boxes, std::size_t n, double max_gap, std::size_t k_nearest,
                     std::vector<std::int64_t>& pairs, std::vector<double>& gaps) {
  detail::check_tolerance(max_gap, "max_gap");
  Scratch s;
  proximity_pairs(BoxIndex(boxes, n), max_gap, k_nearest, pairs, gaps, s);
}

void overlap_pairs(const BoxIndex& index, std::vector<std::int64_t>& pairs, std::vector<double>& areas) {
  Scratch s;
  overlap_pairs(index, pairs, areas, s);
}

std::vector<std::int64_t> containment_pairs(const BoxIndex& index) {
  Scratch s;
  return containment_pairs(index, s);
}

void proximity_pairs(const BoxIndex& index, double max_gap, std::size_t k_nearest, std::vector<std::int64_t>& pairs,
                     std::vector<double>& gaps) {
  Scratch s;
  proximity_pairs(index, max_gap, k_nearest, pairs, gaps, s);
}

void overlap_pairs_between(const BoxIndex& index, const double* queries, std::size_t m,
                           std::vector<std::int64_t>& pairs, std::vector<double>& areas) {
  check_boxes(queries, m, "queries");
  if (m > std::numeric_limits<std::uint32_t>::max()) throw std::invalid_argument("too many queries (2^32 or more)");
  Scratch s;
  s.start(1);
  std::vector<PairHit>& hits = s.hits(0);
  for (std::size_t j = 0; j < m; ++j) {
    const Rect q = rect_at(queries, j);
    // the closed search finds every candidate; positive area decides
    index.search(q, [&](std::size_t i) {
      const Rect& r = index.item(i);
      if (overlaps_area(r, q))
        hits.push_back(PairHit{static_cast<std::uint32_t>(i), static_cast<std::uint32_t>(j), overlap_area(r, q)});
    });
  }
  detail::sort_hits(s, index.size(), pairs, &areas);
}

void overlap_any_ranked(const BoxIndex& index, const std::int64_t* ranks, const double* queries,
                        const std::int64_t* query_ranks, std::size_t m, bool above, std::uint8_t* out) {
  check_boxes(queries, m, "queries");
  const std::size_t n = index.size();
  // a query ranked at or past every item's rank has no item above (below) it: no search
  std::int64_t lo = std::numeric_limits<std::int64_t>::max();
  std::int64_t hi = std::numeric_limits<std::int64_t>::min();
  for (std::size_t i = 0; i < n; ++i) {
    lo = std::min(lo, ranks[i]);
    hi = std::max(hi, ranks[i]);
  }
  for (std::size_t j = 0; j < m; ++j) {
    const std::int64_t qr = query_ranks[j];
    if (n == 0 || (above ? hi <= qr : lo >= qr)) {
      out[j] = 0;
      continue;
    }
    const Rect q = rect_at(queries, j);
    // the closed search finds every candidate; positive area and the rank decide
    const bool hit = index.search_any(q, [&](std::size_t i) {
      return (above ? ranks[i] > qr : ranks[i] < qr) && overlaps_area(index.item(i), q);
    });
    out[j] = hit ? 1 : 0;
  }
}

namespace {

// Appends packed pairs to a vector through a raw pointer: the join's visitor
// stays a store and an increment (std::vector::push_back was not inlined
// there). finish() trims the vector to what was written. It starts at `hint`
// entries (at least 4096), within the capacity kept from earlier calls: the
// resize writes zeros up to its size, so starting at the whole capacity made a
// call on 10^3 boxes after one on 10^5 pay for the larger call's buffer.
class KeyAppender {
 public:
  KeyAppender(std::vector<std::uint64_t>& v, std::size_t hint) : v_(v) {
    v_.resize(std::min(v_.capacity(), std::max<std::size_t>(4096, hint)));
  }
  void push(std::uint64_t x) {
    if (n_ == v_.size()) grow();
    v_[n_++] = x;
  }
  // Writes x and keeps it when `keep`: no branch on a test that does not predict.
  void push_if(std::uint64_t x, bool keep) {
    if (n_ == v_.size()) grow();
    v_[n_] = x;
    n_ += keep ? 1 : 0;
  }
  void finish() { v_.resize(n_); }

 private:
  void grow() { v_.resize(std::max<std::size_t>(4096, 2 * v_.size())); }
  std::vector<std::uint64_t>& v_;
  std::size_t n_ = 0;
};

// Writes the pairs of keys (packed a << 32 | b, no a a wide id) and of each
// wide box wide[p] with the ids set in its bitmap (bits + p * words), sorted
// by (a, b), into first[0, k) and second[0, k), and value(a, b) into values
// when not null; returns k. A counting sort on a puts every pair in its
// group; a wide box's group is its bitmap read in order; the other groups,
// short (a few partners each on a canvas), are sorted in place. The output is
// written once, group by group.
// value(a, b) gives a pair's value, value.prefetch(b) asks for what it reads of b.
template <class Value>
std::size_t write_grouped(const std::vector<std::uint64_t>& keys, const std::vector<std::uint32_t>& wide,
                          const std::uint64_t* bits, std::size_t words, std::size_t n, Scratch& s,
                          std::vector<std::int64_t>& pairs, std::vector<double>* values, Value&& value) {
  s.counts.assign(n + 1, 0);
  std::size_t* end = s.counts.data() + 1;  // end[a - 1] is group a's start; end[-1] = 0
  for (const std::uint64_t key : keys) ++end[key >> 32];
  for (std::size_t p = 0; p < wide.size(); ++p) {
    std::size_t c = 0;
    for (std::size_t q = 0; q < words; ++q) c += detail::popcount64(bits[p * words + q]);
    end[wide[p]] += c;
  }
  std::size_t k = 0;
  for (std::size_t a = 0; a < n; ++a) {  // end[a] becomes group a's start, then walks it
    const std::size_t c = end[a];
    end[a] = k;
    k += c;
  }
  // The second ids are first grouped as 4-byte ids in scratch (half the
  // cache lines of the scattered writes), then each group is sorted there
  // and the three outputs are written once, in order.
  s.ids.resize(k);
  std::uint32_t* grouped = s.ids.data();
  for (std::size_t p = 0; p < wide.size(); ++p) {
    std::size_t at = end[wide[p]];
    for (std::size_t q = 0; q < words; ++q)
      for (std::uint64_t x = bits[p * words + q]; x; x &= x - 1)
        grouped[at++] = static_cast<std::uint32_t>(64 * q + detail::lowest_bit64(x));
    end[wide[p]] = at;
  }
  for (const std::uint64_t key : keys) grouped[end[key >> 32]++] = static_cast<std::uint32_t>(key);
  // end[a] is now group a's end
  pairs.clear();
  pairs.resize(2 * k);
  if (values) {
    values->clear();
    values->resize(k);
  }
  std::int64_t* first = pairs.data();
  std::int64_t* second = first + k;
  double* v = values ? values->data() : nullptr;
  constexpr std::size_t kAhead = 16;
  std::size_t next_wide = 0;
  for (std::size_t a = 0, g0 = 0; a < n; g0 = end[a], ++a) {
    const std::size_t m = end[a] - g0;
    if (m == 0) continue;
    std::uint32_t* b = grouped + g0;
    const bool from_bits = next_wide < wide.size() && wide[next_wide] == a;
    if (from_bits) {
      ++next_wide;
    } else if (m < 48) {
      for (std::size_t t = 1; t < m; ++t) {
        const std::uint32_t hb = b[t];
        std::size_t u = t;
        for (; u > 0 && b[u - 1] > hb; --u) b[u] = b[u - 1];
        b[u] = hb;
      }
    } else {
      std::sort(b, b + m);
    }
    for (std::size_t t = 0; t < m; ++t) {
      first[g0 + t] = static_cast<std::int64_t>(a);
      second[g0 + t] = static_cast<std::int64_t>(b[t]);
    }
    if (v) {
      // the partners' boxes are scattered over the page: ask for them kAhead
      // pairs early (the ids ahead are final up to their order in a group)
      for (std::size_t t = g0; t < g0 + m; ++t) {
        if (t + kAhead < k) value.prefetch(static_cast<std::size_t>(grouped[t + kAhead]));
        v[t] = value(a, static_cast<std::size_t>(grouped[t]));
      }
    }
  }
  return k;
}

// Whether r covers at least half of the area of `page` (or, on a page of
// zero width or height, half of its length).
bool covers_half(const Rect& r, const Rect& page) {
  const double w = page.x1 - page.x0, h = page.y1 - page.y0;
  const double cw = std::min(r.x1, page.x1) - std::max(r.x0, page.x0);
  const double ch = std::min(r.y1, page.y1) - std::max(r.y0, page.y0);
  if (cw < 0 || ch < 0) return false;
  return (w > 0 ? cw / w : 1.0) * (h > 0 ? ch / h : 1.0) >= 0.5;
}

// The ids of `wide` as bits over `words` 64-bit words.
std::vector<std::uint64_t> wide_bits(const std::vector<std::uint32_t>& wide, std::size_t words) {
  std::vector<std::uint64_t> m(words, 0);
  for (const std::uint32_t v : wide) m[v >> 6] |= std::uint64_t{1} << (v & 63);
  return m;
}

// The wide boxes' part of a serial pair kernel. Box p of `wide` gets the
// bitmap row `bits + p * words`; `mark_for(bits)` is the visitor that the
// tree walk (`join_wide`) calls with the wide box first. A background box
// (covers_half) meets most items, so every id is tested in order instead, and
// each bitmap word is written once: `test(i, item, tree_item)` gives
// {the bit of i in w's row, whether the key (i << 32 | w) is pushed}. The
// other wide boxes are then paired as join_wide pairs them, after the tree's
// items. The same pairs as the walk, which prunes on the kernel's own test.
template <class Keep, class MarkFor, class Test>
void pair_wide_boxes(const BoxIndex& index, Scratch& s, KeyAppender& keys, std::size_t words, Keep keep,
                     MarkFor mark_for, Test test) {
  const std::vector<std::uint32_t>& wide = index.wide();
  const std::size_t n = index.size();
  s.bits.assign(words * wide.size(), 0);
  std::vector<std::uint64_t> wide_mask;  // the wide ids, as bits
  for (std::size_t p = 0; p < wide.size(); ++p) {
    std::uint64_t* bits = s.bits.data() + p * words;
    auto mark = mark_for(bits);
    const std::size_t w = wide[p];
    const Rect& rw = index.item(w);
    if (covers_half(rw, index.bounds())) {
      if (wide_mask.empty()) wide_mask = wide_bits(wide, words);
      for (std::size_t q = 0; q < words; ++q) {
        const std::size_t i0 = 64 * q, i1 = std::min(n, i0 + 64);
        std::uint64_t word = 0;
        for (std::size_t i = i0; i < i1; ++i) {
          const bool tree_item = ((wide_mask[q] >> (i & 63)) & 1) == 0;
          const std::pair<bool, bool> got = test(i, w, rw, index.item(i), tree_item);
          word |= static_cast<std::uint64_t>(got.first) << (i & 63);
          keys.push_if((static_cast<std::uint64_t>(i) << 32) | w, got.second);
        }
        bits[q] = word;
      }
      for (std::size_t q = p + 1; q < wide.size(); ++q) {
        const Rect& rq = index.item(wide[q]);
        if (keep(rw, rq)) mark(w, wide[q], rw, rq);
      }
      continue;
    }
    index.join_wide(p, keep, mark);
  }
}

// overlap_pairs on one thread. The tree's pairs travel as packed 8-byte
// words (lo << 32 | hi); a wide box w (a background overlaps most of the
// page) marks its partners above w in a bitmap over the ids, and only its
// partners below w, whose pairs start elsewhere, become words. The areas are
// computed once, in output order, from the boxes of each written pair
// (overlap_area is symmetric in its two boxes when they overlap with
// positive area, so the bits are those of the join's order).
void overlap_pairs_serial(const BoxIndex& index, std::vector<std::int64_t>& pairs, std::vector<double>& areas,
                          Scratch& s) {
  const std::size_t n = index.size();
  KeyAppender keys(s.keys(0), 2 * n);
  auto keep = [](const Rect& a, const Rect& b) { return overlaps_area(a, b); };
  index.join_tree(keep, [&keys](std::size_t a, std::size_t b, const Rect&, const Rect&) {
    const std::uint64_t lo = std::min(a, b), hi = std::max(a, b);
    keys.push((lo << 32) | hi);
  });
  const std::vector<std::uint32_t>& wide = index.wide();
  const std::size_t words = n / 64 + 1;
  // the wide box is always the visit's first box; other wide boxes come after it
  auto mark_for = [&keys](std::uint64_t* bits) {
    return [bits, &keys](std::size_t w, std::size_t b, const Rect&, const Rect&) {
      if (b > w) {
        bits[b >> 6] |= std::uint64_t{1} << (b & 63);
      } else {
        keys.push((static_cast<std::uint64_t>(b) << 32) | w);
      }
    };
  };
  auto test = [](std::size_t i, std::size_t w, const Rect& rw, const Rect& r, bool tree_item) {
    const bool hit = tree_item & overlaps_area(r, rw);
    return std::pair<bool, bool>(hit & (i > w), hit & (i < w));
  };
  pair_wide_boxes(index, s, keys, words, keep, mark_for, test);
  keys.finish();
  struct Area {
    const BoxIndex& index;
    double operator()(std::size_t a, std::size_t b) const { return overlap_area(index.item(a), index.item(b)); }
    void prefetch(std::size_t b) const { detail::prefetch(&index.item(b), sizeof(Rect)); }
  };
  write_grouped(s.keys(0), wide, s.bits.data(), words, n, s, pairs, &areas, Area{index});
}

}  // namespace

void overlap_pairs(const BoxIndex& index, std::vector<std::int64_t>& pairs, std::vector<double>& areas, Scratch& s,
                   std::size_t threads) {
  const std::size_t n = index.size();
  threads = detail::resolve_threads(threads, n);
  s.start(threads);
  if (threads == 1) {
    overlap_pairs_serial(index, pairs, areas, s);
    return;
  }
  // Positive-area overlap is monotone (boxes containing two overlapping
  // boxes overlap too), so it prunes node pairs directly. Each hit carries
  // its area through the sort, so nothing is looked up again afterwards.
  index.join_parallel([](const Rect& a, const Rect& b) { return overlaps_area(a, b); },
                      detail::hit_writers(s,
                                          [](std::vector<PairHit>& out, std::size_t a, std::size_t b, const Rect& ra,
                                             const Rect& rb) {
                                            out.push_back(PairHit{static_cast<std::uint32_t>(std::min(a, b)),
                                                                  static_cast<std::uint32_t>(std::max(a, b)),
                                                                  overlap_area(ra, rb)});
                                          }),
                      threads);
  detail::sort_hits(s, n, pairs, &areas);
}

namespace {

// The pairs of a serial containment_pairs, written in (a, b) order: the
// keys in s.keys(0) (packed a << 32 | b, unsorted; none with a a wide id
// and b a tree item) and each wide box wide()[p]'s partners, the ids set in
// its bitmap row (s.bits + p * (n / 64 + 1)).
std::vector<std::int64_t> write_containment(const BoxIndex& index, Scratch& s) {
  const std::size_t n = index.size();
  const std::vector<std::uint32_t>& wide = index.wide();
  const std::size_t words = n / 64 + 1;
  std::vector<std::uint64_t>& keys = s.keys(0);
  detail::radix_sort(keys, s.keys_tmp);
  std::size_t k = keys.size();
  for (const std::uint64_t x : s.bits) k += detail::popcount64(x);
  std::vector<std::int64_t> pairs(2 * k);
  std::int64_t* first = pairs.data();
  std::int64_t* second = first + k;
  std::size_t at = 0, t = 0;
  auto copy_keys_below = [&](std::uint64_t end) {
    for (; t < keys.size() && keys[t] < end; ++t, ++at) {
      first[at] = static_cast<std::int64_t>(keys[t] >> 32);
      second[at] = static_cast<std::int64_t>(keys[t] & 0xffffffffu);
    }
  };
  for (std::size_t p = 0; p < wide.size(); ++p) {
    const std::uint64_t w = wide[p];
    copy_keys_below(w << 32);
    std::uint64_t* bits = s.bits.data() + p * words;
    // pairs (w, other wide box) found by an earlier box's walk
    for (; t < keys.size() && (keys[t] >> 32) == w; ++t) {
      const std::uint64_t b = keys[t] & 0xffffffffu;
      bits[b >> 6] |= std::uint64_t{1} << (b & 63);
    }
    for (std::size_t q = 0; q < words; ++q) {
      for (std::uint64_t x = bits[q]; x; x &= x - 1) {
        first[at] = static_cast<std::int64_t>(w);
        second[at++] = static_cast<std::int64_t>(64 * q + detail::lowest_bit64(x));
      }
    }
  }
  copy_keys_below(~std::uint64_t{0});  // ids are below 2^32 - 1, so every key is below this
  return pairs;
}

// containment_pairs on one thread, below kContainmentPlainBelow boxes: every
// pair the intersection join finds is tested both ways, and each wide box's
// inner ids go to its bitmap row from a walk of the tree. On such pages
// (10^3 boxes: 2-3 tree levels) the tests that containment_pairs_serial adds
// to visit fewer pairs cost more than the visits they save (benchmarks/
// README.md, "`containment_pairs` at 10^3: a plain join below 2,048 boxes").
std::vector<std::int64_t> containment_pairs_plain(const BoxIndex& index, Scratch& s) {
  const std::size_t n = index.size();
  std::vector<std::uint64_t>& keys = s.keys(0);
  auto visit = [&keys](std::size_t a, std::size_t b, const Rect& ra, const Rect& rb) {
    if (contains(ra, rb)) keys.push_back((static_cast<std::uint64_t>(a) << 32) | b);
    if (contains(rb, ra)) keys.push_back((static_cast<std::uint64_t>(b) << 32) | a);
  };
  auto keep = [](const Rect& a, const Rect& b) { return intersects(a, b); };
  index.join_tree(keep, visit);
  const std::size_t words = n / 64 + 1;
  s.bits.assign(words * index.wide().size(), 0);
  for (std::size_t p = 0; p < index.wide().size(); ++p) {
    std::uint64_t* bits = s.bits.data() + p * words;
    // the wide box is always the visit's first box
    auto mark = [bits, &keys](std::size_t a, std::size_t b, const Rect& ra, const Rect& rb) {
      bits[b >> 6] |= static_cast<std::uint64_t>(contains(ra, rb)) << (b & 63);
      if (contains(rb, ra)) keys.push_back((static_cast<std::uint64_t>(b) << 32) | a);
    };
    index.join_wide(p, keep, mark);
  }
  return write_containment(index, s);
}

// containment_pairs on one thread from kContainmentPlainBelow boxes. Two
// tree items are visited only when one contains the other, and a wide box
// that covers half the page tests every id in order, each bitmap word
// written once. The same pairs as containment_pairs_plain.
std::vector<std::int64_t> containment_pairs_serial(const BoxIndex& index, Scratch& s) {
  const std::size_t n = index.size();
  KeyAppender found(s.keys(0), 2 * n);
  auto visit = [&found](std::size_t a, std::size_t b, const Rect& ra, const Rect& rb) {
    found.push_if((static_cast<std::uint64_t>(a) << 32) | b, contains(ra, rb));
    found.push_if((static_cast<std::uint64_t>(b) << 32) | a, contains(rb, ra));
  };
  auto keep = [](const Rect& a, const Rect& b) { return intersects(a, b); };
  // intersection prunes the node pairs; two items are visited only when one
  // contains the other (which implies their intersection)
  auto nested = [](const Rect& a, const Rect& b) { return contains(a, b) | contains(b, a); };
  index.join_tree(keep, nested, visit);
  const std::size_t words = n / 64 + 1;
  // the wide box is always the visit's first box
  auto mark_for = [&found](std::uint64_t* bits) {
    return [bits, &found](std::size_t a, std::size_t b, const Rect& ra, const Rect& rb) {
      bits[b >> 6] |= static_cast<std::uint64_t>(contains(ra, rb)) << (b & 63);
      if (contains(rb, ra)) found.push((static_cast<std::uint64_t>(b) << 32) | a);
    };
  };
  auto test = [](std::size_t, std::size_t, const Rect& rw, const Rect& r, bool tree_item) {
    return std::pair<bool, bool>(tree_item & contains(rw, r), tree_item & contains(r, rw));
  };
  pair_wide_boxes(index, s, found, words, keep, mark_for, test);
  found.finish();
  return write_containment(index, s);
}

}  // namespace

std::vector<std::int64_t> containment_pairs(const BoxIndex& index, Scratch& s, std::size_t threads) {
  const std::size_t n = index.size();
  threads = detail::resolve_threads(threads, n);
  s.start(threads);
  if (threads == 1) {
    return n < kContainmentPlainBelow ? containment_pairs_plain(index, s) : containment_pairs_serial(index, s);
  }
  // Containment implies (closed) intersection, so the intersection join
  // finds every candidate; both directions are tested. With no value per
  // pair, the pairs travel as packed words: a radix sort of 8-byte keys
  // moves half the bytes of grouping 16-byte hits.
  index.join_parallel([](const Rect& a, const Rect& b) { return intersects(a, b); },
                      [&s](std::size_t t) {
                        std::vector<std::uint64_t>* out = &s.keys(t);
                        return [out](std::size_t a, std::size_t b, const Rect& ra, const Rect& rb) {
                          if (contains(ra, rb)) out->push_back((static_cast<std::uint64_t>(a) << 32) | b);
                          if (contains(rb, ra)) out->push_back((static_cast<std::uint64_t>(b) << 32) | a);
                        };
                      },
                      threads);
  std::vector<std::uint64_t>& keys = s.keys(0);
  for (std::size_t t = 1; t < s.all_keys().size(); ++t) keys.insert(keys.end(), s.keys(t).begin(), s.keys(t).end());
  detail::radix_sort(keys, s.keys_tmp);
  return detail::unpack_pairs(keys);
}


void proximity_pairs(const BoxIndex& index, double max_gap, std::size_t k_nearest, std::vector<std::int64_t>& pairs,
                     std::vector<double>& gaps, Scratch& s, std::size_t threads) {
  detail::check_tolerance(max_gap, "max_gap");
  const std::size_t n = index.size();
  pairs.clear();
  gaps.clear();
  if (k_nearest == 0) return;
  threads = detail::resolve_threads(threads, n);
  s.start(threads);
  // Node pairs are pruned on the gap along each axis alone: the gap is never
  // smaller than either (sqrt(dx * dx) == dx when dx * dx neither overflows
  // nor underflows, and a larger sum only grows the root), so no pair within
  // max_gap is lost; the floor of 1e-150 keeps dx * dx away from underflow.
  // Node bounds contain their items, so their axis gaps are never larger.
  // The exact gap decides at the leaves.
  const double lim = std::max(max_gap, 1e-150);
  auto near = [lim](const Rect& a, const Rect& b) {
#ifdef SPATIALOBS_SSE2
    // the same four differences and comparisons, two lanes at a time (box.hpp)
    const __m128d alo = _mm_loadu_pd(&a.x0), ahi = _mm_loadu_pd(&a.x1);
    const __m128d blo = _mm_loadu_pd(&b.x0), bhi = _mm_loadu_pd(&b.x1);
    const __m128d l = _mm_set1_pd(lim);
    return _mm_movemask_pd(_mm_and_pd(_mm_cmple_pd(_mm_sub_pd(blo, ahi), l), _mm_cmple_pd(_mm_sub_pd(alo, bhi), l))) == 3;
#else
    return (b.x0 - a.x1 <= lim) & (a.x0 - b.x1 <= lim) & (b.y0 - a.y1 <= lim) & (a.y0 - b.y1 <= lim);
#endif
  };
  index.join_parallel(near,
                      detail::hit_writers(s,
                                          [max_gap](std::vector<PairHit>& out, std::size_t a, std::size_t b,
                                                    const Rect& ra, const Rect& rb) {
                                            if (overlaps_area(ra, rb)) return;
                                            const double g = gap(ra, rb);
                                            if (g <= max_gap)
                                              out.push_back(PairHit{static_cast<std::uint32_t>(a),
                                                                    static_cast<std::uint32_t>(b), g});
                                          }),
                      threads);
  // Bucket each candidate under both of its boxes (a counting sort), keep the
  // k closest of each bucket by (gap, id), and mark the candidate kept: a
  // pair kept from either end is written once, with no copies to drop.
  std::size_t candidates = 0;
  for (const auto& part : s.all_hits()) candidates += part.size();
  if (candidates > std::numeric_limits<std::uint32_t>::max()) {
    throw std::invalid_argument("proximity_pairs: 2^32 or more pairs within max_gap; use a smaller max_gap");
  }
  std::vector<std::size_t>& start = s.counts;
  start.assign(n + 1, 0);
  for (const auto& part : s.all_hits())
    for (const PairHit& h : part) {
      ++start[h.a + 1];
      ++start[h.b + 1];
    }
  for (std::size_t i = 0; i < n; ++i) start[i + 1] += start[i];
  if (s.sorted.size() < 2 * candidates) s.sorted.resize(2 * candidates);
  PairHit* bucket = s.sorted.data();  // a = the neighbour, b = the candidate's number, v = the gap
  {
    std::uint32_t c = 0;
    for (const auto& part : s.all_hits())
      for (const PairHit& h : part) {
        bucket[start[h.a]++] = PairHit{h.b, c, h.v};
        bucket[start[h.b]++] = PairHit{h.a, c, h.v};
        ++c;
      }
  }
  // start[i] is now the end of bucket i (the start of bucket i + 1)
  std::vector<std::uint8_t>& kept = s.flags;
  kept.assign(candidates, 0);
  auto closer = [](const PairHit& x, const PairHit& y) { return x.v < y.v || (x.v == y.v && x.a < y.a); };
  const auto k_cut = static_cast<std::ptrdiff_t>(std::min<std::size_t>(k_nearest, candidates + 1));
  for (std::size_t i = 0, first = 0; i < n; first = start[i], ++i) {
    PairHit* lo = bucket + first;
    PairHit* hi = bucket + start[i];
    // (gap, neighbour) orders a bucket strictly (a neighbour comes once), so
    // the k closest are one set however the selection runs
    if (hi - lo > k_cut) std::nth_element(lo, lo + (k_cut - 1), hi, closer);
    PairHit* mid = lo + std::min(k_cut, hi - lo);
    for (PairHit* it = lo; it != mid; ++it) kept[it->b] = 1;
  }
  std::size_t k = 0;
  for (std::size_t c = 0; c < candidates; ++c) k += kept[c];
  pairs.assign(2 * k, 0);
  gaps.assign(k, 0.0);
  auto each = [&s, &kept](auto&& f) {
    std::size_t c = 0;
    for (const auto& part : s.all_hits())
      for (const PairHit& h : part)
        if (kept[c++]) f(PairHit{std::min(h.a, h.b), std::max(h.a, h.b), h.v});
  };
  detail::sort_pairs(each, n, s, pairs.data(), pairs.data() + k, gaps.data());
}

namespace detail {

// Whether the n keys (given as order bits) lie on one grid: every key an
// integer multiple of step = 2^e, e chosen so that the smallest key `first`
// and the largest are fewer than 2^32 steps apart (the finest such grid:
// keys on any coarser power-of-two grid lie on it too). Then, exactly,
// key / step - first / step is an integer below 2^32 (both terms are
// integers, scaling by a power of two is exact, and so is the difference),
// and (that integer + first / step) * step gives the key back.
inline bool grid_of(const std::uint64_t* keys, std::size_t n, double& step, double& first) {
  if (n == 0) return false;
  std::uint64_t kmin = keys[0], kmax = keys[0];
  for (std::size_t i = 0; i < n; ++i) {
    kmin = std::min(kmin, keys[i]);
    kmax = std::max(kmax, keys[i]);
  }
  first = from_order_bits(kmin);
  const double last = from_order_bits(kmax);
  const double range = last - first;
  if (!(range < std::numeric_limits<double>::infinity())) return false;
  const int e = range > 0 ? std::ilogb(range) - 31 : 0;
  if (e < -900 || e > 900) return false;
  step = std::ldexp(1.0, e);
  const double inv = std::ldexp(1.0, -e);
  // x = key / step is an integer: finite, and no set mantissa bit below the
  // binary point (a nonzero key scaled to zero would have underflowed)
  std::uint64_t off_grid = 0;
  for (std::size_t i = 0; i < n; ++i) {
    const double v = from_order_bits(keys[i]);
    const double x = v * inv;
    std::uint64_t u;
    std::memcpy(&u, &x, sizeof u);
    const int biased = static_cast<int>((u >> 52) & 0x7ffu);
    const std::uint64_t frac =
        biased >= 1075 ? 0 : (biased < 1023 ? (u << 1) : u & ((std::uint64_t{1} << (1075 - biased)) - 1));
    off_grid |= frac | static_cast<std::uint64_t>(biased == 0x7ff) | static_cast<std::uint64_t>(x == 0 && v != 0);
  }
  return off_grid == 0 && last * inv - first * inv < 4294967296.0;
}

// The cut of cut_lines over boxes in (key, index) order: key(t) and id(t)
// give the t-th. Keys decode to their values in sorted order (no lookups by
// id); a folded -0.0 differs from +0.0 by nothing the cut can see.
template <class Key, class Id, class Pair>
void cut_sorted(std::size_t n, double tol, const double* along, LineScratch& ls, Key&& key, Id&& id, Pair& pair) {
  for (std::size_t s = 0; s < n;) {
    const double start = key(s);
    std::size_t e = s + 1;
    while (e < n && key(e) - start <= tol) ++e;
    if (e - s == 2) {  // most lines hold two boxes: no sort needed
      const std::uint32_t a = id(s), b = id(s + 1);
      pair(std::min(a, b), std::max(a, b));
    } else if (e - s > 2) {
      if (ls.line.size() < e - s) ls.line.resize(e - s);
      auto* l = ls.line.data();
      for (std::size_t t = s; t < e; ++t) l[t - s] = {along[id(t)], id(t)};
      if (e - s <= 16) {  // short lines, nearly all: insertion sort by (along, id)
        for (std::size_t t = 1; t < e - s; ++t) {
          const auto x = l[t];
          std::size_t u = t;
          for (; u > 0 && x < l[u - 1]; --u) l[u] = l[u - 1];
          l[u] = x;
        }
      } else {
        std::sort(l, l + (e - s));
      }
      for (std::size_t t = 0; t + 1 < e - s; ++t) {
        const std::uint32_t a = l[t].second, b = l[t + 1].second;
        pair(std::min(a, b), std::max(a, b));
      }
    }
    s = e;
  }
}

// The greedy line cut shared by alignment_pairs and alignment_masks. For
// kind `kind`, boxes sorted by its key (then index) are cut into lines: a
// line starts at the smallest key not yet taken and takes every box within
// tol of it. Along each line (center on the other axis, then index), each
// consecutive pair is passed to pair(a, b) with a < b.
template <class Pair>
void cut_lines(const double* boxes, std::size_t n, double tol, int kind, LineScratch& ls, Pair&& pair) {
  const bool vertical_line = kind <= kAlignRight;  // left/center-x/right align along a vertical line
  ls.along.resize(n);
  ls.words.resize(n);
  double* along = ls.along.data();
  std::uint64_t* words = ls.words.data();
  for (std::size_t i = 0; i < n; ++i) {
    const Rect r = rect_at(boxes, i);
    double key = 0;
    switch (kind) {
      case kAlignLeft: key = r.x0; break;
      case kAlignCenterX: key = (r.x0 + r.x1) * 0.5; break;
      case kAlignRight: key = r.x1; break;
      case kAlignTop: key = r.y0; break;
      case kAlignCenterY: key = (r.y0 + r.y1) * 0.5; break;
      default: key = r.y1; break;
    }
    along[i] = vertical_line ? (r.y0 + r.y1) * 0.5 : (r.x0 + r.x1) * 0.5;
    words[i] = order_bits(key);
  }
  // Sorted by (key, index): a stable radix sort on the key. When the keys
  // lie on a grid of 2^e whose span holds fewer than 2^32 steps (canvas
  // coordinates), a key's step number and its index travel as one 8-byte
  // word; otherwise the key's order bits and the index as a 16-byte record.
  double step = 0, first = 0;
  if (grid_of(words, n, step, first)) {
    const double inv = 1.0 / step;  // a power of two: exact
    for (std::size_t i = 0; i < n; ++i) {
      // key / step and first / step are integers within 2^32: the difference is exact
      const double k = from_order_bits(words[i]) * inv - first * inv;
      words[i] = (static_cast<std::uint64_t>(k) << 32) | i;
    }
    radix_sort(ls.words, ls.words_tmp, 32);
    words = ls.words.data();
    cut_sorted(
        n, tol, along, ls,
        [&](std::size_t t) { return (static_cast<double>(words[t] >> 32) + first * inv) * step; },
        [&](std::size_t t) { return static_cast<std::uint32_t>(words[t]); }, pair);
    return;
  }
  ls.keyed.resize(n);
  for (std::size_t i = 0; i < n; ++i) ls.keyed[i] = KeyedId{words[i], static_cast<std::uint32_t>(i)};
  radix_sort_by_key(ls.keyed, ls.keyed_tmp);
  const KeyedId* keyed = ls.keyed.data();
  cut_sorted(
      n, tol, along, ls, [&](std::size_t t) { return from_order_bits(keyed[t].key); },
      [&](std::size_t t) { return keyed[t].id; }, pair);
}

}  // namespace detail

void alignment_pairs(const double* boxes, std::size_t n, double tol, std::vector<std::int64_t>& pairs,
                     std::vector<std::int8_t>& kinds) {
  Scratch s;
  alignment_pairs(boxes, n, tol, pairs, kinds, s);
}

void alignment_pairs(const double* boxes, std::size_t n, double tol, std::vector<std::int64_t>& pairs,
                     std::vector<std::int8_t>& kinds, Scratch& s, std::size_t threads, int only_kind) {
  check_boxes(boxes, n);
  detail::check_tolerance(tol, "tol");
  constexpr int kKinds = kAlignBottom + 1;
  if (only_kind < -1 || only_kind >= kKinds)
    throw std::invalid_argument("alignment kind must be -1 (all) or 0..5, got " + std::to_string(only_kind));
  threads = only_kind >= 0 ? 1 : detail::resolve_threads(threads, kKinds);
  for (int kind = 0; kind < kKinds; ++kind) s.lines(static_cast<std::size_t>(kind));  // no regrowth below
  // Worker w cuts kinds w, w + threads, ... with its own sort buffers; kind
  // k's pairs go to lines(k).found (left empty for a kind not asked).
  auto work = [&](std::size_t w) {
    for (std::size_t kind = w; kind < kKinds; kind += threads) {
      std::vector<std::uint64_t>& found = s.lines(kind).found;
      if (only_kind >= 0 && static_cast<int>(kind) != only_kind) {
        found.clear();
        continue;
      }
      // a line of m boxes gives m - 1 pairs: fewer than n in all
      found.resize(n);
      std::uint64_t* out = found.data();
      std::size_t k = 0;
      detail::cut_lines(boxes, n, tol, static_cast<int>(kind), s.lines(w),
                        [out, &k](std::uint64_t a, std::uint64_t b) { out[k++] = (a << 32) | b; });
      found.resize(k);
      // (a, b) packed sorts as (a, b): a radix sort of the words alone, in this worker
      detail::radix_sort(found, s.lines(w).found_tmp);
    }
  };
  if (threads == 1) {
    work(0);
  } else {
    std::vector<std::exception_ptr> errors(threads);
    std::vector<std::thread> pool;
    auto guarded = [&](std::size_t w) {
      try {
        work(w);
      } catch (...) {
        errors[w] = std::current_exception();
      }
    };
    for (std::size_t w = 1; w < threads; ++w) pool.emplace_back(guarded, w);
    guarded(0);
    for (std::thread& th : pool) th.join();
    for (const std::exception_ptr& e : errors)
      if (e) std::rethrow_exception(e);
  }
  std::size_t k = 0;
  for (int kind = 0; kind < kKinds; ++kind) k += s.lines(static_cast<std::size_t>(kind)).found.size();
  pairs.clear();
  pairs.resize(2 * k);
  kinds.clear();
  kinds.resize(k);
  std::size_t at = 0;
  for (int kind = 0; kind < kKinds; ++kind) {
    const std::vector<std::uint64_t>& found = s.lines(static_cast<std::size_t>(kind)).found;
    for (std::size_t t = 0; t < found.size(); ++t, ++at) {
      pairs[at] = static_cast<std::int64_t>(found[t] >> 32);
      pairs[k + at] = static_cast<std::int64_t>(found[t] & 0xffffffffu);
      kinds[at] = static_cast<std::int8_t>(kind);
    }
  }
}

void alignment_masks(const double* boxes, std::size_t n, double tol, const std::int64_t* group,
                     std::vector<std::int64_t>& pairs, std::vector<std::int8_t>& axes,
                     std::vector<std::int8_t>& masks) {
  check_boxes(boxes, n);
  detail::check_tolerance(tol, "tol");
  if (n >= (std::size_t{1} << 31)) throw std::invalid_argument("too many boxes for alignment_masks (2^31 or more)");
  // one record per (pair, kind): key (i << 33 | j << 1 | axis) sorts as (i, j, axis); kinds OR-ed after
  struct Hit {
    std::uint64_t key;
    std::uint32_t bit;
  };
  LineScratch ls;
  std::vector<Hit> hits;
  for (int kind = kAlignLeft; kind <= kAlignBottom; ++kind) {
    const std::uint64_t axis = kind <= kAlignRight ? 0 : 1;
    detail::cut_lines(boxes, n, tol, kind, ls, [&](std::uint64_t a, std::uint64_t b) {
      if (group != nullptr && group[a] != group[b]) return;
      hits.push_back(Hit{(a << 33) | (b << 1) | axis, std::uint32_t{1} << kind});
    });
  }
  std::vector<Hit> tmp;
  detail::radix_sort_by_key(hits, tmp);
  std::size_t k = 0;
  for (std::size_t t = 0; t < hits.size(); ++t) k += (t == 0 || hits[t].key != hits[t - 1].key);
  pairs.assign(2 * k, 0);
  axes.assign(k, 0);
  masks.assign(k, 0);
  std::size_t u = 0;
  for (std::size_t t = 0; t < hits.size(); ++t) {
    if (t > 0 && hits[t].key == hits[t - 1].key) {
      masks[u - 1] = static_cast<std::int8_t>(masks[u - 1] | hits[t].bit);
      continue;
    }
    pairs[u] = static_cast<std::int64_t>(hits[t].key >> 33);
    pairs[k + u] = static_cast<std::int64_t>((hits[t].key >> 1) & 0xffffffffu);
    axes[u] = static_cast<std::int8_t>(hits[t].key & 1u);
    masks[u] = static_cast<std::int8_t>(hits[t].bit);
    ++u;
  }
}

// Sorted on integer keys (detail::order_bits: the integers' order is the doubles', -0.0 as +0.0), so the
// comparisons are integer compares: with double compares (a ucomisd and two conditional jumps each) the
// time at 10^3 boxes moved between ~19 and ~36 us with where the linker placed the sort's loop (the
// same core object linked beside other binding code; benchmarks/README.md, "Each part of the build
// alone on an idle machine"). The order is the same: (centre y, x0, index) and, within a row,
// (x0, centre y, index), each a total order.
// Flattened, as since the unity build was first found slower here (then put down to std::sort's
// comparisons not being inlined; the layout effect above is the likelier cause, not measured apart).
#if defined(__GNUC__)
__attribute__((flatten))
#endif
std::vector<std::int64_t> reading_order(const double* boxes, std::size_t n, double row_tol) {
  check_boxes(boxes, n);
  detail::check_tolerance(row_tol, "row_tol");
  struct Item {
    std::uint64_t cy, x0, id;  // order_bits of the centre's y and of x0
  };
  std::vector<Item> items(n);
  for (std::size_t i = 0; i < n; ++i) {
    const Rect r = rect_at(boxes, i);
    items[i] = Item{detail::order_bits((r.y0 + r.y1) * 0.5), detail::order_bits(r.x0), i};
  }
  std::sort(items.begin(), items.end(), [](const Item& a, const Item& b) {
    if (a.cy != b.cy) return a.cy < b.cy;
    if (a.x0 != b.x0) return a.x0 < b.x0;
    return a.id < b.id;
  });
  std::vector<std::int64_t> rank(n);
  std::int64_t next = 0;
  for (std::size_t s = 0; s < n;) {
    const double top = detail::from_order_bits(items[s].cy);
    std::size_t e = s + 1;
    while (e < n && detail::from_order_bits(items[e].cy) - top <= row_tol) ++e;
    std::sort(items.begin() + static_cast<std::ptrdiff_t>(s), items.begin() + static_cast<std::ptrdiff_t>(e),
              [](const Item& a, const Item& b) {
                if (a.x0 != b.x0) return a.x0 < b.x0;
                if (a.cy != b.cy) return a.cy < b.cy;
                return a.id < b.id;
              });
    for (std::size_t t = s; t < e; ++t) rank[items[t].id] = next++;
    s = e;
  }
  return rank;
}

}  // namespace spatialobs
