#include "spatialobs/atom_store.hpp"

#include <algorithm>
#include <stdexcept>
#include <string>

#include "spatialobs/atoms.hpp"

namespace spatialobs {

namespace detail {

// splitmix64's finalizer: spreads every input bit over the word.
inline std::uint64_t mix64(std::uint64_t x) {
  x ^= x >> 30;
  x *= 0xbf58476d1ce4e5b9ULL;
  x ^= x >> 27;
  x *= 0x94d049bb133111ebULL;
  x ^= x >> 31;
  return x;
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

bool AtomStore::same(std::size_t id, std::uint32_t meta, const std::uint64_t* control, std::size_t nc,
                     const std::uint64_t* text, std::size_t nt) const {
  std::size_t mc = 0, mt = 0;
  const std::uint64_t* c = this->control(id, mc);
  const std::uint64_t* t = this->text(id, mt);
  return meta_[id] == meta && mc == nc && mt == nt && std::equal(c, c + mc, control) && std::equal(t, t + mt, text);
}

std::uint32_t AtomStore::add(std::uint32_t meta, const std::uint64_t* control, std::size_t nc,
                             const std::uint64_t* text, std::size_t nt) {
  if (meta_.size() >= 0xffffffffULL) throw std::invalid_argument("an atom store holds fewer than 2^32 observations");
  if (nc > kMaxSetSize || nt > kMaxSetSize) throw std::invalid_argument("an atom set holds fewer than 2^31 atoms");
  check_atom_set(control, nc, "control atoms");
  check_atom_set(text, nt, "text atoms");
  const auto id = static_cast<std::uint32_t>(meta_.size());
  meta_.push_back(meta);
  control_values_.insert(control_values_.end(), control, control + nc);
  control_offsets_.push_back(control_values_.size());
  text_values_.insert(text_values_.end(), text, text + nt);
  text_offsets_.push_back(text_values_.size());
  exact_.emplace(exact_key(meta, control, nc, text, nt), id);
  return id;
}

std::int64_t AtomStore::find_exact(std::uint32_t meta, const std::uint64_t* control, std::size_t nc,
                                   const std::uint64_t* text, std::size_t nt) const {
  auto range = exact_.equal_range(exact_key(meta, control, nc, text, nt));
  std::int64_t best = -1;
  for (auto it = range.first; it != range.second; ++it) {
    if ((best < 0 || it->second < best) && same(it->second, meta, control, nc, text, nt)) best = it->second;
  }
  return best;
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
  return meta_.capacity() * sizeof(std::uint32_t) +
         (control_offsets_.capacity() + control_values_.capacity() + text_offsets_.capacity() +
          text_values_.capacity()) *
             sizeof(std::uint64_t) +
         exact_.size() * (sizeof(std::uint64_t) + sizeof(std::uint32_t) + 2 * sizeof(void*)) +
         exact_.bucket_count() * sizeof(void*);
}

}  // namespace spatialobs
