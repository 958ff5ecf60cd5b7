#include "spatialobs/placement.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "spatialobs/mix64.hpp"

namespace spatialobs {

namespace {

// The obstacles of one placement, growing as boxes are placed, in vertical
// strips over the room: a strip keeps the obstacles that cut it sorted by top
// edge and, again, by bottom edge, so that a line walks from a given y through
// the obstacles of the strips under it only. An obstacle cutting more than
// kMaxStrips strips goes to one more list that every line visits instead, so
// that a few wide obstacles do not fill every strip. Obstacles beyond the
// room's sides sit in its outer strips (strip numbers are clamped), so nothing
// is missed.
class ObstacleStrips {
 public:
  static constexpr std::size_t kMaxStrips = 8;

  // The same obstacles sorted by top edge and by bottom edge, with the tallest height among them.
  struct Strip {
    std::vector<Rect> by_top, by_bottom;
    double tallest = 0;

    void add(const Rect& r) {
      by_top.insert(std::upper_bound(by_top.begin(), by_top.end(), r.y0,
                                     [](double y, const Rect& b) { return y < b.y0; }),
                    r);
      by_bottom.insert(std::upper_bound(by_bottom.begin(), by_bottom.end(), r.y1,
                                        [](double y, const Rect& b) { return y < b.y1; }),
                       r);
      tallest = std::max(tallest, r.y1 - r.y0);
    }
  };

  // About sqrt(expected) strips of equal width, so a strip holds about as many
  // obstacles as there are strips.
  ObstacleStrips(const Rect& room, std::size_t expected) : x0_(room.x0) {
    const double w = room.x1 - room.x0;
    const double n = std::ceil(std::sqrt(static_cast<double>(std::min<std::size_t>(expected, std::size_t{1} << 24))));
    if (w > 0 && n > 1) {
      strips_.resize(static_cast<std::size_t>(n));
      width_ = w / n;
    } else {
      strips_.resize(1);
    }
  }

  std::size_t size() const { return boxes_.size(); }
  const Rect& box(std::size_t i) const { return boxes_[i]; }

  void add(const Rect& r) {
    boxes_.push_back(r);
    const std::size_t s0 = strip(r.x0), s1 = strip(r.x1);
    if (s1 - s0 + 1 > kMaxStrips) {
      wide_.add(r);
      return;
    }
    for (std::size_t s = s0; s <= s1; ++s) strips_[s].add(r);
  }

  // The tallest obstacle that may cut [x0, x1] in x.
  double tallest(double x0, double x1) const {
    double t = wide_.tallest;
    for (std::size_t s = strip(x0), e = strip(x1); s <= e; ++s) t = std::max(t, strips_[s].tallest);
    return t;
  }

  // Calls visit(strip) for the wide list and every strip [x0, x1] cuts; every
  // obstacle that cuts [x0, x1] in x (closed) is in one of them.
  template <class Visit>
  void strips_under(double x0, double x1, Visit&& visit) const {
    visit(wide_);
    for (std::size_t s = strip(x0), e = strip(x1); s <= e; ++s) visit(strips_[s]);
  }

 private:
  std::size_t strip(double x) const {
    const std::size_t n = strips_.size();
    if (n == 1) return 0;
    const double t = (x - x0_) / width_;
    if (!(t > 0)) return 0;
    if (t >= static_cast<double>(n)) return n - 1;
    return std::min(static_cast<std::size_t>(t), n - 1);
  }

  double x0_, width_ = 0;
  std::vector<Strip> strips_;
  Strip wide_;
  std::vector<Rect> boxes_;
};

// A candidate line x with the lower bound of its distance; lines are visited by (lb, x, position in
// the candidate list). Lines that tie on (lb, x) are one line (its free y depends on x alone),
// visited once; the position only decides which of -0.0 and 0.0 the corner gets, as in the
// reference solver.
struct Line {
  double lb, x;
  std::size_t pos;
};

// Heap order: the line visited later compares greater, so std::*_heap with it pops the next line.
// A function object, not a function, so that the heap's comparisons are inlined.
struct VisitedLater {
  bool operator()(const Line& a, const Line& b) const {
    if (a.lb != b.lb) return a.lb > b.lb;
    if (a.x != b.x) return a.x > b.x;
    return a.pos > b.pos;
  }
};

// The x of the lines visited for one box: open addressing on the bits of x
// (-0.0 counts as 0.0, as equality does), emptied in O(1) by a generation
// stamp, without an allocation per entry.
class SeenLines {
 public:
  void clear() {
    if (++gen_ == 0) {  // wrapped: forget every stamp
      std::fill(stamp_.begin(), stamp_.end(), 0);
      gen_ = 1;
    }
    count_ = 0;
  }

  // False when x was inserted since the last clear.
  bool insert(double x) {
    if (2 * (count_ + 1) > keys_.size()) grow();
    const std::uint64_t k = bits(x);
    const std::size_t mask = keys_.size() - 1;
    for (std::size_t i = detail::mix64(k) & mask;; i = (i + 1) & mask) {
      if (stamp_[i] != gen_) {
        stamp_[i] = gen_;
        keys_[i] = k;
        ++count_;
        return true;
      }
      if (keys_[i] == k) return false;
    }
  }

 private:
  static std::uint64_t bits(double x) {
    if (x == 0) x = 0.0;
    std::uint64_t k;
    std::memcpy(&k, &x, sizeof k);
    return k;
  }

  void grow() {
    std::vector<std::uint64_t> live;
    for (std::size_t i = 0; i < keys_.size(); ++i)
      if (stamp_[i] == gen_) live.push_back(keys_[i]);
    const std::size_t size = std::max<std::size_t>(64, 2 * keys_.size());
    keys_.assign(size, 0);
    stamp_.assign(size, 0);
    gen_ = 1;
    const std::size_t mask = size - 1;
    for (std::uint64_t k : live) {
      std::size_t i = detail::mix64(k) & mask;
      while (stamp_[i] == gen_) i = (i + 1) & mask;
      stamp_[i] = gen_;
      keys_[i] = k;
    }
  }

  std::vector<std::uint64_t> keys_;
  std::vector<std::uint32_t> stamp_;
  std::uint32_t gen_ = 1;
  std::size_t count_ = 0;
};

// A stretch of one strip's sorted obstacles, walked from `at` towards `stop`.
struct Run {
  const Rect* at;
  const Rect* stop;
};

// Scratch of one place_greedy call.
struct Search {
  std::vector<Line> lines;
  SeenLines seen;
  std::vector<Run> runs;
};

// The y of [lo, hi] nearest to t (ties: the smaller) where a w x h box with
// left edge x overlaps no obstacle with positive area, or none. An obstacle
// cutting the box's x span forbids the open interval (a, b) = (o.y0 - h, o.y1)
// of y; the answer is t (clamped) when t is in none, else the nearer end,
// within [lo, hi], of the union (s, e) of the chain of intervals holding t
// (open intervals that overlap chain; touching ones leave a free point). From
// the intervals holding t, e grows through those with a < e (by increasing
// top edge) and s through those with b > s (by decreasing bottom edge); in
// either walk the order among the strips does not matter, so each strip's run
// is walked on its own until none moves. A walk stops once its end leaves
// [lo, hi], s also once it is farther than e: only obstacles between the
// answer and t are visited.
std::optional<double> nearest_free_y(const ObstacleStrips& obs, double x, double w, double h, double lo, double hi,
                                     double t, std::vector<Run>& runs) {
  t = std::min(std::max(t, lo), hi);
  if (!(w > 0 && h > 0) || !obs.size()) return t;  // a box of zero width or height overlaps nothing
  const double xw = x + w;
  auto blocks = [&](const Rect& o) { return std::min(xw, o.x1) - std::max(x, o.x0) > 0 && o.y1 > o.y0; };
  // An interval spans at most `pad`, so one starting below t - pad ends below t; the
  // margin covers the rounding of y0 - h and of the heights.
  const double tall = obs.tallest(x, xw);
  const double pad = (h + tall) + 1e-9 * (std::abs(t) + h + tall);
  auto first_start_at_least = [h](const std::vector<Rect>& v, double y) {
    return std::lower_bound(v.data(), v.data() + v.size(), y, [h](const Rect& b, double q) { return b.y0 - h < q; });
  };
  // the intervals holding t start in [t - pad, t); each strip's walk upwards for e goes on from there
  double s = t, e = t;
  runs.clear();
  obs.strips_under(x, xw, [&](const ObstacleStrips::Strip& st) {
    const Rect* end = st.by_top.data() + st.by_top.size();
    const Rect* o = first_start_at_least(st.by_top, t - pad);
    for (; o != end && o->y0 - h < t; ++o) {
      if (o->y1 > t && blocks(*o)) {
        s = std::min(s, o->y0 - h);
        e = std::max(e, o->y1);
      }
    }
    runs.push_back(Run{o, end});
  });
  if (!(e > t)) return t;  // t is free
  // e: upwards through the intervals starting at or above t
  for (bool moved = true; moved && e <= hi;) {
    moved = false;
    for (Run& r : runs) {
      for (; r.at != r.stop && r.at->y0 - h < e && e <= hi; ++r.at) {
        moved = true;
        if (blocks(*r.at)) e = std::max(e, r.at->y1);
      }
    }
  }
  const bool e_in = e <= hi;
  if (e_in && t - s > e - t) return e;  // s only moves away from t
  if (s < lo) return e_in ? std::optional<double>(e) : std::nullopt;
  // s: downwards through the intervals ending at or below t (the others hold t or lie above it)
  runs.clear();
  obs.strips_under(x, xw, [&](const ObstacleStrips::Strip& st) {
    const Rect* begin = st.by_bottom.data();
    runs.push_back(Run{std::upper_bound(begin, begin + st.by_bottom.size(), t,
                                        [](double q, const Rect& b) { return q < b.y1; }),
                       begin});
  });
  for (bool moved = true; moved;) {
    if (s < lo) break;
    if (e_in && t - s > e - t) return e;  // s only moves away from t
    moved = false;
    for (Run& r : runs) {
      for (; r.at != r.stop && (r.at - 1)->y1 > s; --r.at) {
        moved = true;
        const Rect& o = *(r.at - 1);
        if (blocks(o)) s = std::min(s, o.y0 - h);
      }
    }
  }
  if (s >= lo && (!e_in || t - s <= e - t)) return s;  // ties go to the smaller
  if (e_in) return e;
  return std::nullopt;
}

// The free upper-left corner nearest to the wish for a w x h box in the room, or none.
std::optional<std::pair<double, double>> nearest_free(double w, double h, double want_x, double want_y,
                                                      const Rect& room, ObstacleStrips& obs, Search& s) {
  const double L = room.x0, T = room.y0, hi_x = room.x1 - w, hi_y = room.y1 - h;
  const double wx = std::min(std::max(want_x, L), hi_x);
  const std::size_t m = obs.size();
  s.lines.clear();
  auto offer = [&](double x, double gy) {
    if (!(x >= L && x <= hi_x)) return;
    const double dx = x - want_x;
    const double dx2 = dx * dx;
    s.lines.push_back(Line{dx2 + gy * gy, x, s.lines.size()});
  };
  offer(wx, 0.0);
  if (m) {
    offer(L, 0.0);
    offer(hi_x, 0.0);
    // a line from an obstacle's edge can only hold the optimum beside that obstacle, so its
    // distance from the wish is at least the gap in x plus the gap to the obstacle's y span
    auto y_gap = [&](const Rect& o) { return std::max(0.0, std::max((o.y0 - h) - want_y, want_y - o.y1)); };
    for (std::size_t i = 0; i < m; ++i) offer(obs.box(i).x1, y_gap(obs.box(i)));
    for (std::size_t i = 0; i < m; ++i) offer(obs.box(i).x0 - w, y_gap(obs.box(i)));
  }
  s.seen.clear();
  std::optional<std::pair<double, double>> best;
  double bd = std::numeric_limits<double>::infinity();
  auto visit = [&](const Line& line) {
    if (!s.seen.insert(line.x)) return;  // a line visited again cannot come nearer
    const double x = line.x, dx = x - want_x, dx2 = dx * dx;
    const double reach = best ? std::sqrt(bd - dx2) : std::numeric_limits<double>::infinity();
    const double ylo = std::max(T, want_y - reach), yhi = std::min(hi_y, want_y + reach);
    if (ylo > yhi) return;
    const std::optional<double> y = nearest_free_y(obs, x, w, h, ylo, yhi, want_y, s.runs);
    if (!y) return;
    const double dy = *y - want_y;
    const double d = dx2 + dy * dy;
    if (d < bd) {
      best = std::make_pair(x, *y);
      bd = d;
    }
  };
  if (s.lines.empty()) return best;
  // The first line is found by a scan and visited; the lines whose bound reaches the distance
  // it gives would end the visit, so only the others go into the heap.
  const auto first = std::min_element(s.lines.begin(), s.lines.end(),
                                      [](const Line& a, const Line& b) { return VisitedLater{}(b, a); });
  const Line line0 = *first;
  *first = s.lines.back();
  s.lines.pop_back();
  if (line0.lb < bd) visit(line0);
  s.lines.erase(std::remove_if(s.lines.begin(), s.lines.end(), [bd](const Line& l) { return l.lb >= bd; }),
                s.lines.end());
  std::make_heap(s.lines.begin(), s.lines.end(), VisitedLater{});
  while (!s.lines.empty()) {
    std::pop_heap(s.lines.begin(), s.lines.end(), VisitedLater{});
    const Line line = s.lines.back();
    s.lines.pop_back();
    if (line.lb >= bd) break;
    visit(line);
  }
  return best;
}

void check_rows(const double* v, std::size_t n, std::size_t width, bool nonnegative, const char* what) {
  for (std::size_t i = 0; i < n * width; ++i) {
    if (!std::isfinite(v[i]) || (nonnegative && v[i] < 0)) {
      throw std::invalid_argument(std::string(what) + " row " + std::to_string(i / width) + " must be finite" +
                                  (nonnegative ? " and >= 0" : "") + ", got " + std::to_string(v[i]));
    }
  }
}

}  // namespace

std::int64_t place_greedy(const PlacementInput& in, double* corners) {
  check_rows(in.sizes, in.n, 2, true, "sizes");
  check_rows(in.wants, in.n, 2, false, "wants");
  check_box(in.room, "room");
  check_boxes(in.obstacles, in.m, "obstacles");
  for (std::size_t k = 0; k < in.n_order; ++k) {
    if (in.order[k] < 0 || static_cast<std::uint64_t>(in.order[k]) >= in.n) {
      throw std::out_of_range("order entry " + std::to_string(k) + " is " + std::to_string(in.order[k]) +
                              ", not a box index in [0, " + std::to_string(in.n) + ")");
    }
  }
  ObstacleStrips obs(in.room, in.m + in.n_order);
  for (std::size_t i = 0; i < in.m; ++i) obs.add(rect_at(in.obstacles, i));
  Search s;
  for (std::size_t k = 0; k < in.n_order; ++k) {
    const auto b = static_cast<std::size_t>(in.order[k]);
    const double w = in.sizes[2 * b], h = in.sizes[2 * b + 1];
    const auto p = nearest_free(w, h, in.wants[2 * b], in.wants[2 * b + 1], in.room, obs, s);
    if (!p) return static_cast<std::int64_t>(b);
    corners[2 * b] = p->first;
    corners[2 * b + 1] = p->second;
    obs.add(Rect{p->first, p->second, p->first + w, p->second + h});
  }
  return -1;
}

}  // namespace spatialobs
