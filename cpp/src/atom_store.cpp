#include "spatialobs/atom_store.hpp"

#include <algorithm>
#include <stdexcept>
#include <string>

#include "spatialobs/atoms.hpp"
#include "spatialobs/mix64.hpp"

namespace spatialobs {

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

bool AtomStore::same(std::size_t id, std::uint32_t meta, const std::uint64_t* control, std::size_t nc,
                     const std::uint64_t* text, std::size_t nt) const {
  std::size_t mc = 0, mt = 0;
  const std::uint64_t* c = this->control(id, mc);
  const std::uint64_t* t = this->text(id, mt);
  return meta_[id] == meta && mc == nc && mt == nt && std::equal(c, c + mc, control) && std::equal(t, t + mt, text);
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
  std::uint64_t pos;
  std::uint64_t* dst;
  if (n > kChunkWords) {
    big_.emplace_back(new std::uint64_t[n]);
    big_words_ += n;
    pos = kBigBase + (big_.size() - 1);
    dst = big_.back().get();
  } else {
    // A position must name a word inside a chunk, even for two empty sets.
    if (chunks_.empty() || chunk_used_ + n > kChunkWords || chunk_used_ == kChunkWords) {
      // The rest of the previous chunk (less than one observation) stays unused.
      chunks_.emplace_back(new std::uint64_t[kChunkWords]);
      chunk_used_ = 0;
    }
    pos = (chunks_.size() - 1) * kChunkWords + chunk_used_;
    dst = chunks_.back().get() + chunk_used_;
    chunk_used_ += n;
  }
  std::copy(control, control + nc, dst);
  std::copy(text, text + nt, dst + nc);
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
  for (std::size_t i = k & mask; exact_[i] != 0; i = (i + 1) & mask) {
    const std::uint32_t id = exact_[i] - 1;
    if (key32_[id] == k && (best < 0 || id < best) && same(id, meta, control, nc, text, nt)) best = id;
  }
  return best;
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
  for (std::size_t id = 0; id < meta_.size(); ++id) {
    std::size_t mc = 0, mt = 0;
    const std::uint64_t* c = control(id, mc);
    const std::uint64_t* t = text(id, mt);
    control_values.insert(control_values.end(), c, c + mc);
    text_values.insert(text_values.end(), t, t + mt);
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
  for (std::size_t i = 0; i < k; ++i) {
    std::size_t mc = 0, mt = 0;
    const std::uint64_t* c = this->control(static_cast<std::size_t>(ids[i]), mc);
    const std::uint64_t* t = this->text(static_cast<std::size_t>(ids[i]), mt);
    const Ratio r = jaccard_ratio(jaccard_counts(control, nc, text, nt, c, mc, t, mt));
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
  std::size_t words = big_words_;
  if (!chunks_.empty()) words += (chunks_.size() - 1) * kChunkWords + chunk_used_;
  return words * sizeof(std::uint64_t) + meta_.capacity() * sizeof(std::uint32_t) + loc_.capacity() * sizeof(Loc) +
         (key32_.capacity() + exact_.capacity()) * sizeof(std::uint32_t) +
         (chunks_.capacity() + big_.capacity()) * sizeof(void*);
}

}  // namespace spatialobs
