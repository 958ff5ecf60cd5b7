// The observations of a state index: each one's metadata key and its two
// sorted atom sets, stored back to back (CSR), with the exact-duplicate table
// and the batch verifier that scores one query against many of them.
#pragma once

#include <cstddef>
#include <cstdint>
#include <unordered_map>
#include <vector>

#include "spatialobs/jaccard.hpp"

namespace spatialobs {

// Result of verifying one query against a batch of candidates.
struct VerifyResult {
  // Position in the candidate batch of the best candidate at or above the
  // threshold (highest exact score, ties to the lower observation id), or
  // -1 when none reaches it.
  std::int64_t best = -1;
  Ratio best_score{0, 1};
};

class AtomStore {
 public:
  // Largest atom set one observation may hold (keeps the exact products of
  // jaccard.hpp within 64 bits).
  static constexpr std::size_t kMaxSetSize = (static_cast<std::size_t>(1) << 31) - 1;

  std::size_t size() const { return meta_.size(); }
  std::size_t num_atoms() const { return control_values_.size() + text_values_.size(); }

  // Appends an observation and returns its id (0, 1, ...). Both sets must be
  // sorted and unique (std::invalid_argument otherwise).
  std::uint32_t add(std::uint32_t meta, const std::uint64_t* control, std::size_t nc, const std::uint64_t* text,
                    std::size_t nt);

  // Id of the first observation with exactly this metadata and these sets,
  // or -1. Hash hits are confirmed by comparing the sets, so a 64-bit hash
  // collision can never merge two different observations.
  std::int64_t find_exact(std::uint32_t meta, const std::uint64_t* control, std::size_t nc, const std::uint64_t* text,
                          std::size_t nt) const;

  // Scores the query against observations ids[0..k): writes each score to
  // scores[i] and whether it reaches tau to pass[i]; returns the best one.
  // Ids out of range throw std::out_of_range before anything is written.
  VerifyResult verify(const std::uint64_t* control, std::size_t nc, const std::uint64_t* text, std::size_t nt,
                      const std::int64_t* ids, std::size_t k, const Ratio& tau, double* scores,
                      std::uint8_t* pass) const;

  std::uint32_t meta(std::size_t id) const { return meta_[id]; }
  const std::uint64_t* control(std::size_t id, std::size_t& n) const {
    n = control_offsets_[id + 1] - control_offsets_[id];
    return control_values_.data() + control_offsets_[id];
  }
  const std::uint64_t* text(std::size_t id, std::size_t& n) const {
    n = text_offsets_[id + 1] - text_offsets_[id];
    return text_values_.data() + text_offsets_[id];
  }

  // Raw columns, for persistence.
  const std::vector<std::uint32_t>& metas() const { return meta_; }
  const std::vector<std::uint64_t>& control_offsets() const { return control_offsets_; }
  const std::vector<std::uint64_t>& control_values() const { return control_values_; }
  const std::vector<std::uint64_t>& text_offsets() const { return text_offsets_; }
  const std::vector<std::uint64_t>& text_values() const { return text_values_; }

  // Bytes held, for memory reports.
  std::size_t memory_bytes() const;

 private:
  static std::uint64_t exact_key(std::uint32_t meta, const std::uint64_t* control, std::size_t nc,
                                 const std::uint64_t* text, std::size_t nt);
  bool same(std::size_t id, std::uint32_t meta, const std::uint64_t* control, std::size_t nc,
            const std::uint64_t* text, std::size_t nt) const;

  std::vector<std::uint32_t> meta_;
  std::vector<std::uint64_t> control_offsets_{0};
  std::vector<std::uint64_t> control_values_;
  std::vector<std::uint64_t> text_offsets_{0};
  std::vector<std::uint64_t> text_values_;
  std::unordered_multimap<std::uint64_t, std::uint32_t> exact_;
};

}  // namespace spatialobs
