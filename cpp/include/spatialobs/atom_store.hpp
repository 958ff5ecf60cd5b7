// The observations of a state index: each one's metadata key and its two
// sorted atom sets, with the exact-duplicate table (open addressing over
// observation ids) and the batch verifier that scores one query against many
// of them.
//
// Storage: every distinct atom gets a 32-bit term id from a dictionary shared
// by all observations (ids in order of first appearance); an observation's
// sets are its term ids, sorted, as deltas of 1 to 4 bytes with their lengths
// in a separate 2-bit header (the layout of Lemire's Stream VByte, scalar),
// in fixed-size byte chunks, so growing never copies what is stored. Atoms
// that first appear together get neighbouring ids, so most deltas take one or
// two bytes instead of the eight of a raw atom. Set sizes, intersections and
// equality are the same over term ids as over atoms (the mapping is one to
// one), so every score and exact hit is unchanged; atoms() and columns() map
// the ids back and sort by atom. (LEB128, whose lengths sit in the data
// bytes, made decoding a serial chain: verification ran 1.4x slower than
// fixed-width uint32 ids.)
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
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
  std::size_t num_atoms() const { return num_atoms_; }
  // Distinct atoms seen (the dictionary's size).
  std::size_t num_terms() const { return num_terms_; }

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
  // The two sets of an observation, each sorted by atom (id < size()).
  void atoms(std::size_t id, std::vector<std::uint64_t>& control, std::vector<std::uint64_t>& text) const;

  // The columns of the saved form: metadata per observation, and each set
  // kind as offsets (size() + 1, from 0) and values.
  void columns(std::vector<std::uint32_t>& meta, std::vector<std::uint64_t>& control_offsets,
               std::vector<std::uint64_t>& control_values, std::vector<std::uint64_t>& text_offsets,
               std::vector<std::uint64_t>& text_values) const;

  // Bytes held, for memory reports.
  std::size_t memory_bytes() const;

  // Observations whose encoded sets take more bytes than this get an
  // allocation of their own (public for tests that cross the boundary).
  static constexpr std::size_t kChunkBytes = static_cast<std::size_t>(1) << 20;

 private:
  // Where an observation's sets are: control then text, from byte pos of the
  // chunked store (pos >= kBigBase: big_[pos - kBigBase]).
  struct Loc {
    std::uint64_t pos;
    std::uint32_t nc;
    std::uint32_t nt;
  };
  static constexpr std::uint64_t kBigBase = static_cast<std::uint64_t>(1) << 62;
  static constexpr unsigned kKeyChunkBits = 16;  // the id -> atom column grows by chunks, never copied

  // A query's sets as sorted term ids; atoms the dictionary does not know are
  // only counted (they meet no stored set).
  struct Mapped {
    std::vector<std::uint32_t> control, text;
    std::size_t nc = 0, nt = 0;
  };

  static std::uint64_t exact_key(std::uint32_t meta, const std::uint64_t* control, std::size_t nc,
                                 const std::uint64_t* text, std::size_t nt);
  std::int64_t find_term(std::uint64_t key) const;
  std::uint32_t term_for(std::uint64_t key);
  void grow_terms();
  std::uint64_t key_of(std::uint32_t term) const {
    return keys_[term >> kKeyChunkBits][term & ((1u << kKeyChunkBits) - 1)];
  }
  void map_query(const std::uint64_t* control, std::size_t nc, const std::uint64_t* text, std::size_t nt,
                 Mapped& q) const;
  const std::uint8_t* at(std::uint64_t pos) const {
    if (pos >= kBigBase) return big_[pos - kBigBase].get();
    return chunks_[pos / kChunkBytes].get() + pos % kChunkBytes;
  }
  void grow_exact();

  std::vector<std::uint32_t> meta_;
  std::vector<Loc> loc_;
  std::vector<std::unique_ptr<std::uint8_t[]>> chunks_;
  std::size_t chunk_used_ = kChunkBytes;  // bytes used in the last chunk
  std::vector<std::unique_ptr<std::uint8_t[]>> big_;
  std::size_t big_bytes_ = 0;
  std::size_t num_atoms_ = 0;
  std::vector<std::uint32_t> key32_;   // observation -> low 32 bits of its exact key
  std::vector<std::uint32_t> exact_;   // open addressing: observation id + 1, 0 empty
  // The dictionary: term id -> atom in chunks, atom -> term id by open addressing.
  std::vector<std::unique_ptr<std::uint64_t[]>> keys_;
  std::size_t num_terms_ = 0;
  std::vector<std::uint32_t> term_slots_;  // term id + 1, 0 empty
};

}  // namespace spatialobs
