#include "spatialobs/atom_store.hpp"

#include <algorithm>
#include <stdexcept>
#include <string>

#include "spatialobs/atoms.hpp"
#include "spatialobs/mix64.hpp"
#include "spatialobs/prefetch.hpp"

namespace spatialobs {

namespace detail {

// Bytes readable past the end of every store buffer (see decode_common).
constexpr std::size_t kPad = 3;

inline unsigned delta_bytes(std::uint32_t d) { return d < (1u << 8) ? 1 : d < (1u << 16) ? 2 : d < (1u << 24) ? 3 : 4; }

// Bytes that put_set writes for n sorted unique ids.
inline std::size_t set_bytes(const std::uint32_t* ids, std::size_t n) {
  std::size_t bytes = (n + 3) / 4;
  std::uint32_t prev = 0;
  for (std::size_t i = 0; i < n; ++i) {
    bytes += delta_bytes(ids[i] - prev);
    prev = ids[i];
  }
  return bytes;
}

// A set as (n + 3) / 4 header bytes holding a 2-bit length code (bytes - 1)
// per id, then the deltas (the first from 0), each in 1 to 4 little-endian
// bytes. Returns the end.
inline std::uint8_t* put_set(std::uint8_t* p, const std::uint32_t* ids, std::size_t n) {
  std::uint8_t* data = p + (n + 3) / 4;
  std::fill(p, data, std::uint8_t{0});
  std::uint32_t prev = 0;
  for (std::size_t i = 0; i < n; ++i) {
    std::uint32_t d = ids[i] - prev;
    prev = ids[i];
    const unsigned len = delta_bytes(d);
    p[i >> 2] = static_cast<std::uint8_t>(p[i >> 2] | ((len - 1) << ((i & 3) * 2)));
    for (unsigned b = 0; b < len; ++b, d >>= 8) *data++ = static_cast<std::uint8_t>(d);
  }
  return data;
}

// Walks a set of n ids at p (advanced past it), calling f(id) in increasing
// order. The lengths come from the header, not from the data, so the loads of
// consecutive ids do not wait for one another; each reads four bytes and
// masks (kPad bytes of slack follow every buffer).
template <class F>
inline void for_each_id(const std::uint8_t*& p, std::size_t n, F&& f) {
  static constexpr std::uint32_t kMask[4] = {0xffu, 0xffffu, 0xffffffu, 0xffffffffu};
  const std::uint8_t* head = p;
  const std::uint8_t* data = p + (n + 3) / 4;
  std::uint32_t v = 0;
  for (std::size_t i = 0; i < n; ++i) {
    const unsigned code = (head[i >> 2] >> ((i & 3) * 2)) & 3u;
    const std::uint32_t x = static_cast<std::uint32_t>(data[0]) | (static_cast<std::uint32_t>(data[1]) << 8) |
                            (static_cast<std::uint32_t>(data[2]) << 16) | (static_cast<std::uint32_t>(data[3]) << 24);
    data += code + 1;
    v += x & kMask[code];
    f(v);
  }
  p = data;
}

// Walks a stored set and counts the ids that the sorted array q holds.
inline std::size_t count_common(const std::uint8_t*& p, std::size_t n, const std::uint32_t* q, std::size_t nq) {
  std::size_t j = 0, k = 0;
  for_each_id(p, n, [&](std::uint32_t v) {
    while (j < nq && q[j] < v) ++j;
    if (j < nq && q[j] == v) {
      ++k;
      ++j;
    }
  });
  return k;
}

}  // namespace detail

std::uint64_t AtomStore::exact_key(std::uint32_t meta, const std::uint64_t* control, std::size_t nc,
                                   const std::uint64_t* text, std::size_t nt) {
  // The set sizes enter the key, so moving an atom from one set to the other
  // changes it.
  std::uint64_t h = detail::mix64(meta ^ (static_cast<std::uint64_t>(nc) << 32));
  for (std::size_t i = 0; i < nc; ++i) h = detail::mix64(h ^ control[i]);
  h = detail::mix64(h ^ nt);
  for (std::size_t i = 0; i < nt; ++i) h = detail::mix64(h ^ text[i]);
  return h;
}

std::int64_t AtomStore::find_term(std::uint64_t key) const {
  if (term_slots_.empty()) return -1;
  const std::size_t mask = term_slots_.size() - 1;
  for (std::size_t i = detail::mix64(key) & mask;; i = (i + 1) & mask) {
    const std::uint32_t s = term_slots_[i];
    if (s == 0) return -1;
    if (key_of(s - 1) == key) return static_cast<std::int64_t>(s - 1);
  }
}

void AtomStore::grow_terms() {
  term_slots_ = detail::grown_slots(term_slots_, 1024, num_terms_,
                                    [this](std::size_t t) { return key_of(static_cast<std::uint32_t>(t)); });
}

std::uint32_t AtomStore::term_for(std::uint64_t key) {
  const std::int64_t found = find_term(key);
  if (found >= 0) return static_cast<std::uint32_t>(found);
  if (num_terms_ >= 0xfffffffeULL) throw std::invalid_argument("an atom store holds fewer than 2^32 - 1 distinct atoms");
  // Load at most 0.7: probes stay short.
  if (10 * (num_terms_ + 1) > 7 * term_slots_.size()) grow_terms();
  const auto t = static_cast<std::uint32_t>(num_terms_);
  if ((t & ((1u << kKeyChunkBits) - 1)) == 0) keys_.emplace_back(new std::uint64_t[1u << kKeyChunkBits]);
  keys_.back()[t & ((1u << kKeyChunkBits) - 1)] = key;
  ++num_terms_;
  const std::size_t mask = term_slots_.size() - 1;
  std::size_t i = detail::mix64(key) & mask;
  while (term_slots_[i] != 0) i = (i + 1) & mask;
  term_slots_[i] = t + 1;
  return t;
}

void AtomStore::map_query(const std::uint64_t* control, std::size_t nc, const std::uint64_t* text, std::size_t nt,
                          Mapped& q) const {
  q.nc = nc;
  q.nt = nt;
  q.control.clear();
  q.text.clear();
  // A query arrives after retrieval has filled the caches with other data, so
  // its atoms' hash slots and keys are cold: each level is requested for every
  // atom before any is read, so that the misses overlap instead of queueing.
  if (!term_slots_.empty()) {
    const std::size_t mask = term_slots_.size() - 1;
    for (std::size_t i = 0; i < nc; ++i) detail::prefetch(&term_slots_[detail::mix64(control[i]) & mask]);
    for (std::size_t i = 0; i < nt; ++i) detail::prefetch(&term_slots_[detail::mix64(text[i]) & mask]);
    const auto key_line = [&](std::uint64_t atom) {
      const std::uint32_t s = term_slots_[detail::mix64(atom) & mask];
      if (s != 0) detail::prefetch(&keys_[(s - 1) >> kKeyChunkBits][(s - 1) & ((1u << kKeyChunkBits) - 1)]);
    };
    for (std::size_t i = 0; i < nc; ++i) key_line(control[i]);
    for (std::size_t i = 0; i < nt; ++i) key_line(text[i]);
  }
  for (std::size_t i = 0; i < nc; ++i) {
    const std::int64_t t = find_term(control[i]);
    if (t >= 0) q.control.push_back(static_cast<std::uint32_t>(t));
  }
  for (std::size_t i = 0; i < nt; ++i) {
    const std::int64_t t = find_term(text[i]);
    if (t >= 0) q.text.push_back(static_cast<std::uint32_t>(t));
  }
  std::sort(q.control.begin(), q.control.end());
  std::sort(q.text.begin(), q.text.end());
}

void AtomStore::grow_exact() {
  std::vector<std::uint32_t> slots(exact_.empty() ? 64 : 2 * exact_.size(), 0);
  const std::size_t mask = slots.size() - 1;
  for (std::size_t id = 0; id < key32_.size(); ++id) {
    std::size_t i = key32_[id] & mask;
    while (slots[i] != 0) i = (i + 1) & mask;
    slots[i] = static_cast<std::uint32_t>(id + 1);
  }
  exact_.swap(slots);
}

std::uint32_t AtomStore::add(std::uint32_t meta, const std::uint64_t* control, std::size_t nc,
                             const std::uint64_t* text, std::size_t nt) {
  if (meta_.size() >= 0xffffffffULL) throw std::invalid_argument("an atom store holds fewer than 2^32 observations");
  if (nc > kMaxSetSize || nt > kMaxSetSize) throw std::invalid_argument("an atom set holds fewer than 2^31 atoms");
  check_atom_set(control, nc, "control atoms");
  check_atom_set(text, nt, "text atoms");
  const auto id = static_cast<std::uint32_t>(meta_.size());
  const std::size_t n = nc + nt;
  // Term ids first (the dictionary grows here), then the encoded size, then
  // the place: an observation never straddles two chunks.
  std::vector<std::uint32_t> ids(n);
  for (std::size_t i = 0; i < nc; ++i) ids[i] = term_for(control[i]);
  for (std::size_t i = 0; i < nt; ++i) ids[nc + i] = term_for(text[i]);
  std::sort(ids.begin(), ids.begin() + static_cast<std::ptrdiff_t>(nc));
  std::sort(ids.begin() + static_cast<std::ptrdiff_t>(nc), ids.end());
  const std::size_t bytes = detail::set_bytes(ids.data(), nc) + detail::set_bytes(ids.data() + nc, nt);
  std::uint64_t pos;
  std::uint8_t* dst;
  if (bytes > kChunkBytes) {
    big_.emplace_back(new std::uint8_t[bytes + detail::kPad]());
    big_bytes_ += bytes;
    pos = kBigBase + (big_.size() - 1);
    dst = big_.back().get();
  } else {
    // A position must name a byte inside a chunk, even for two empty sets.
    if (chunks_.empty() || chunk_used_ + bytes > kChunkBytes || chunk_used_ == kChunkBytes) {
      // The rest of the previous chunk (less than one observation) stays unused.
      chunks_.emplace_back(new std::uint8_t[kChunkBytes + detail::kPad]());
      chunk_used_ = 0;
    }
    pos = (chunks_.size() - 1) * kChunkBytes + chunk_used_;
    dst = chunks_.back().get() + chunk_used_;
    chunk_used_ += bytes;
  }
  detail::put_set(detail::put_set(dst, ids.data(), nc), ids.data() + nc, nt);
  key32_.push_back(static_cast<std::uint32_t>(exact_key(meta, control, nc, text, nt)));
  meta_.push_back(meta);
  loc_.push_back(Loc{pos, static_cast<std::uint32_t>(nc), static_cast<std::uint32_t>(nt)});
  // Load at most 1/2, so that a miss ends after a couple of probes; growing
  // re-inserts every id (from key32_, no set is hashed again), this one too.
  if (2 * meta_.size() > exact_.size()) {
    grow_exact();
  } else {
    const std::size_t mask = exact_.size() - 1;
    std::size_t i = key32_.back() & mask;
    while (exact_[i] != 0) i = (i + 1) & mask;
    exact_[i] = id + 1;
  }
  num_atoms_ += n;
  return id;
}

std::int64_t AtomStore::find_exact(std::uint32_t meta, const std::uint64_t* control, std::size_t nc,
                                   const std::uint64_t* text, std::size_t nt) const {
  if (exact_.empty()) return -1;
  const auto k = static_cast<std::uint32_t>(exact_key(meta, control, nc, text, nt));
  const std::size_t mask = exact_.size() - 1;
  std::int64_t best = -1;
  bool checked = false;
  std::vector<std::uint64_t> keys;
  for (std::size_t i = k & mask; exact_[i] != 0; i = (i + 1) & mask) {
    const std::uint32_t id = exact_[i] - 1;
    if (key32_[id] != k || (best >= 0 && id >= best)) continue;
    if (meta_[id] != meta || loc_[id].nc != nc || loc_[id].nt != nt) continue;
    if (!checked) {
      // Stored sets are sorted and unique: a query that is not equals none of them.
      if (!std::is_sorted(control, control + nc) || std::adjacent_find(control, control + nc) != control + nc ||
          !std::is_sorted(text, text + nt) || std::adjacent_find(text, text + nt) != text + nt) {
        return -1;
      }
      checked = true;
    }
    // The stored atoms, sorted, against the query's (cheaper than mapping the
    // query to term ids through the dictionary).
    const std::uint8_t* p = at(loc_[id].pos);
    keys.clear();
    detail::for_each_id(p, nc, [&](std::uint32_t v) { keys.push_back(key_of(v)); });
    std::sort(keys.begin(), keys.end());
    if (!std::equal(keys.begin(), keys.end(), control)) continue;
    keys.clear();
    detail::for_each_id(p, nt, [&](std::uint32_t v) { keys.push_back(key_of(v)); });
    std::sort(keys.begin(), keys.end());
    if (std::equal(keys.begin(), keys.end(), text)) best = id;
  }
  return best;
}

void AtomStore::atoms(std::size_t id, std::vector<std::uint64_t>& control, std::vector<std::uint64_t>& text) const {
  const std::uint8_t* p = at(loc_[id].pos);
  control.clear();
  text.clear();
  detail::for_each_id(p, loc_[id].nc, [&](std::uint32_t v) { control.push_back(key_of(v)); });
  detail::for_each_id(p, loc_[id].nt, [&](std::uint32_t v) { text.push_back(key_of(v)); });
  std::sort(control.begin(), control.end());
  std::sort(text.begin(), text.end());
}

void AtomStore::columns(std::vector<std::uint32_t>& meta, std::vector<std::uint64_t>& control_offsets,
                        std::vector<std::uint64_t>& control_values, std::vector<std::uint64_t>& text_offsets,
                        std::vector<std::uint64_t>& text_values) const {
  meta = meta_;
  control_offsets.assign(1, 0);
  text_offsets.assign(1, 0);
  control_offsets.reserve(meta_.size() + 1);
  text_offsets.reserve(meta_.size() + 1);
  control_values.clear();
  text_values.clear();
  std::vector<std::uint64_t> c, t;
  for (std::size_t id = 0; id < meta_.size(); ++id) {
    atoms(id, c, t);
    control_values.insert(control_values.end(), c.begin(), c.end());
    text_values.insert(text_values.end(), t.begin(), t.end());
    control_offsets.push_back(control_values.size());
    text_offsets.push_back(text_values.size());
  }
}

VerifyResult AtomStore::verify(const std::uint64_t* control, std::size_t nc, const std::uint64_t* text,
                               std::size_t nt, const std::int64_t* ids, std::size_t k, const Ratio& tau,
                               double* scores, std::uint8_t* pass) const {
  check_threshold(tau);
  for (std::size_t i = 0; i < k; ++i) {
    if (ids[i] < 0 || static_cast<std::size_t>(ids[i]) >= meta_.size()) {
      throw std::out_of_range("candidate " + std::to_string(i) + " is observation " + std::to_string(ids[i]) +
                              ", but the store holds " + std::to_string(meta_.size()));
    }
  }
  VerifyResult best;
  if (k == 0) return best;
  Mapped q;
  map_query(control, nc, text, nt, q);
  // Candidates are scattered over the store, so each one costs a few cache
  // misses (its location, then its sets); they are requested kAhead
  // candidates early (locations) and kAhead / 2 early (sets), so that the
  // misses overlap instead of following one another.
  constexpr std::size_t kAhead = 8;
  for (std::size_t i = 0; i < std::min(k, kAhead); ++i) detail::prefetch(&loc_[static_cast<std::size_t>(ids[i])], sizeof(Loc));
  for (std::size_t i = 0; i < k; ++i) {
    if (i + kAhead < k) detail::prefetch(&loc_[static_cast<std::size_t>(ids[i + kAhead])], sizeof(Loc));
    if (i + kAhead / 2 < k) {
      const Loc& ahead = loc_[static_cast<std::size_t>(ids[i + kAhead / 2])];
      // Headers and mostly one- or two-byte deltas: about 1.5 bytes an id.
      detail::prefetch(at(ahead.pos), std::min<std::size_t>(2 * (static_cast<std::size_t>(ahead.nc) + ahead.nt), 512));
    }
    const Loc& loc = loc_[static_cast<std::size_t>(ids[i])];
    const std::uint8_t* p = at(loc.pos);
    const std::uint64_t ic = detail::count_common(p, loc.nc, q.control.data(), q.control.size());
    const std::uint64_t it = detail::count_common(p, loc.nt, q.text.data(), q.text.size());
    const Ratio r = jaccard_ratio(JaccardCounts{ic, nc + loc.nc - ic, it, nt + loc.nt - it});
    scores[i] = r.value();
    const bool ok = ratio_at_least(r, tau);
    pass[i] = ok ? 1 : 0;
    if (!ok) continue;
    if (best.best < 0 || ratio_greater(r, best.best_score) ||
        (!ratio_greater(best.best_score, r) && ids[i] < ids[best.best])) {
      best.best = static_cast<std::int64_t>(i);
      best.best_score = r;
    }
  }
  return best;
}

std::size_t AtomStore::memory_bytes() const {
  // Chunks count as far as they are written: the pages of the last chunk's
  // unwritten tail are never touched.
  std::size_t bytes = big_bytes_;
  if (!chunks_.empty()) bytes += (chunks_.size() - 1) * kChunkBytes + chunk_used_;
  return bytes + (meta_.capacity() + key32_.capacity() + exact_.capacity() + term_slots_.capacity()) *
                     sizeof(std::uint32_t) +
         loc_.capacity() * sizeof(Loc) + num_terms_ * sizeof(std::uint64_t) +
         (chunks_.capacity() + big_.capacity() + keys_.capacity()) * sizeof(void*);
}

}  // namespace spatialobs
