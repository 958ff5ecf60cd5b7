#include "spatialobs/box_index.hpp"

#include "spatialobs/radix_sort.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

namespace spatialobs {

namespace {

// Position of (x, y) on a Hilbert curve over a 2^16 x 2^16 grid. The
// bit-parallel form of the classic rotate-and-reflect walk (one step per bit
// from the top): the prefix XOR-scans below compute every level's rotation
// state at once; it gives the same index as the walk at about a tenth of
// the cost.
inline std::uint32_t hilbert_index(std::uint32_t x, std::uint32_t y) {
  std::uint32_t a = x ^ y;
  std::uint32_t b = 0xFFFFu ^ a;
  std::uint32_t c = 0xFFFFu ^ (x | y);
  std::uint32_t d = x & (y ^ 0xFFFFu);
  std::uint32_t A = a | (b >> 1);
  std::uint32_t B = (a >> 1) ^ a;
  std::uint32_t C = ((c >> 1) ^ (b & (d >> 1))) ^ c;
  std::uint32_t D = ((a & (c >> 1)) ^ (d >> 1)) ^ d;
  a = A, b = B, c = C, d = D;
  A = (a & (a >> 2)) ^ (b & (b >> 2));
  B = (a & (b >> 2)) ^ (b & ((a ^ b) >> 2));
  C ^= (a & (c >> 2)) ^ (b & (d >> 2));
  D ^= (b & (c >> 2)) ^ ((a ^ b) & (d >> 2));
  a = A, b = B, c = C, d = D;
  A = (a & (a >> 4)) ^ (b & (b >> 4));
  B = (a & (b >> 4)) ^ (b & ((a ^ b) >> 4));
  C ^= (a & (c >> 4)) ^ (b & (d >> 4));
  D ^= (b & (c >> 4)) ^ ((a ^ b) & (d >> 4));
  a = A, b = B, c = C, d = D;
  C ^= (a & (c >> 8)) ^ (b & (d >> 8));
  D ^= (b & (c >> 8)) ^ ((a ^ b) & (d >> 8));
  a = C ^ (C >> 1);
  b = D ^ (D >> 1);
  std::uint32_t i0 = x ^ y;
  std::uint32_t i1 = b | (0xFFFFu ^ (i0 | a));
  auto spread = [](std::uint32_t v) {  // interleave with zeros: bit k -> bit 2k
    v = (v | (v << 8)) & 0x00FF00FFu;
    v = (v | (v << 4)) & 0x0F0F0F0Fu;
    v = (v | (v << 2)) & 0x33333333u;
    v = (v | (v << 1)) & 0x55555555u;
    return v;
  };
  return (spread(i1) << 1) | spread(i0);
}

}  // namespace

BoxIndex::BoxIndex(const double* boxes, std::size_t n, std::size_t node_size) : n_(0), node_size_(node_size) {
  if (node_size < kMinNodeSize || node_size > kMaxNodeSize) {
    throw std::invalid_argument("node_size must be between " + std::to_string(kMinNodeSize) + " and " +
                                std::to_string(kMaxNodeSize) + ", got " + std::to_string(node_size));
  }
  std::vector<std::uint64_t> keys, tmp;
  assign(boxes, n, keys, tmp);
}

void BoxIndex::assign(const double* boxes, std::size_t n, std::vector<std::uint64_t>& keys,
                      std::vector<std::uint64_t>& tmp) {
  if (n >= (static_cast<std::size_t>(1) << 32) - 1) {
    throw std::invalid_argument("BoxIndex holds fewer than 2^32 - 1 boxes, got " + std::to_string(n));
  }
  // One pass checks every row (before anything changes: a rejected call
  // leaves the index as it was) and takes the total bounds.
  Rect all{0, 0, 0, 0};
  for (std::size_t i = 0; i < n; ++i) {
    const double* b = boxes + 4 * i;
    // finite and ordered; NaN fails every comparison, an infinity the span test
    const bool ok = b[0] <= b[2] && b[1] <= b[3] && b[2] - b[0] <= std::numeric_limits<double>::max() &&
                    b[3] - b[1] <= std::numeric_limits<double>::max() && std::isfinite(b[0]) && std::isfinite(b[1]);
    if (!ok) check_box_row(b, i);  // throws with the row's message
    const Rect r = rect_at(boxes, i);
    if (i == 0) all = r;
    all.x0 = std::min(all.x0, r.x0);
    all.y0 = std::min(all.y0, r.y0);
    all.x1 = std::max(all.x1, r.x1);
    all.y1 = std::max(all.y1, r.y1);
  }
  n_ = n;
  all_ = all;
  const std::size_t node_size = node_size_;
  items_.resize(n);
  level_end_.clear();
  wide_.clear();

  // One pass copies the boxes, takes the Hilbert key of every center in a
  // 16-bit grid over the total bounds (key << 32 | id, sorted stably on the
  // key bits alone, keeps ids in input order on ties: a deterministic
  // layout), and finds the wide boxes: those covering at least 1/64 of the
  // total bounds and, at the page's density, about 256 boxes or more; the
  // widest kMaxWide of them, by (share, id), so the choice is deterministic.
  // The cut only moves work between the tree and the walks; no result
  // depends on it.
  const double w = all.x1 - all.x0, h = all.y1 - all.y0;
  const double iw = w > 0 ? 1.0 / w : 0.0, ih = h > 0 ? 1.0 / h : 0.0;
  auto share = [&](const Rect& r) {
    return (w > 0 ? (r.x1 - r.x0) * iw : 1.0) * (h > 0 ? (r.y1 - r.y0) * ih : 1.0);
  };
  const double min_share = std::max(1.0 / 64, 256.0 / static_cast<double>(std::max<std::size_t>(n, 1)));
  const bool find_wide = min_share <= 1.0;
  const double sx = w > 0 ? 65535.0 / w : 0.0, sy = h > 0 ? 65535.0 / h : 0.0;
  keys.resize(n);
  for (std::size_t i = 0; i < n; ++i) {
    const Rect r = rect_at(boxes, i);
    items_[i] = r;
    double cx = ((r.x0 + r.x1) * 0.5 - all.x0) * sx;
    double cy = ((r.y0 + r.y1) * 0.5 - all.y0) * sy;
    auto hx = static_cast<std::uint32_t>(std::min(65535.0, std::max(0.0, cx)));
    auto hy = static_cast<std::uint32_t>(std::min(65535.0, std::max(0.0, cy)));
    keys[i] = (static_cast<std::uint64_t>(hilbert_index(hx, hy)) << 32) | i;
    if (find_wide && share(r) >= min_share) wide_.push_back(static_cast<std::uint32_t>(i));
  }
  if (wide_.size() > kMaxWide) {
    std::nth_element(wide_.begin(), wide_.begin() + kMaxWide, wide_.end(), [&](std::uint32_t x, std::uint32_t y) {
      const double sx_ = share(items_[x]), sy_ = share(items_[y]);
      return sx_ > sy_ || (sx_ == sy_ && x < y);
    });
    wide_.resize(kMaxWide);
    std::sort(wide_.begin(), wide_.end());
  }
  if (!wide_.empty()) {  // the tree's keys: every box's but the wide ones'
    std::size_t p = 0;
    for (std::size_t i = 0, next_wide = 0; i < n; ++i) {
      if (next_wide < wide_.size() && wide_[next_wide] == i) {
        ++next_wide;
        continue;
      }
      keys[p++] = keys[i];
    }
    keys.resize(p);
  }
  const std::size_t m = n - wide_.size();
  tree_n_ = m;
  if (m == 0) {
    rects_.clear();
    children_.clear();
    return;
  }

  // Level sizes: leaves, then ceil(previous / node_size) up to a single root;
  // there is always at least one level above the leaves.
  std::size_t count = m, total = m;
  level_end_.push_back(m);
  do {
    count = (count + node_size - 1) / node_size;
    total += count;
    level_end_.push_back(total);
  } while (count != 1);

  detail::radix_sort(keys, tmp, 32);

  rects_.resize(total);
  children_.resize(total);
  for (std::size_t p = 0; p < m; ++p) {
    auto id = static_cast<std::uint32_t>(keys[p] & 0xffffffffu);
    rects_[p] = items_[id];
    children_[p] = id;
  }
  std::size_t pos = m;
  for (std::size_t level = 1; level < level_end_.size(); ++level) {
    std::size_t begin = level == 1 ? 0 : level_end_[level - 2];
    std::size_t end = level_end_[level - 1];
    for (std::size_t c = begin; c < end; c += node_size, ++pos) {
      std::size_t stop = std::min(c + node_size, end);
      Rect u = rects_[c];
      for (std::size_t k = c + 1; k < stop; ++k) {
        u.x0 = std::min(u.x0, rects_[k].x0);
        u.y0 = std::min(u.y0, rects_[k].y0);
        u.x1 = std::max(u.x1, rects_[k].x1);
        u.y1 = std::max(u.y1, rects_[k].y1);
      }
      rects_[pos] = u;
      children_[pos] = static_cast<std::uint32_t>(c);
    }
  }
}

std::vector<std::int64_t> BoxIndex::query(const Rect& q) const {
  std::vector<std::int64_t> out;
  search(q, [&out](std::size_t i) { out.push_back(static_cast<std::int64_t>(i)); });
  std::sort(out.begin(), out.end());
  return out;
}

std::vector<std::int64_t> BoxIndex::query_many(const double* boxes, std::size_t m) const {
  check_boxes(boxes, m, "queries");
  std::vector<std::int64_t> ids, queries;
  for (std::size_t t = 0; t < m; ++t) {
    const std::size_t start = ids.size();
    search(rect_at(boxes, t), [&ids](std::size_t i) { ids.push_back(static_cast<std::int64_t>(i)); });
    std::sort(ids.begin() + static_cast<std::ptrdiff_t>(start), ids.end());
    queries.resize(ids.size(), static_cast<std::int64_t>(t));
  }
  ids.insert(ids.end(), queries.begin(), queries.end());
  return ids;
}

std::vector<std::int64_t> BoxIndex::query_pairs() const {
  std::vector<std::uint64_t> keys;
  join([](const Rect& a, const Rect& b) { return intersects(a, b); },
       [&keys](std::size_t a, std::size_t b, const Rect&, const Rect&) {
         keys.push_back((static_cast<std::uint64_t>(std::min(a, b)) << 32) | std::max(a, b));
       });
  detail::radix_sort(keys);
  return detail::unpack_pairs(keys);
}

}  // namespace spatialobs
