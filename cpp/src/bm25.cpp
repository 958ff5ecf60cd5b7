#include "spatialobs/bm25.hpp"
#include "spatialobs/mix64.hpp"
#include "spatialobs/prefetch.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <stdexcept>
#include <string>
#include <utility>

namespace spatialobs {

Bm25Index::Bm25Index(double k1, double b) : k1_(k1), b_(b) {
  if (!(std::isfinite(k1) && k1 >= 0)) throw std::invalid_argument("k1 must be finite and >= 0, got " + std::to_string(k1));
  if (!(b >= 0 && b <= 1)) throw std::invalid_argument("b must lie in [0, 1], got " + std::to_string(b));
}

namespace detail {


// Capacity of the arena block of a list of len words (3 <= len).
inline std::uint32_t bm25_cap(std::uint32_t len) {
  std::uint32_t c = 4;
  while (c < len) c <<= 1;
  return c;
}

inline unsigned bm25_class(std::uint32_t cap) {
  unsigned c = 0;
  while ((4u << c) < cap) ++c;
  return c;
}

constexpr std::uint16_t kBm25Escape = 0xffff;

// The posting at word i of a list (i < e) whose doc ids at i have the high
// half h: its doc id, and the word after it.
inline std::uint32_t bm25_doc_at(const std::uint16_t* p, std::size_t i, std::uint32_t h, std::size_t& next) {
  if (p[i] != kBm25Escape) {
    next = i + 1;
    return h << 16 | p[i];
  }
  next = i + 3;
  return static_cast<std::uint32_t>(p[i + 1]) << 16 | p[i + 2];
}

}  // namespace detail

std::int64_t Bm25Index::find_term(std::uint64_t key) const {
  if (slots_.empty()) return -1;
  const std::size_t mask = slots_.size() - 1;
  for (std::size_t i = detail::mix64(key) & mask;; i = (i + 1) & mask) {
    const std::uint32_t s = slots_[i];
    if (s == 0) return -1;
    if (term(s - 1).key == key) return static_cast<std::int64_t>(s - 1);
  }
}

void Bm25Index::grow_slots() {
  slots_ = detail::grown_slots(slots_, 64, num_terms_, [this](std::size_t t) { return term(t).key; });
}

std::uint32_t Bm25Index::term_for(std::uint64_t key) {
  const std::int64_t found = find_term(key);
  if (found >= 0) return static_cast<std::uint32_t>(found);
  if (num_terms_ >= 0xfffffffeULL) throw std::invalid_argument("a BM25 index holds fewer than 2^32 - 1 terms");
  // Load at most 0.7: probes stay short and the table costs 6 to 11 bytes per term.
  if (10 * (num_terms_ + 1) > 7 * slots_.size()) grow_slots();
  const std::size_t mask = slots_.size() - 1;
  std::size_t i = detail::mix64(key) & mask;
  while (slots_[i] != 0) i = (i + 1) & mask;
  if ((num_terms_ & kTermChunkMask) == 0) terms_.emplace_back(new Term[kTermChunkMask + 1]);
  term(num_terms_) = Term{key, 0, 0};
  ++num_terms_;
  slots_[i] = static_cast<std::uint32_t>(num_terms_);
  return static_cast<std::uint32_t>(num_terms_ - 1);
}

std::uint32_t Bm25Index::arena_alloc(std::uint32_t cap) {
  const unsigned cls = detail::bm25_class(cap);
  // The smallest free block that fits: blocks freed by lists that grew past
  // them are split in halves for the many short lists of new terms, instead
  // of waiting for a list of their own size.
  for (unsigned c = cls; c < kNumClasses; ++c) {
    std::vector<std::uint32_t>& fl = free_[c];
    if (fl.empty()) continue;
    const std::uint32_t off = fl.back();
    fl.pop_back();
    for (unsigned h = c; h > cls; --h) free_[h - 1].push_back(off + (4u << (h - 1)));  // upper halves
    arena_free_words_ -= cap;
    return off;
  }
  if (chunk_used_ + cap > (1u << kChunkBits)) {
    if (chunks_.size() >= (static_cast<std::size_t>(1) << (32 - kChunkBits))) {
      throw std::invalid_argument("a BM25 index holds fewer than 2^32 words of postings");
    }
    // The rest of the previous chunk (less than one block) stays unused.
    chunks_.emplace_back(new std::uint16_t[1u << kChunkBits]);
    chunk_used_ = 0;
  }
  const auto off = static_cast<std::uint32_t>(((chunks_.size() - 1) << kChunkBits) + chunk_used_);
  chunk_used_ += cap;
  return off;
}

const std::uint16_t* Bm25Index::words_of(const Term& t) const {
  const std::uint32_t n = t.words();
  if (n <= 2) return t.w;
  if (n > kMaxArenaBlock) return big_[t.off()].data();
  return arena_at(t.off());
}

std::uint16_t* Bm25Index::words_of(Term& t) {
  return const_cast<std::uint16_t*>(static_cast<const Bm25Index*>(this)->words_of(static_cast<const Term&>(t)));
}

void Bm25Index::append_words(Term& t, const std::uint16_t* w, std::uint32_t k) {
  const std::uint32_t len = t.words();
  const std::uint32_t n = len + k;
  if (n > kWordsMask) throw std::invalid_argument("a BM25 posting list holds fewer than 2^30 words");
  if (n <= 2) {  // still in the term record
    std::copy(w, w + k, t.w + len);
  } else if (len <= 2) {  // leaves the term record
    const std::uint32_t off = arena_alloc(detail::bm25_cap(n));
    std::uint16_t* dst = arena_at(off);
    std::copy(t.w, t.w + len, dst);
    std::copy(w, w + k, dst + len);
    t.set_off(off);
  } else if (len > kMaxArenaBlock) {
    big_[t.off()].insert(big_[t.off()].end(), w, w + k);
  } else if (n <= detail::bm25_cap(len)) {
    std::copy(w, w + k, arena_at(t.off()) + len);
  } else {  // block full: move to one twice its size, or past the largest to a vector of its own
    const std::uint32_t old = t.off();
    const std::uint16_t* src = arena_at(old);
    if (n <= kMaxArenaBlock) {
      const std::uint32_t off = arena_alloc(detail::bm25_cap(n));
      std::uint16_t* dst = arena_at(off);
      std::copy(src, src + len, dst);
      std::copy(w, w + k, dst + len);
      t.set_off(off);
    } else {
      std::vector<std::uint16_t> v(src, src + len);
      v.insert(v.end(), w, w + k);
      t.set_off(static_cast<std::uint32_t>(big_.size()));
      big_.push_back(std::move(v));
    }
    const std::uint32_t cap = detail::bm25_cap(len);
    free_[detail::bm25_class(cap)].push_back(old);
    arena_free_words_ += cap;
  }
  t.len += k;
}

void Bm25Index::make_irregular(Term& t) {
  // The header goes in front of the words: the list is rewritten once, as
  // the header followed by its words appended.
  const std::uint32_t n = t.words();
  const std::uint16_t* src = words_of(t);
  std::vector<std::uint16_t> old(src, src + n);
  std::uint16_t header[kHeaderWords] = {0, 0, 0};
  set_header_df(header, n);  // every document so far holds the term once: df is the word count
  if (n > kMaxArenaBlock) {
    std::vector<std::uint16_t>& v = big_[t.off()];
    v.insert(v.begin(), header, header + kHeaderWords);
    t.len += kHeaderWords;
  } else {
    if (n > 2) {
      const std::uint32_t cap = detail::bm25_cap(n);
      free_[detail::bm25_class(cap)].push_back(t.off());
      arena_free_words_ += cap;
    }
    t.len &= ~kWordsMask;  // an empty list, written anew (the old words were copied first)
    append_words(t, header, kHeaderWords);
    if (n > 0) append_words(t, old.data(), n);
  }
  t.len |= kIrregular;
}

void Bm25Index::append_posting(Term& t, std::uint32_t doc) {
  const auto high = static_cast<std::uint16_t>(doc >> 16);
  const auto low = static_cast<std::uint16_t>(doc);
  const std::uint16_t last_high = (t.len & kIrregular) ? words_of(t)[2] : 0;
  if (high == last_high && low != detail::kBm25Escape) {
    append_words(t, &low, 1);
    return;
  }
  if (!(t.len & kIrregular)) make_irregular(t);
  const std::uint16_t w[3] = {detail::kBm25Escape, high, low};
  append_words(t, w, 3);
  words_of(t)[2] = high;
}

Bm25Index::ListView Bm25Index::list(std::uint32_t ti) const {
  const Term& t = term(ti);
  const std::uint32_t n = t.words();
  const std::uint16_t* p = words_of(t);
  if (!(t.len & kIrregular)) return ListView{p, n, n, false};
  return ListView{p + kHeaderWords, n - kHeaderWords, header_df(p), (t.len & kRepeats) != 0};
}

std::uint32_t Bm25Index::add(const std::uint64_t* atoms, std::size_t n) {
  if (doc_class_.size() >= 0xffffffffULL) throw std::invalid_argument("a BM25 index holds fewer than 2^32 documents");
  if (n > 0xffffffffULL) throw std::invalid_argument("a BM25 document holds fewer than 2^32 atoms");
  const auto id = static_cast<std::uint32_t>(doc_class_.size());
  const auto len = static_cast<std::uint32_t>(n);
  auto cls = len_class_.find(len);
  if (cls == len_class_.end()) {
    cls = len_class_.emplace(len, static_cast<std::uint32_t>(class_len_.size())).first;
    class_len_.push_back(len);
  }
  std::vector<std::uint64_t> sorted(atoms, atoms + n);
  std::sort(sorted.begin(), sorted.end());
  for (std::size_t i = 0; i < sorted.size();) {
    std::size_t j = i + 1;
    while (j < sorted.size() && sorted[j] == sorted[i]) ++j;
    Term& t = term(term_for(sorted[i]));
    if (j - i > 1) {
      if (!(t.len & kIrregular)) make_irregular(t);
      t.len |= kRepeats;
    }
    for (std::size_t r = i; r < j; ++r) append_posting(t, id);
    if (t.len & kIrregular) {  // one more document (a header made for it counted those before it)
      std::uint16_t* h = words_of(t);
      set_header_df(h, header_df(h) + 1);
    }
    i = j;
  }
  doc_class_.push_back(cls->second);
  total_len_ += n;
  return id;
}

Bm25Index::Scratch& Bm25Index::thread_scratch() {
  thread_local Scratch scratch;
  return scratch;
}

namespace detail {

// Documents scored per block: the 8,192 sums (64 KiB) stay in L1 or L2
// while every query term's postings for the block are added. Blocks of 4,096
// (all in L1) cost more per query at 10^5 documents: each block reloads every
// term's table of contributions, and the gate rises after each block
// anyway.
constexpr std::size_t kBm25Block = 8192;
// Touched documents read back between two updates of the gate: the buffer
// holds at most this many more than the candidates kept.
constexpr std::size_t kBm25GateEvery = 2048;

// Score buckets of the top-k gate: the upper 16 bits of a positive double
// (exponent and 4 mantissa bits) order like the values, so a bucket is a
// score range narrower than 1/16 of its lower edge.
constexpr unsigned kBm25BucketShift = 48;
constexpr std::size_t kBm25Buckets = 1024;
inline std::uint64_t bm25_bits(double x) {
  std::uint64_t u;
  std::memcpy(&u, &x, sizeof u);
  return u;
}
inline double bm25_from_bits(std::uint64_t u) {
  double x;
  std::memcpy(&x, &u, sizeof x);
  return x;
}

// x ranks before y: higher score, ties to the lower id (a function object,
// so that the standard algorithms inline it).
struct Bm25Better {
  bool operator()(const std::pair<double, std::uint32_t>& x, const std::pair<double, std::uint32_t>& y) const {
    return x.first > y.first || (x.first == y.first && x.second < y.second);
  }
};

}  // namespace detail

void Bm25Index::top_k(const std::uint64_t* query, std::size_t n, std::size_t k, std::vector<std::int64_t>& ids,
                      std::vector<double>& scores) const {
  search(query, n, k, ids, scores, false);
}

void Bm25Index::top_k_exhaustive(const std::uint64_t* query, std::size_t n, std::size_t k,
                                 std::vector<std::int64_t>& ids, std::vector<double>& scores) const {
  search(query, n, k, ids, scores, true);
}

void Bm25Index::search(const std::uint64_t* query, std::size_t n, std::size_t k, std::vector<std::int64_t>& ids,
                       std::vector<double>& scores, bool exhaustive) const {
  ids.clear();
  scores.clear();
  const std::size_t num_docs = doc_class_.size();
  if (num_docs == 0 || k == 0 || n == 0) return;
  std::vector<std::uint64_t> terms(query, query + n);
  std::sort(terms.begin(), terms.end());
  terms.erase(std::unique(terms.begin(), terms.end()), terms.end());
  // A query arrives after other partitions' work, so its terms' slots, term
  // records and postings are cold: each level is requested for every term
  // before any is read, so that the misses overlap instead of queueing.
  if (!slots_.empty()) {
    const std::size_t mask = slots_.size() - 1;
    for (std::uint64_t t : terms) detail::prefetch(&slots_[detail::mix64(t) & mask]);
    for (std::uint64_t t : terms) {
      const std::uint32_t s = slots_[detail::mix64(t) & mask];
      if (s != 0) detail::prefetch(&term(s - 1), sizeof(Term));
    }
  }
  std::vector<ListView> lists;
  lists.reserve(terms.size());
  for (std::uint64_t t : terms) {
    const std::int64_t found = find_term(t);
    if (found >= 0) {
      lists.push_back(list(static_cast<std::uint32_t>(found)));
      detail::prefetch(lists.back().p, 256);
    }
  }
  if (lists.empty()) return;

  const double N = static_cast<double>(num_docs);
  const double avgdl = static_cast<double>(total_len_) / N;
  const std::size_t num_classes = class_len_.size();
  Scratch& sc = thread_scratch();
  // A query that threw (out of memory) may have left sums behind.
  if (!sc.clean) std::fill(sc.acc.begin(), sc.acc.end(), 0.0);
  sc.clean = false;

  // Per term: idf, and for a term with more postings than length classes a
  // table of its tf = 1 contribution per class (offset into sc.table).
  std::vector<double> idf(lists.size());
  std::vector<std::size_t> table_of(lists.size(), SIZE_MAX);
  sc.table.clear();
  bool have_norm = false;
  for (std::size_t j = 0; j < lists.size(); ++j) {
    const double df = static_cast<double>(lists[j].df);
    idf[j] = std::log(1.0 + (N - df + 0.5) / (df + 0.5));
    if (lists[j].df <= num_classes) continue;
    if (!have_norm) {
      sc.norm.resize(num_classes);
      for (std::size_t c = 0; c < num_classes; ++c) {
        const double dl = static_cast<double>(class_len_[c]);
        sc.norm[c] = k1_ * (1.0 - b_ + b_ * dl / avgdl);
      }
      have_norm = true;
    }
    table_of[j] = sc.table.size();
    sc.table.resize(table_of[j] + num_classes);
    double* tab = sc.table.data() + table_of[j];
    for (std::size_t c = 0; c < num_classes; ++c) tab[c] = idf[j] * 1.0 / (1.0 + sc.norm[c]);
  }

  // The gate: documents scoring below it cannot be among the k best.
  //
  // Bounds before any document is scored: a document's score is at least its
  // contribution from any one of its terms (every contribution is > 0, and a
  // positive addend never lowers a rounded sum), and that is at least the
  // term's contribution at tf = 1 and the longest length. So no score is below
  // the smallest such bound (the first score bucket), and a term in k
  // documents puts k scores at or above its bound (the first gate). The
  // margin covers rounding: tf > 1 is computed by another expression.
  double gate = 0.0;
  double lowest = HUGE_VAL;
  if (!exhaustive) {
    std::uint32_t longest = 0;
    for (std::uint32_t len : class_len_) longest = std::max(longest, len);
    const double kmax = k1_ * (1.0 - b_ + b_ * static_cast<double>(longest) / avgdl);
    for (std::size_t j = 0; j < lists.size(); ++j) {
      const double bound = idf[j] * 1.0 / (1.0 + kmax) * (1.0 - 1e-9);
      lowest = std::min(lowest, bound);
      if (lists[j].df >= k) gate = std::max(gate, bound);
    }
  }
  const std::uint64_t bucket0 = detail::bm25_bits(lowest) >> detail::kBm25BucketShift;
  sc.hist.assign(detail::kBm25Buckets, 0);
  std::size_t top_bucket = 0;  // the highest bucket holding a candidate
  std::size_t nb = 0;  // candidates in the buffer

  const std::size_t block = std::min(detail::kBm25Block, num_docs);
  if (sc.acc.size() < block) sc.acc.resize(block, 0.0);
  // One spare slot: the branch-free append writes before it knows whether to count.
  if (sc.touched.size() < block + 1) sc.touched.resize(block + 1);
  sc.cursor.assign(lists.size(), 0);
  sc.high.assign(lists.size(), 0);
  const detail::Bm25Better better;
  auto& best = sc.best;
  if (exhaustive) best.clear();
  // Documents not better than bar cannot be among the k best.
  std::pair<double, std::uint32_t> bar{0.0, 0};
  bool have_bar = false;
  const std::size_t cut = k > SIZE_MAX / 2 ? SIZE_MAX : 2 * k;
  double* acc = sc.acc.data();
  std::uint32_t* touched = sc.touched.data();
  const std::uint32_t* doc_class = doc_class_.data();
  const std::uint32_t* class_len = class_len_.data();
  const double* norm = sc.norm.data();

  for (std::size_t lo = 0; lo < num_docs; lo += block) {
    const auto hi = static_cast<std::uint32_t>(std::min(lo + block, num_docs));
    const auto base = static_cast<std::uint32_t>(lo);
    // The block lies in one run of 65,536 ids (blocks divide it): doc ids
    // seg + low for the low halves in [off, lim).
    const std::uint32_t bh = base >> 16;
    const std::uint32_t seg = bh << 16;
    const std::uint32_t off = base - seg;
    const std::uint32_t lim = hi - seg;
    const std::uint32_t lim_plain = std::min<std::uint32_t>(lim, detail::kBm25Escape);
    const std::uint32_t* seg_class = doc_class + seg;
    std::size_t nt = 0;
    for (std::size_t j = 0; j < lists.size(); ++j) {
      const std::uint16_t* p = lists[j].p;
      const std::size_t e = lists[j].n;
      std::size_t i = sc.cursor[j];
      std::uint32_t h = sc.high[j];
      const double w = idf[j];
      // Every contribution is > 0 (idf > 0, tf >= 1), so a zero sum marks a
      // document not yet touched in this block; the append is branch-free.
      if (table_of[j] != SIZE_MAX && !lists[j].repeats) {
        // Every tf is 1: one table lookup per posting.
        const double* tab = sc.table.data() + table_of[j];
        for (;;) {
          if (h == bh) {
            for (; i < e && p[i] < lim_plain; ++i) {
              const std::uint32_t d = p[i] - off;
              const double a = acc[d];
              touched[nt] = d;
              nt += a == 0.0;
              acc[d] = a + tab[seg_class[p[i]]];
            }
          }
          // An escape into this block (the first posting of this run of ids,
          // or a low half of 0xffff); then plain words again.
          if (i < e && p[i] == detail::kBm25Escape && p[i + 1] == bh && p[i + 2] < lim) {
            const std::uint32_t d = p[i + 2] - off;
            const double a = acc[d];
            touched[nt] = d;
            nt += a == 0.0;
            acc[d] = a + tab[seg_class[p[i + 2]]];
            h = bh;
            i += 3;
            continue;
          }
          break;
        }
      } else {
        // Repeats (tf > 1) or a short list: decode each posting and count its repeats.
        const double* tab = table_of[j] != SIZE_MAX ? sc.table.data() + table_of[j] : nullptr;
        while (i < e) {
          std::size_t next;
          const std::uint32_t doc = detail::bm25_doc_at(p, i, h, next);
          if (doc >= hi) break;
          h = doc >> 16;
          std::uint32_t count = 1;
          std::size_t after;
          while (next < e && detail::bm25_doc_at(p, next, h, after) == doc) {
            ++count;
            next = after;
          }
          i = next;
          const std::uint32_t d = doc - base;
          const std::uint32_t c = doc_class[doc];
          const double tf = static_cast<double>(count);
          double v;
          if (tab != nullptr) {
            v = count == 1 ? tab[c] : w * tf / (tf + norm[c]);
          } else {
            const double dl = static_cast<double>(class_len[c]);
            v = w * tf / (tf + k1_ * (1.0 - b_ + b_ * dl / avgdl));
          }
          const double a = acc[d];
          touched[nt] = d;
          nt += a == 0.0;
          acc[d] = a + v;
        }
      }
      sc.high[j] = h;
      sc.cursor[j] = i;
    }
    if (!exhaustive) {
      // Documents scoring at least the gate go to a buffer (appended without
      // a branch: most documents fall below it, at no predictable place) and
      // are counted in their score bucket. After every kBm25GateEvery touched
      // documents, once k candidates are in, the gate rises to the lower edge
      // of the highest bucket with k candidates at or above it (k documents
      // score at least the gate, so one below it cannot be among the k best)
      // and the buffer drops what is below. O(1) per candidate; pairs are
      // compared only at the end. `best` only grows (its first nb entries are
      // the buffer), so reusing it costs nothing.
      for (std::size_t c0 = 0; c0 < nt; c0 += detail::kBm25GateEvery) {
        const std::size_t c1 = std::min(nt, c0 + detail::kBm25GateEvery);
        if (best.size() < nb + (c1 - c0) + 1) best.resize(nb + (c1 - c0) + 1);
        std::pair<double, std::uint32_t>* out = best.data();
        const std::size_t first_new = nb;
        for (std::size_t i = c0; i < c1; ++i) {
          const std::uint32_t d = touched[i];
          const double s = acc[d];
          acc[d] = 0.0;
          out[nb] = {s, base + d};
          nb += s >= gate;
        }
        for (std::size_t i = first_new; i < nb; ++i) {
          const std::uint64_t key = detail::bm25_bits(out[i].first) >> detail::kBm25BucketShift;
          const std::size_t bucket =
              key <= bucket0 ? 0
                             : static_cast<std::size_t>(std::min<std::uint64_t>(key - bucket0, detail::kBm25Buckets - 1));
          ++sc.hist[bucket];
          top_bucket = std::max(top_bucket, bucket);
        }
        if (nb < k) continue;
        std::size_t above = 0;
        std::size_t g = top_bucket + 1;
        while (g > 1 && above < k) above += sc.hist[--g];
        const double edge = detail::bm25_from_bits((bucket0 + g) << detail::kBm25BucketShift);
        if (above >= k && edge > gate) gate = edge;
        if (nb >= 2 * k) {  // drop what is below the gate, branch-free
          std::size_t kept = 0;
          for (std::size_t i = 0; i < nb; ++i) {
            out[kept] = out[i];
            kept += out[i].first >= gate;
          }
          nb = kept;
        }
      }
      continue;
    }
    // The exhaustive selection: candidates at least as good as the k-th best
    // seen so far go to a buffer; when it holds 2k, it is cut back to its k
    // best, which raises the bar.
    for (std::size_t i = 0; i < nt; ++i) {
      const std::uint32_t d = touched[i];
      const std::pair<double, std::uint32_t> cand{acc[d], base + d};
      acc[d] = 0.0;
      if (have_bar && (cand.first < bar.first || !better(cand, bar))) continue;
      best.push_back(cand);
      if (best.size() == cut) {
        std::nth_element(best.begin(), best.begin() + static_cast<std::ptrdiff_t>(k - 1), best.end(),
                         better);
        best.resize(k);
        bar = best[k - 1];
        have_bar = true;
      }
    }
  }
  if (exhaustive) nb = best.size();
  const std::size_t m = std::min(k, nb);
  if (m < nb) {
    std::nth_element(best.begin(), best.begin() + static_cast<std::ptrdiff_t>(m),
                     best.begin() + static_cast<std::ptrdiff_t>(nb), better);
  }
  std::sort(best.begin(), best.begin() + static_cast<std::ptrdiff_t>(m), better);
  ids.reserve(m);
  scores.reserve(m);
  for (std::size_t i = 0; i < m; ++i) {
    ids.push_back(best[i].second);
    scores.push_back(best[i].first);
  }
  sc.clean = true;
}

std::pair<std::uint64_t, double> Bm25Index::posting_floor(const std::uint64_t* query, std::size_t n,
                                                         bool scatter) const {
  const std::size_t num_docs = doc_class_.size();
  if (num_docs == 0 || n == 0) return {0, 0.0};
  std::vector<std::uint64_t> terms(query, query + n);
  std::sort(terms.begin(), terms.end());
  terms.erase(std::unique(terms.begin(), terms.end()), terms.end());
  std::vector<ListView> lists;
  std::vector<double> idf;
  const double N = static_cast<double>(num_docs);
  for (std::uint64_t t : terms) {
    const std::int64_t found = find_term(t);
    if (found < 0) continue;
    lists.push_back(list(static_cast<std::uint32_t>(found)));
    const double df = static_cast<double>(lists.back().df);
    idf.push_back(std::log(1.0 + (N - df + 0.5) / (df + 0.5)));
  }
  std::uint64_t postings = 0;
  if (!scatter) {
    std::uint64_t sum = 0;
    for (const ListView& l : lists) {
      std::uint32_t h = 0;
      for (std::size_t i = 0; i < l.n;) {
        std::size_t next;
        const std::uint32_t doc = detail::bm25_doc_at(l.p, i, h, next);
        h = doc >> 16;
        sum += doc;
        ++postings;
        i = next;
      }
    }
    return {postings, static_cast<double>(sum)};
  }
  Scratch& sc = thread_scratch();
  if (!sc.clean) std::fill(sc.acc.begin(), sc.acc.end(), 0.0);
  sc.clean = false;
  const std::size_t block = std::min(detail::kBm25Block, num_docs);
  if (sc.acc.size() < block) sc.acc.resize(block, 0.0);
  if (sc.touched.size() < block + 1) sc.touched.resize(block + 1);
  sc.cursor.assign(lists.size(), 0);
  sc.high.assign(lists.size(), 0);
  double* acc = sc.acc.data();
  std::uint32_t* touched = sc.touched.data();
  double checksum = 0.0;
  for (std::size_t lo = 0; lo < num_docs; lo += block) {
    const auto hi = static_cast<std::uint32_t>(std::min(lo + block, num_docs));
    const auto base = static_cast<std::uint32_t>(lo);
    const std::uint32_t bh = base >> 16;
    const std::uint32_t off = base - (bh << 16);
    const std::uint32_t lim = hi - (bh << 16);
    const std::uint32_t lim_plain = std::min<std::uint32_t>(lim, detail::kBm25Escape);
    std::size_t nt = 0;
    for (std::size_t j = 0; j < lists.size(); ++j) {
      // The scorer's plain loop with its table lookup replaced by the idf (a
      // repeated document is added once per repeat).
      const std::uint16_t* p = lists[j].p;
      const std::size_t e = lists[j].n;
      std::size_t i = sc.cursor[j];
      std::uint32_t h = sc.high[j];
      const double w = idf[j];
      const std::size_t i0 = i;
      std::size_t escapes = 0;
      for (;;) {
        if (h == bh) {
          for (; i < e && p[i] < lim_plain; ++i) {
            const std::uint32_t d = p[i] - off;
            const double a = acc[d];
            touched[nt] = d;
            nt += a == 0.0;
            acc[d] = a + w;
          }
        }
        if (i < e && p[i] == detail::kBm25Escape && p[i + 1] == bh && p[i + 2] < lim) {
          const std::uint32_t d = p[i + 2] - off;
          const double a = acc[d];
          touched[nt] = d;
          nt += a == 0.0;
          acc[d] = a + w;
          h = bh;
          i += 3;
          ++escapes;
          continue;
        }
        break;
      }
      postings += (i - i0) - 2 * escapes;
      sc.high[j] = h;
      sc.cursor[j] = i;
    }
    for (std::size_t i = 0; i < nt; ++i) {
      const std::uint32_t d = touched[i];
      checksum += acc[d];
      acc[d] = 0.0;
    }
  }
  sc.clean = true;
  return {postings, checksum};
}

std::size_t Bm25Index::memory_bytes() const {
  std::size_t bytes = (doc_class_.capacity() + class_len_.capacity()) * sizeof(std::uint32_t) +
                      len_class_.size() * (sizeof(std::pair<std::uint32_t, std::uint32_t>) + 2 * sizeof(void*)) +
                      len_class_.bucket_count() * sizeof(void*) + num_terms_ * sizeof(Term) +
                      terms_.capacity() * sizeof(void*) +
                      slots_.capacity() * sizeof(std::uint32_t) +
                      chunks_.capacity() * sizeof(void*);
  // Arena chunks are counted as far as they are written: the pages of a
  // chunk's unwritten tail are never touched, so they take no memory.
  if (!chunks_.empty()) {
    bytes += ((chunks_.size() - 1) * (static_cast<std::size_t>(1) << kChunkBits) + chunk_used_) * sizeof(std::uint16_t);
  }
  for (const auto& fl : free_) bytes += fl.capacity() * sizeof(std::uint32_t);
  for (const auto& v : big_) bytes += sizeof(v) + v.capacity() * sizeof(std::uint16_t);
  return bytes;
}

}  // namespace spatialobs
