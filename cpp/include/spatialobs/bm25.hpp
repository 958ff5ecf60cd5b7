// An incremental BM25 inverted index over atoms (uint64 terms).
//
// Variant: Lucene's BM25 (Kamphuis, de Vries, Boytsov and Lin, "Which BM25
// Do You Mean? A Large-Scale Reproducibility Study of Scoring Variants",
// ECIR 2020, table 1, row "Lucene (default)"), the variant bm25s calls
// "lucene":
//
//   score(q, d) = sum over t in q of  idf(t) * tf(t, d) / (tf(t, d) + k1 * (1 - b + b * |d| / avgdl))
//   idf(t)      = ln(1 + (N - df(t) + 0.5) / (df(t) + 0.5))
//
// N the number of documents, df(t) how many contain t, |d| the number of
// atoms in d (with repeats), avgdl the mean |d|. A query term counts once.
// N, df and avgdl are read at query time, so adding documents one by one
// scores exactly as rebuilding the index from scratch would.
//
// Determinism: query terms are visited in increasing order and a document's
// terms are summed in that order, so equal inputs give bit-equal scores; the
// top-k is ordered by score descending, then document id ascending.
//
// Storage: a posting is the low 16 bits of a doc id (a uint16 word); lists
// are written in increasing doc order, so the high 16 bits change rarely and
// are written only when they change, as an escape: the word 0xffff, then the
// high half, then the low half (a low half of 0xffff is always written that
// way). A list of up to two words sits in its term record; longer ones live
// in a chunked arena of power-of-two blocks (a full block moves to one twice
// its size; its old block is reused, split in halves when a smaller block is
// wanted), terms sit in an open-addressing table; no per-term allocation and
// no copy of the whole index when it grows. Below 65,536 documents no escape
// is ever written and every posting is one word.
//
// Speed without changing a bit: documents are grouped by length (a length
// class), and for a term with more postings than there are classes the query
// first tabulates idf * 1 / (1 + K(|d|)) per class, which is the very
// expression above for tf = 1, so the posting loop is a lookup instead of two
// divisions. Documents are scored in blocks of consecutive ids so that the
// accumulators stay in cache; within a block terms are still visited in
// increasing order.
//
// Selection: a document goes to the candidate buffer only if it scores at
// least a gate, a proven lower bound of the k-th best score. The gate starts
// at the smallest contribution a term held by k documents can make (tf = 1,
// the longest length, less a margin for rounding) and, after each block,
// rises to the lower edge of the highest score bucket (the top 16 bits of the
// double) with k candidates at or above it. Every score is still the full
// sum in term order, so the answer is the exhaustive one bit for bit
// (top_k_exhaustive keeps that algorithm as the oracle). Dynamic pruning of
// postings (MaxScore, WAND) does not pay here: queries are whole screens, and
// the k-th best of a top-200 is about two terms' worth, so no set of terms is
// light enough to skip.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <unordered_map>
#include <utility>
#include <vector>

namespace spatialobs {

class Bm25Index {
 public:
  explicit Bm25Index(double k1 = 1.5, double b = 0.75);

  double k1() const { return k1_; }
  double b() const { return b_; }
  std::size_t size() const { return doc_class_.size(); }
  std::size_t num_terms() const { return num_terms_; }

  // Adds a document (its atoms in any order; repeats raise tf) and returns its
  // id (0, 1, ...).
  std::uint32_t add(const std::uint64_t* atoms, std::size_t n);

  // The k best documents for the query atoms (repeats ignored), best first,
  // ties to the lower id; documents sharing no atom with the query are never
  // returned. Safe to call from several threads while nothing is added.
  void top_k(const std::uint64_t* query, std::size_t n, std::size_t k, std::vector<std::int64_t>& ids,
             std::vector<double>& scores) const;

  // The same answer, bit for bit, from the plain algorithm (every posting of
  // every query term scored, no bound): the oracle of top_k's pruning.
  void top_k_exhaustive(const std::uint64_t* query, std::size_t n, std::size_t k, std::vector<std::int64_t>& ids,
                        std::vector<double>& scores) const;

  std::size_t memory_bytes() const;

  // The floor of any exact scorer of a query, for benchmarks: every posting
  // of the query's distinct terms is decoded and, with scatter, its term's idf
  // added to its document's sum in the same blocks of ids as top_k, each
  // document recorded when first touched and every touched sum read back
  // once; without scatter, the decoded doc ids are only summed (the read of
  // the lists alone). No length normalization, no selection. Returns the
  // postings decoded and a checksum (the sum of the sums, or of the ids).
  std::pair<std::uint64_t, double> posting_floor(const std::uint64_t* query, std::size_t n, bool scatter) const;

  // Lists up to this many words live in the shared arena; longer lists
  // have a vector of their own (public for tests that cross the boundary).
  static constexpr std::uint32_t kMaxArenaBlock = 4096;

 private:
  // One term: its postings are doc ids ascending (encoded as above), a
  // document with tf > 1 repeated tf times (tf is 1 for almost every atom).
  // `len` is the stored length in words, with two flags: kIrregular when the
  // words start with a header (the list holds an escape or a repeat, so its
  // df is not its word count): the df in two words, then the high half of
  // the last posting; and kRepeats when some document holds the term more
  // than once. A list of up to two words is `w` itself; otherwise `w` holds
  // an offset: of words in the arena (capacity: the next power of two >=
  // max(len, 4)) or, for a long list, its index in big_.
  struct Term {
    std::uint64_t key;
    std::uint32_t len;
    std::uint16_t w[2];
    std::uint32_t words() const { return len & kWordsMask; }
    std::uint32_t off() const { return static_cast<std::uint32_t>(w[0]) | static_cast<std::uint32_t>(w[1]) << 16; }
    void set_off(std::uint32_t o) {
      w[0] = static_cast<std::uint16_t>(o);
      w[1] = static_cast<std::uint16_t>(o >> 16);
    }
  };
  static constexpr std::uint32_t kIrregular = 0x80000000u;
  static constexpr std::uint32_t kRepeats = 0x40000000u;
  static constexpr std::uint32_t kWordsMask = 0x3fffffffu;
  static constexpr std::uint32_t kHeaderWords = 3;
  // The df in an irregular list's header (its first two words).
  static std::uint32_t header_df(const std::uint16_t* h) {
    return static_cast<std::uint32_t>(h[0]) | static_cast<std::uint32_t>(h[1]) << 16;
  }
  static void set_header_df(std::uint16_t* h, std::uint32_t df) {
    h[0] = static_cast<std::uint16_t>(df);
    h[1] = static_cast<std::uint16_t>(df >> 16);
  }
  struct ListView {
    const std::uint16_t* p;
    std::size_t n;  // words
    std::uint32_t df;
    bool repeats;  // some document holds the term more than once
  };
  // Per-query accumulators, one per thread shared by every index (so
  // concurrent queries never share one, an index holds none, and no query
  // pays to zero O(N) memory: only the entries it touched are reset). Its
  // size is bounded by a scoring block and the largest query, not by the
  // number of documents; memory_bytes() does not count it.
  struct Scratch {
    bool clean = true;                      // acc is all zeros (false while a query runs)
    std::vector<double> acc;                // one block of per-document sums
    std::vector<std::uint32_t> touched;     // documents of the block with a nonzero sum
    std::vector<double> norm;               // K(|d|) per length class
    std::vector<double> table;              // per long term: its contribution at tf = 1, per class
    std::vector<std::size_t> cursor;        // per term: next word to score
    std::vector<std::uint32_t> high;        // per term: the high half of the doc ids at its cursor
    std::vector<std::pair<double, std::uint32_t>> best;  // candidates for the k best
    std::vector<std::uint32_t> hist;        // candidates per score bucket (top_k's gate)
  };
  static Scratch& thread_scratch();
  void search(const std::uint64_t* query, std::size_t n, std::size_t k, std::vector<std::int64_t>& ids,
              std::vector<double>& scores, bool exhaustive) const;

  std::int64_t find_term(std::uint64_t key) const;
  std::uint32_t term_for(std::uint64_t key);
  void grow_slots();
  void append_posting(Term& t, std::uint32_t doc);
  void append_words(Term& t, const std::uint16_t* w, std::uint32_t k);
  const std::uint16_t* words_of(const Term& t) const;
  std::uint16_t* words_of(Term& t);
  void make_irregular(Term& t);
  std::uint16_t* arena_at(std::uint32_t off) { return chunks_[off >> kChunkBits].get() + (off & kChunkMask); }
  const std::uint16_t* arena_at(std::uint32_t off) const {
    return chunks_[off >> kChunkBits].get() + (off & kChunkMask);
  }
  std::uint32_t arena_alloc(std::uint32_t cap);
  ListView list(std::uint32_t ti) const;
  Term& term(std::size_t i) { return terms_[i >> kTermChunkBits][i & kTermChunkMask]; }
  const Term& term(std::size_t i) const { return terms_[i >> kTermChunkBits][i & kTermChunkMask]; }

  static constexpr unsigned kChunkBits = 20;  // 2 MiB chunks of words: growing never copies postings
  static constexpr std::uint32_t kChunkMask = (1u << kChunkBits) - 1;

  double k1_, b_;
  std::vector<std::uint32_t> doc_class_;   // document -> its length class (its length: class_len_)
  std::vector<std::uint32_t> class_len_;   // length class -> document length
  std::unordered_map<std::uint32_t, std::uint32_t> len_class_;
  std::uint64_t total_len_ = 0;
  // Terms in chunks of 4,096: growing neither copies them nor leaves half a
  // doubled vector unused.
  static constexpr unsigned kTermChunkBits = 12;
  static constexpr std::size_t kTermChunkMask = (static_cast<std::size_t>(1) << kTermChunkBits) - 1;
  std::vector<std::unique_ptr<Term[]>> terms_;
  std::size_t num_terms_ = 0;
  std::vector<std::uint32_t> slots_;       // open addressing: term index + 1, 0 empty
  std::vector<std::unique_ptr<std::uint16_t[]>> chunks_;
  std::uint32_t chunk_used_ = 1u << kChunkBits;  // words used in the last chunk
  static constexpr unsigned kNumClasses = 11;  // block capacities 4 << c, up to kMaxArenaBlock
  std::vector<std::uint32_t> free_[kNumClasses];  // freed arena blocks by capacity class
  std::vector<std::vector<std::uint16_t>> big_;
  std::size_t arena_free_words_ = 0;
};

}  // namespace spatialobs
