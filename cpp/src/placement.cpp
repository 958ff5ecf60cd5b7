#include "spatialobs/placement.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>
#include <string>
#include <unordered_set>
#include <utility>
#include <vector>

namespace spatialobs {

namespace {

// The obstacles of one placement, growing as boxes are placed, in vertical
// strips over the room: a strip keeps the obstacles that cut it sorted by top
// edge, so that a line walks from a given y through the obstacles of the
// strips under it only, in order of top edge. An obstacle cutting more than kMaxStrips
// strips goes to one more list that every line visits instead, so that a few
// wide obstacles do not fill every strip. Obstacles beyond the room's sides
// sit in its outer strips (strip numbers are clamped), so nothing is missed.
class ObstacleStrips {
 public:
  static constexpr std::size_t kMaxStrips = 8;

  // Sorted by top edge, with the tallest height among them.
  struct Strip {
    std::vector<Rect> boxes;
    double tallest = 0;

    void add(const Rect& r) {
      const auto at = std::upper_bound(boxes.begin(), boxes.end(), r.y0,
                                       [](double y, const Rect& b) { return y < b.y0; });
      boxes.insert(at, r);
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

// A candidate line x; lines are visited by (lb, x, position in the candidate list).
struct Line {
  double lb, x;
  std::uint32_t pos;
};

// Heap order: the line visited later compares greater, so std::*_heap with it pops the next line.
bool visited_later(const Line& a, const Line& b) {
  if (a.lb != b.lb) return a.lb > b.lb;
  if (a.x != b.x) return a.x > b.x;
  return a.pos > b.pos;
}

// A walk over the obstacles of several strips merged in order of top edge,
// upwards (increasing y) or downwards.
class StripWalk {
 public:
  // Upwards from the first obstacle with y0 - h >= v, or downwards from the
  // last one with y0 - h < v (y0 - h is the start of the y interval the
  // obstacle forbids; it grows with y0).
  void start(const ObstacleStrips& obs, double x0, double x1, double h, double v, bool up) {
    up_ = up;
    runs_.clear();
    obs.strips_under(x0, x1, [&](const ObstacleStrips::Strip& st) {
      const Rect* begin = st.boxes.data();
      const Rect* end = begin + st.boxes.size();
      const Rect* at = std::lower_bound(begin, end, v, [h](const Rect& b, double y) { return b.y0 - h < y; });
      if (up && at != end) runs_.push_back(Run{at, end});
      if (!up && at != begin) runs_.push_back(Run{at, begin});
    });
  }

  // The next obstacle, or nullptr at the end. One in several strips comes once per strip.
  const Rect* next() {
    Run* pick = nullptr;
    for (Run& r : runs_) {
      if (r.at == r.stop) continue;
      const double y = up_ ? r.at->y0 : (r.at - 1)->y0;
      if (!pick || (up_ ? y < (pick->at)->y0 : y > (pick->at - 1)->y0)) pick = &r;
    }
    if (!pick) return nullptr;
    return up_ ? pick->at++ : --pick->at;
  }

 private:
  // Upwards: the next is *at, the run ends at stop. Downwards: the next is at[-1], down to stop.
  struct Run {
    const Rect* at;
    const Rect* stop;
  };
  std::vector<Run> runs_;
  bool up_ = true;
};

// Scratch of one place_greedy call.
struct Search {
  std::vector<Line> lines;
  std::unordered_set<double> seen;
  StripWalk walk;
};

// The y of [lo, hi] nearest to t (ties: the smaller) where a w x h box with
// left edge x overlaps no obstacle with positive area, or none. An obstacle
// cutting the box's x span forbids the open interval (o.y0 - h, o.y1) of y;
// the answer is t (clamped) when t is in none, else the nearer end, within
// [lo, hi], of the union (s, e) of the chain of intervals holding t (open
// intervals that overlap chain; touching ones leave a free point). The chain
// is followed from t through the obstacles sorted by top edge: upwards to e,
// then downwards to s until s leaves [lo, hi] or is farther than e, so only
// obstacles between the answer and t are visited.
std::optional<double> nearest_free_y(const ObstacleStrips& obs, double x, double w, double h, double lo, double hi,
                                     double t, StripWalk& walk) {
  t = std::min(std::max(t, lo), hi);
  if (!(w > 0 && h > 0) || !obs.size()) return t;  // a box of zero width or height overlaps nothing
  const double xw = x + w;
  auto blocks = [&](const Rect& o) { return std::min(xw, o.x1) - std::max(x, o.x0) > 0 && o.y1 > o.y0; };
  // An interval spans at most `pad`, so one starting below v - pad ends below v; the
  // margin covers the rounding of y0 - h and of the heights.
  const double tall = obs.tallest(x, xw);
  const double pad = (h + tall) + 1e-9 * (std::abs(t) + h + tall);
  // e: the intervals holding t start in [t - pad, t); then the chain upwards
  double e = t;
  walk.start(obs, x, xw, h, t, false);
  for (const Rect* o; (o = walk.next()) && o->y0 - h >= t - pad;) {
    if (blocks(*o)) e = std::max(e, o->y1);
  }
  if (!(e > t)) return t;  // t is free
  walk.start(obs, x, xw, h, t, true);
  for (const Rect* o; e <= hi && (o = walk.next()) && o->y0 - h < e;) {
    if (blocks(*o)) e = std::max(e, o->y1);
  }
  const bool e_in = e <= hi;
  // s: downwards from t, an interval reaching the chain's lower end moves it to its start
  double s = t;
  walk.start(obs, x, xw, h, t, false);
  for (const Rect* o; (o = walk.next());) {
    const double a = o->y0 - h;
    if (a < s - pad || s < lo) break;
    if (e_in && t - s > e - t) return e;  // s only moves away from t
    if (a < s && o->y1 > s && blocks(*o)) s = a;
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
    s.lines.push_back(Line{dx2 + gy * gy, x, static_cast<std::uint32_t>(s.lines.size())});
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
  std::make_heap(s.lines.begin(), s.lines.end(), visited_later);
  s.seen.clear();
  std::optional<std::pair<double, double>> best;
  double bd = std::numeric_limits<double>::infinity();
  while (!s.lines.empty()) {
    std::pop_heap(s.lines.begin(), s.lines.end(), visited_later);
    const Line line = s.lines.back();
    s.lines.pop_back();
    if (line.lb >= bd) break;
    if (!s.seen.insert(line.x).second) continue;  // -0.0 and 0.0 are one line, as in the reference
    const double x = line.x, dx = x - want_x, dx2 = dx * dx;
    const double reach = best ? std::sqrt(bd - dx2) : std::numeric_limits<double>::infinity();
    const double ylo = std::max(T, want_y - reach), yhi = std::min(hi_y, want_y + reach);
    if (ylo > yhi) continue;
    const std::optional<double> y = nearest_free_y(obs, x, w, h, ylo, yhi, want_y, s.walk);
    if (!y) continue;
    const double dy = *y - want_y;
    const double d = dx2 + dy * dy;
    if (d < bd) {
      best = std::make_pair(x, *y);
      bd = d;
    }
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
  if (in.m + in.n_order >= (std::size_t{1} << 31)) throw std::invalid_argument("too many obstacles and boxes (2^31)");
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
