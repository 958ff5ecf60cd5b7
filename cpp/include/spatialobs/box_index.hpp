// A packed static R-tree over n boxes: items sorted along a Hilbert curve of
// their centers, then grouped bottom-up into nodes of `node_size` children
// (the flatbush layout). Built once in O(n log n); queries visit only nodes
// whose bounds can hold an answer.
//
// A few wide boxes (a background, an overlay) stay out of the tree: in a
// leaf, one such box would stretch that leaf and all its ancestors over the
// page, and the join would then pair their other children with every node.
// Queries test them one by one; the join pairs each with the tree by one
// walk, which costs about the number of items it meets.
#pragma once

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <thread>
#include <vector>

#include "spatialobs/box.hpp"

namespace spatialobs {

class BoxIndex {
 public:
  static constexpr std::size_t kDefaultNodeSize = 16;
  static constexpr std::size_t kMinNodeSize = 2;
  static constexpr std::size_t kMaxNodeSize = 64;
  // node_size * (levels + 1) for any allowed node size and n < 2^32.
  static constexpr std::size_t kMaxStack = 2048;
  // At most this many wide boxes (the widest) are kept out of the tree.
  static constexpr std::size_t kMaxWide = 64;

  // Copies the boxes; validates them (see check_boxes). node_size must lie
  // in [kMinNodeSize, kMaxNodeSize] and n below 2^32.
  BoxIndex(const double* boxes, std::size_t n, std::size_t node_size = kDefaultNodeSize);

  // Rebuilds the index over other boxes in place, keeping its node size and
  // reusing its memory (and the caller's keys and tmp, room for the sort), so
  // that a caller building one index per call does not fault in fresh pages.
  // Invalid boxes throw before anything changes.
  void assign(const double* boxes, std::size_t n, std::vector<std::uint64_t>& keys,
              std::vector<std::uint64_t>& tmp);

  std::size_t size() const { return n_; }
  // Bytes of memory held (capacity).
  std::size_t bytes() const {
    return (items_.capacity() + rects_.capacity()) * sizeof(Rect) +
           (children_.capacity() + wide_.capacity()) * sizeof(std::uint32_t) + level_end_.capacity() * sizeof(std::size_t);
  }
  std::size_t node_size() const { return node_size_; }
  const Rect& item(std::size_t i) const { return items_[i]; }
  // Bounds of all items; only meaningful when size() > 0.
  Rect bounds() const { return n_ ? all_ : Rect{0, 0, 0, 0}; }
  // Ids of the boxes kept out of the tree, ascending.
  const std::vector<std::uint32_t>& wide() const { return wide_; }

  // Calls visit(i) for every item whose box intersects q (closed), in no
  // particular order.
  template <class Visit>
  void search(const Rect& q, Visit&& visit) const {
    walk([&q](const Rect& r) { return intersects(r, q); }, visit);
  }

  // Whether stop(i) holds for an item i whose box intersects q (closed): the
  // walk of search, ended at the first such item (the wide boxes last).
  template <class Stop>
  bool search_any(const Rect& q, Stop&& stop) const {
    if (tree_n_ != 0 && intersects(rects_[rects_.size() - 1], q)) {
      std::uint32_t stack[kMaxStack];
      std::uint8_t levels[kMaxStack];
      std::size_t top = 0;
      stack[top] = static_cast<std::uint32_t>(rects_.size() - 1);
      levels[top++] = static_cast<std::uint8_t>(level_end_.size() - 1);
      while (top) {
        --top;
        const std::size_t node = stack[top];
        const std::size_t level = levels[top];
        const std::size_t first = children_[node];
        const std::size_t end = std::min(first + node_size_, level_end_[level - 1]);
        for (std::size_t c = first; c < end; ++c) {
          if (!intersects(rects_[c], q)) continue;
          if (level == 1) {
            if (stop(static_cast<std::size_t>(children_[c]))) return true;
          } else {
            stack[top] = static_cast<std::uint32_t>(c);
            levels[top++] = static_cast<std::uint8_t>(level - 1);
          }
        }
      }
    }
    for (const std::uint32_t w : wide_)
      if (intersects(items_[w], q) && stop(static_cast<std::size_t>(w))) return true;
    return false;
  }

  // Calls visit(i) for every item whose box contains q (closed). A node is
  // skipped unless its bounds contain q, which prunes far more than an
  // intersection search when q is small.
  template <class Visit>
  void search_containing(const Rect& q, Visit&& visit) const {
    walk([&q](const Rect& r) { return contains(r, q); }, visit);
  }

  // Self-join: calls visit(a, b, box_a, box_b) once for every unordered pair
  // of distinct items a != b (in no particular order, either way round;
  // the boxes are passed so the visitor needs no random access) for which
  // keep(box a, box b) holds. keep must be symmetric and monotone: when it
  // holds for two boxes it must hold for any boxes containing them, because
  // it also prunes pairs of nodes. Walks pairs of nodes level by level (a
  // dual-tree traversal), which costs far less than one query per item.
  template <class Keep, class Visit>
  void join(Keep&& keep, Visit&& visit) const {
    if (n_ < 2) return;
    join_tree(keep, visit);
    for (std::size_t p = 0; p < wide_.size(); ++p) join_wide(p, keep, visit);
  }

  // The join in two parts: the pairs of two tree items, and those of wide
  // box wide()[p] (with the tree's items and the wide boxes after it, so
  // always reported as visit(wide()[p], other, ...)). Together they report
  // what join does, so a caller may treat a wide box's pairs apart.
  template <class Keep, class Visit>
  void join_tree(Keep&& keep, Visit&& visit) const {
    join_tree(keep, keep, visit);
  }
  // The same, with the pairs of two items tested by leaf_keep instead of
  // keep (keep still prunes the node pairs and filters each leaf's children
  // against the other leaf's bounds): visit(a, b, ...) for every tree pair
  // for which both keep and leaf_keep hold. leaf_keep must be symmetric; it
  // need not be monotone (a kernel's exact test, say, to visit fewer pairs).
  template <class Keep, class LeafKeep, class Visit>
  void join_tree(Keep&& keep, LeafKeep&& leaf_keep, Visit&& visit) const {
    if (tree_n_ < 2) return;
    std::vector<JoinTask> stack{root_task()};
    while (!stack.empty()) {
      const JoinTask t = stack.back();
      stack.pop_back();
      if (t.level == 1) {
        step(t, keep, leaf_keep, visit, stack);
      } else {
        step(t, keep, keep, visit, stack);
      }
    }
  }
  template <class Keep, class Visit>
  void join_wide(std::size_t p, Keep& keep, Visit& visit) const {
    const std::size_t w = wide_[p];
    const Rect& rw = items_[w];
    walk_tree([&](const Rect& r) { return keep(r, rw); },
              [&](std::size_t i, const Rect& r) { visit(w, i, rw, r); });
    for (std::size_t q = p + 1; q < wide_.size(); ++q) {
      const Rect& rq = items_[wide_[q]];
      if (keep(rw, rq)) visit(w, static_cast<std::size_t>(wide_[q]), rw, rq);
    }
  }

  // The same join on `threads` threads: worker t (0 is the calling thread)
  // reports to make_visit(t), called once per worker before any thread
  // starts. Each pair is reported once, by one worker; which worker, and the
  // order, depend on scheduling. The upper levels are split into node pairs
  // handed out one at a time, so a dense corner does not idle the others.
  template <class Keep, class MakeVisit>
  void join_parallel(Keep&& keep, MakeVisit&& make_visit, std::size_t threads) const {
    if (n_ < 2) return;
    if (threads <= 1) {
      auto visit = make_visit(std::size_t{0});
      join(keep, visit);
      return;
    }
    std::vector<JoinTask> seeds, next;
    if (tree_n_ >= 2) seeds.push_back(root_task());
    auto no_visit = [](std::size_t, std::size_t, const Rect&, const Rect&) {};
    const std::size_t target = 64 * threads;
    // Expand whole frontiers above the leaves: no pair of items is reported
    // here, only node pairs (tasks of level >= 2 push, never visit).
    while (seeds.size() < target) {
      bool grew = false;
      next.clear();
      for (const JoinTask& t : seeds) {
        if (t.level >= 2) {
          step(t, keep, no_visit, next);
          grew = true;
        } else {
          next.push_back(t);
        }
      }
      seeds.swap(next);
      if (!grew) break;
    }
    using Visitor = decltype(make_visit(std::size_t{0}));
    std::vector<Visitor> visits;
    visits.reserve(threads);
    for (std::size_t t = 0; t < threads; ++t) visits.push_back(make_visit(t));
    std::atomic<std::size_t> cursor{0};
    std::vector<std::exception_ptr> errors(threads);
    // tasks: the node pairs, then the walk of each wide box
    const std::size_t tasks = seeds.size() + wide_.size();
    auto work = [&](std::size_t t) {
      try {
        std::vector<JoinTask> stack;
        for (std::size_t i = cursor++; i < tasks; i = cursor++) {
          if (i >= seeds.size()) {
            join_wide(i - seeds.size(), keep, visits[t]);
            continue;
          }
          stack.assign(1, seeds[i]);
          drain(stack, keep, visits[t]);
        }
      } catch (...) {
        errors[t] = std::current_exception();
      }
    };
    std::vector<std::thread> pool;
    pool.reserve(threads - 1);
    for (std::size_t t = 1; t < threads; ++t) pool.emplace_back(work, t);
    work(0);
    for (std::thread& th : pool) th.join();
    for (const std::exception_ptr& e : errors)
      if (e) std::rethrow_exception(e);
  }

  // Sorted item ids intersecting q.
  std::vector<std::int64_t> query(const Rect& q) const;
  // The hits of m query boxes (validated, see check_boxes) in one call: the
  // ids of query(boxes[t]) for t = 0, 1, ..., each query's sorted, beside the
  // query t of each, in row layout [ids..., queries...] (a (2, k) array).
  std::vector<std::int64_t> query_many(const double* boxes, std::size_t m) const;
  // All pairs i < j whose boxes intersect (closed), sorted by (i, j), in
  // row layout: [i0, i1, ..., j0, j1, ...] (a (2, k) array).
  std::vector<std::int64_t> query_pairs() const;

 private:
  struct JoinTask {
    std::uint32_t a, b;
    std::uint32_t level;
  };

  JoinTask root_task() const {
    const auto root = static_cast<std::uint32_t>(rects_.size() - 1);
    return JoinTask{root, root, static_cast<std::uint32_t>(level_end_.size() - 1)};
  }

  template <class Keep, class Visit>
  void drain(std::vector<JoinTask>& stack, Keep& keep, Visit& visit) const {
    while (!stack.empty()) {
      const JoinTask t = stack.back();
      stack.pop_back();
      step(t, keep, visit, stack);
    }
  }

  // One node pair of the join: item pairs go to visit (at the leaves), node
  // pairs that keep() accepts onto `out`.
  template <class Keep, class Visit>
  void step(const JoinTask& t, Keep& keep, Visit& visit, std::vector<JoinTask>& out) const {
    step(t, keep, keep, visit, out);
  }

  // step with the pairs of two children tested by `test` (keep, or at the
  // leaves a join_tree's leaf_keep); the filters against the other node's
  // bounds use keep.
  template <class Keep, class Test, class Visit>
  void step(const JoinTask& t, Keep& keep, Test& test, Visit& visit, std::vector<JoinTask>& out) const {
    const std::size_t below = level_end_[t.level - 1];
    const std::size_t a0 = children_[t.a], a1 = std::min<std::size_t>(a0 + node_size_, below);
    const std::size_t b0 = children_[t.b], b1 = std::min<std::size_t>(b0 + node_size_, below);
    const bool leaf = t.level == 1;
    if (t.a == t.b) {
      std::uint32_t hit[kMaxNodeSize];
      for (std::size_t x = a0; x < a1; ++x) {
        const Rect& rx = rects_[x];
        std::size_t nh = 0;
        for (std::size_t y = x + 1; y < a1; ++y) {  // branch-free, as below
          hit[nh] = static_cast<std::uint32_t>(y);
          nh += test(rx, rects_[y]) ? 1 : 0;
        }
        for (std::size_t h = 0; h < nh; ++h) {
          if (leaf) {
            visit(static_cast<std::size_t>(children_[x]), static_cast<std::size_t>(children_[hit[h]]), rx,
                  rects_[hit[h]]);
          } else {
            out.push_back(JoinTask{static_cast<std::uint32_t>(x), hit[h], t.level - 1});
          }
        }
        // a node paired with itself: the pairs inside its subtree
        if (!leaf) out.push_back(JoinTask{static_cast<std::uint32_t>(x), static_cast<std::uint32_t>(x), t.level - 1});
      }
      return;
    }
    // Children of each side that pass keep() against the other side's node
    // bounds: only those can form a pair (keep is monotone), which turns a
    // node holding one huge box from node_size^2 checks into about node_size.
    std::uint32_t xs[kMaxNodeSize], ys[kMaxNodeSize];
    const Rect& ra = rects_[t.a];
    const Rect& rb = rects_[t.b];
    std::size_t nx = 0, ny = 0;
    // Branch-free filters and cross tests (an unpredictable branch per test
    // costs more than the test): candidates are written unconditionally and
    // kept by advancing the count.
    for (std::size_t x = a0; x < a1; ++x) {
      xs[nx] = static_cast<std::uint32_t>(x);
      nx += keep(rects_[x], rb) ? 1 : 0;
    }
    if (nx == 0) return;
    for (std::size_t y = b0; y < b1; ++y) {
      ys[ny] = static_cast<std::uint32_t>(y);
      ny += keep(ra, rects_[y]) ? 1 : 0;
    }
    std::uint32_t hit[kMaxNodeSize];
    for (std::size_t p = 0; p < nx; ++p) {
      const Rect& rx = rects_[xs[p]];
      std::size_t nh = 0;
      for (std::size_t q = 0; q < ny; ++q) {
        hit[nh] = ys[q];
        nh += test(rx, rects_[ys[q]]) ? 1 : 0;
      }
      for (std::size_t h = 0; h < nh; ++h) {
        if (leaf) {
          visit(static_cast<std::size_t>(children_[xs[p]]), static_cast<std::size_t>(children_[hit[h]]), rx,
                rects_[hit[h]]);
        } else {
          out.push_back(JoinTask{xs[p], hit[h], t.level - 1});
        }
      }
    }
  }

  // Depth-first walk: `keep(rect)` decides, for nodes and items alike,
  // whether to descend or report visit(id); the wide boxes are tested last.
  template <class Keep, class Visit>
  void walk(Keep&& keep, Visit&& visit) const {
    walk_tree(keep, [&visit](std::size_t i, const Rect&) { visit(i); });
    for (const std::uint32_t w : wide_)
      if (keep(items_[w])) visit(static_cast<std::size_t>(w));
  }

  // The walk over the tree's items alone, reporting visit(id, box).
  template <class Keep, class Visit>
  void walk_tree(Keep&& keep, Visit&& visit) const {
    if (tree_n_ == 0) return;
    // An explicit stack on the C++ stack: at most node_size children are
    // pushed per level, so kMaxStack bounds it for node_size <= kMaxNodeSize.
    // No shared scratch, so concurrent queries from several threads are safe.
    std::uint32_t stack[kMaxStack];
    std::uint8_t levels[kMaxStack];
    std::size_t top = 0;
    std::size_t root = rects_.size() - 1;
    if (!keep(rects_[root])) return;
    stack[top] = static_cast<std::uint32_t>(root);
    levels[top++] = static_cast<std::uint8_t>(level_end_.size() - 1);
    while (top) {
      --top;
      std::size_t node = stack[top];
      std::size_t level = levels[top];
      std::size_t first = children_[node];
      std::size_t end = first + node_size_;
      if (end > level_end_[level - 1]) end = level_end_[level - 1];
      if (level == 1) {
        for (std::size_t c = first; c < end; ++c)
          if (keep(rects_[c])) visit(static_cast<std::size_t>(children_[c]), rects_[c]);
      } else {
        for (std::size_t c = first; c < end; ++c)
          if (keep(rects_[c])) {
            stack[top] = static_cast<std::uint32_t>(c);
            levels[top++] = static_cast<std::uint8_t>(level - 1);
          }
      }
    }
  }

  std::size_t n_;
  std::size_t tree_n_ = 0;              // items in the tree: n_ minus the wide ones
  std::size_t node_size_;
  Rect all_{0, 0, 0, 0};                // bounds of every box
  std::vector<Rect> items_;             // input order
  std::vector<Rect> rects_;             // leaves (Hilbert order), then each level up to the root
  std::vector<std::uint32_t> children_; // leaf: item id; node: position of its first child
  std::vector<std::size_t> level_end_;  // end position of each level in rects_
  std::vector<std::uint32_t> wide_;     // ids kept out of the tree, ascending
};

}  // namespace spatialobs
