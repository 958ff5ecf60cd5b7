// Working memory of the pair kernels, kept between calls. A kernel that
// allocates its temporaries afresh on every call spends a large share of its
// time faulting in new pages (a quarter of overlap_pairs at 10^5 boxes); one
// Scratch reused by a caller's successive calls touches pages already mapped.
#pragma once

#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

namespace spatialobs {

// One pair found by a kernel: ids below 2^32 and a value (an area, a gap;
// unused by containment and alignment).
struct PairHit {
  std::uint32_t a, b;
  double v;
};

// A coordinate's order-preserving bits and the box it belongs to.
struct KeyedId {
  std::uint64_t key;
  std::uint32_t id;
};

// The buffers of one alignment kind, so that kinds can run on several threads.
struct LineScratch {
  std::vector<KeyedId> keyed, keyed_tmp;
  std::vector<std::uint64_t> words, words_tmp;  // the sort's 8-byte form: key bits << 32 | id
  std::vector<double> along;
  std::vector<std::pair<double, std::uint32_t>> line;
  std::vector<std::uint64_t> found, found_tmp;  // pairs packed a << 32 | b
};

// Not thread-safe: one Scratch per calling thread (a kernel that runs on
// several threads gives each worker its own buffer inside it). Contents mean
// nothing between calls; only the capacity is kept. release() gives the
// memory back.
class Scratch {
 public:
  // Hit buffer of worker t (0 is the calling thread).
  std::vector<PairHit>& hits(std::size_t t) {
    if (hits_.size() <= t) hits_.resize(t + 1);
    return hits_[t];
  }
  std::vector<std::vector<PairHit>>& all_hits() { return hits_; }
  // Empties every hit buffer and makes room for `workers` of them, so that
  // references to them stay valid while workers fill them.
  void start(std::size_t workers) {
    if (hits_.size() < workers) hits_.resize(workers);
    for (auto& h : hits_) h.clear();
    if (keys_.size() < workers) keys_.resize(workers);
    for (auto& k : keys_) k.clear();
  }
  // Packed-pair buffer of worker t (a << 32 | b), for kernels with no value
  // per pair: half the bytes of a PairHit to move through the sort.
  std::vector<std::uint64_t>& keys(std::size_t t) {
    if (keys_.size() <= t) keys_.resize(t + 1);
    return keys_[t];
  }
  std::vector<std::vector<std::uint64_t>>& all_keys() { return keys_; }
  std::vector<std::uint64_t> keys_tmp;
  LineScratch& lines(std::size_t t) {
    if (lines_.size() <= t) lines_.resize(t + 1);
    return lines_[t];
  }

  std::vector<PairHit> sorted;
  std::vector<std::size_t> counts;
  std::vector<std::uint8_t> flags;
  std::vector<std::uint64_t> bits;
  std::vector<std::uint32_t> ids;  // 4-byte ids grouped before they are written out

  void release() { *this = Scratch(); }

  // Bytes held (capacity, not size).
  std::size_t bytes() const {
    std::size_t b = sorted.capacity() * sizeof(PairHit) + counts.capacity() * sizeof(std::size_t) + flags.capacity() +
                    bits.capacity() * sizeof(std::uint64_t) + ids.capacity() * sizeof(std::uint32_t);
    for (const auto& h : hits_) b += h.capacity() * sizeof(PairHit);
    for (const auto& k : keys_) b += k.capacity() * sizeof(std::uint64_t);
    b += keys_tmp.capacity() * sizeof(std::uint64_t);
    for (const auto& l : lines_) {
      b += (l.keyed.capacity() + l.keyed_tmp.capacity()) * sizeof(KeyedId);
      b += (l.words.capacity() + l.words_tmp.capacity()) * sizeof(std::uint64_t);
      b += l.along.capacity() * sizeof(double);
      b += l.line.capacity() * sizeof(l.line[0]) + (l.found.capacity() + l.found_tmp.capacity()) * sizeof(std::uint64_t);
    }
    return b;
  }

 private:
  std::vector<std::vector<PairHit>> hits_;
  std::vector<std::vector<std::uint64_t>> keys_;
  std::vector<LineScratch> lines_;
};

}  // namespace spatialobs
