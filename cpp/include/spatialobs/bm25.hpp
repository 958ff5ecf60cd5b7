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
// Speed without changing a bit: documents are grouped by length (a length
// class), and for a term with more postings than there are classes the query
// first tabulates idf * 1 / (1 + K(|d|)) per class, which is the very
// expression above for tf = 1, so the posting loop is a lookup instead of two
// divisions. Documents are scored in blocks of consecutive ids so that the
// accumulators stay in cache; within a block terms are still visited in
// increasing order.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <unordered_map>
#include <utility>
#include <vector>

namespace spatialobs {

class Bm25Index {
 public:
  explicit Bm25Index(double k1 = 1.5, double b = 0.75);

  double k1() const { return k1_; }
  double b() const { return b_; }
  std::size_t size() const { return doc_len_.size(); }
  std::size_t num_terms() const { return postings_.size(); }

  // Adds a document (its atoms in any order; repeats raise tf) and returns its
  // id (0, 1, ...).
  std::uint32_t add(const std::uint64_t* atoms, std::size_t n);

  // The k best documents for the query atoms (repeats ignored), best first,
  // ties to the lower id; documents sharing no atom with the query are never
  // returned. Safe to call from several threads while nothing is added.
  void top_k(const std::uint64_t* query, std::size_t n, std::size_t k, std::vector<std::int64_t>& ids,
             std::vector<double>& scores) const;

  std::size_t memory_bytes() const;

 private:
  struct Posting {
    std::uint32_t doc;
    std::uint32_t tf;
  };
  // Per-query accumulators, reused: a query borrows one from the pool, so
  // concurrent queries never share one and no query pays to zero O(N) memory
  // (only the entries it touched are reset).
  struct Scratch {
    std::vector<double> acc;                // one block of per-document sums
    std::vector<std::uint32_t> touched;     // documents of the block with a nonzero sum
    std::vector<double> norm;               // K(|d|) per length class
    std::vector<double> table;              // per long term: its contribution at tf = 1, per class
    std::vector<std::size_t> cursor;        // per term: next posting to score
    std::vector<std::pair<double, std::uint32_t>> best;  // candidates for the k best
  };
  std::unique_ptr<Scratch> borrow() const;
  void give_back(std::unique_ptr<Scratch> s) const;

  double k1_, b_;
  std::vector<std::uint32_t> doc_len_;
  std::vector<std::uint32_t> doc_class_;   // document -> its length class
  std::vector<std::uint32_t> class_len_;   // length class -> document length
  std::unordered_map<std::uint32_t, std::uint32_t> len_class_;
  std::uint64_t total_len_ = 0;
  std::unordered_map<std::uint64_t, std::vector<Posting>> postings_;
  mutable std::mutex pool_mu_;
  mutable std::vector<std::unique_ptr<Scratch>> pool_;
};

}  // namespace spatialobs
