#include "spatialobs/bm25.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>

namespace spatialobs {

Bm25Index::Bm25Index(double k1, double b) : k1_(k1), b_(b) {
  if (!(std::isfinite(k1) && k1 >= 0)) throw std::invalid_argument("k1 must be finite and >= 0, got " + std::to_string(k1));
  if (!(b >= 0 && b <= 1)) throw std::invalid_argument("b must lie in [0, 1], got " + std::to_string(b));
}

std::uint32_t Bm25Index::add(const std::uint64_t* atoms, std::size_t n) {
  if (doc_len_.size() >= 0xffffffffULL) throw std::invalid_argument("a BM25 index holds fewer than 2^32 documents");
  if (n > 0xffffffffULL) throw std::invalid_argument("a BM25 document holds fewer than 2^32 atoms");
  const auto id = static_cast<std::uint32_t>(doc_len_.size());
  std::vector<std::uint64_t> sorted(atoms, atoms + n);
  std::sort(sorted.begin(), sorted.end());
  for (std::size_t i = 0; i < sorted.size();) {
    std::size_t j = i + 1;
    while (j < sorted.size() && sorted[j] == sorted[i]) ++j;
    postings_[sorted[i]].push_back(Posting{id, static_cast<std::uint32_t>(j - i)});
    i = j;
  }
  doc_len_.push_back(static_cast<std::uint32_t>(n));
  total_len_ += n;
  return id;
}

std::unique_ptr<Bm25Index::Scratch> Bm25Index::borrow() const {
  {
    std::lock_guard<std::mutex> lock(pool_mu_);
    if (!pool_.empty()) {
      std::unique_ptr<Scratch> s = std::move(pool_.back());
      pool_.pop_back();
      return s;
    }
  }
  return std::make_unique<Scratch>();
}

void Bm25Index::give_back(std::unique_ptr<Scratch> s) const {
  std::lock_guard<std::mutex> lock(pool_mu_);
  pool_.push_back(std::move(s));
}

void Bm25Index::top_k(const std::uint64_t* query, std::size_t n, std::size_t k, std::vector<std::int64_t>& ids,
                      std::vector<double>& scores) const {
  ids.clear();
  scores.clear();
  const std::size_t num_docs = doc_len_.size();
  if (num_docs == 0 || k == 0 || n == 0) return;
  std::vector<std::uint64_t> terms(query, query + n);
  std::sort(terms.begin(), terms.end());
  terms.erase(std::unique(terms.begin(), terms.end()), terms.end());

  const double N = static_cast<double>(num_docs);
  const double avgdl = static_cast<double>(total_len_) / N;
  std::unique_ptr<Scratch> scratch = borrow();
  std::vector<double>& acc = scratch->acc;
  std::vector<std::uint32_t>& touched = scratch->touched;
  if (acc.size() < num_docs) acc.resize(num_docs, 0.0);
  touched.clear();
  for (std::uint64_t t : terms) {
    auto it = postings_.find(t);
    if (it == postings_.end()) continue;
    const std::vector<Posting>& plist = it->second;
    const double df = static_cast<double>(plist.size());
    const double idf = std::log(1.0 + (N - df + 0.5) / (df + 0.5));
    for (const Posting& p : plist) {
      const double tf = static_cast<double>(p.tf);
      const double dl = static_cast<double>(doc_len_[p.doc]);
      // Every contribution is > 0 (idf > 0, tf >= 1), so 0 marks an untouched document.
      if (acc[p.doc] == 0.0) touched.push_back(p.doc);
      acc[p.doc] += idf * tf / (tf + k1_ * (1.0 - b_ + b_ * dl / avgdl));
    }
  }
  auto better = [&acc](std::uint32_t x, std::uint32_t y) { return acc[x] > acc[y] || (acc[x] == acc[y] && x < y); };
  const std::size_t m = std::min(k, touched.size());
  if (m < touched.size()) {
    std::nth_element(touched.begin(), touched.begin() + static_cast<std::ptrdiff_t>(m), touched.end(), better);
  }
  std::sort(touched.begin(), touched.begin() + static_cast<std::ptrdiff_t>(m), better);
  ids.reserve(m);
  scores.reserve(m);
  for (std::size_t i = 0; i < m; ++i) {
    ids.push_back(touched[i]);
    scores.push_back(acc[touched[i]]);
  }
  for (std::uint32_t d : touched) acc[d] = 0.0;
  give_back(std::move(scratch));
}

std::size_t Bm25Index::memory_bytes() const {
  std::size_t bytes = doc_len_.capacity() * sizeof(std::uint32_t);
  for (const auto& kv : postings_) bytes += sizeof(kv) + 2 * sizeof(void*) + kv.second.capacity() * sizeof(Posting);
  std::lock_guard<std::mutex> lock(pool_mu_);
  for (const auto& sc : pool_) bytes += sc->acc.capacity() * sizeof(double) + sc->touched.capacity() * sizeof(std::uint32_t);
  return bytes + postings_.bucket_count() * sizeof(void*);
}

}  // namespace spatialobs
