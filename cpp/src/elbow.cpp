// The elbow router, a port of spatialobs.canvas.document.elbow operation for
// operation (its names in the comments). Boxes are mutated in place as the
// Python mutates them: flipping a box and flipping it back is not always exact,
// and the routes depend on those bits.
#include "spatialobs/elbow.hpp"
#include "spatialobs/segments.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace spatialobs {

namespace elbow_detail {

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kBoundArrowOffset = 10.0;
constexpr double kMinDistance = 0.01;

struct P {
  double x, y;
  double operator[](int i) const { return i == 0 ? x : y; }
  double& operator[](int i) { return i == 0 ? x : y; }
};

// Python's min(a, b) and max(a, b): the first unless the second compares smaller (greater).
inline double pmin(double a, double b) { return b < a ? b : a; }
inline double pmax(double a, double b) { return b > a ? b : a; }

// Python's x ** 2 for a float: the C library's pow, kept a call by the volatile exponent.
inline double psq(double x) {
  volatile double two = 2.0;
  if (x == 0.0) return 0.0;
  const double r = std::pow(std::fabs(x), two);
  if (std::isinf(r) && std::isfinite(x)) throw std::overflow_error("(34, 'Numerical result out of range')");
  return r;
}

// Python's sum() of floats: plain before CPython 3.12, Neumaier's compensated sum since.
double psum(const std::vector<double>& v, HypotVariant variant) {
  if (v.empty()) return 0.0;
  double f = 0.0 + v[0];
  if (variant == HypotVariant::kSplit) {
    for (std::size_t i = 1; i < v.size(); ++i) f += v[i];
    return f;
  }
  double c = 0.0;
  for (std::size_t i = 1; i < v.size(); ++i) {
    const double x = v[i];
    const double t = f + x;
    if (std::fabs(f) >= std::fabs(x)) {
      c += (f - t) + x;
    } else {
      c += (x - t) + f;
    }
    f = t;
  }
  if (c != 0.0 && std::isfinite(c)) f += c;
  return f;
}

inline double manhattan(P a, P b) { return std::fabs(a.x - b.x) + std::fabs(a.y - b.y); }

// _to_page / _from_page
inline P to_page(const double* xf, P p) {
  return {xf[0] + xf[2] * p.x - xf[3] * p.y, xf[1] + xf[3] * p.x + xf[2] * p.y};
}
inline P from_page(const double* xf, P p) {
  const double dx = p.x - xf[0], dy = p.y - xf[1];
  return {xf[2] * dx + xf[3] * dy, -xf[3] * dx + xf[2] * dy};
}

// ------------------------------------------------------------------ boxes, ranges
enum Get { kMinX, kMaxX, kMinY, kMaxY };

struct Box {
  double x = 0, y = 0, w = 0, h = 0;

  static Box of(const std::vector<P>& pts) {
    double x0 = pts[0].x, y0 = pts[0].y, x1 = pts[0].x, y1 = pts[0].y;
    for (std::size_t i = 1; i < pts.size(); ++i) {
      if (pts[i].x < x0) x0 = pts[i].x;
      if (pts[i].x > x1) x1 = pts[i].x;
    }
    for (std::size_t i = 1; i < pts.size(); ++i) {
      if (pts[i].y < y0) y0 = pts[i].y;
      if (pts[i].y > y1) y1 = pts[i].y;
    }
    return {x0, y0, x1 - x0, y1 - y0};
  }
  Box& expand(double d) {
    x -= d;
    y -= d;
    w += 2 * d;
    h += 2 * d;
    return *this;
  }
  double get(Get g) const {
    switch (g) {
      case kMinX: return x;
      case kMaxX: return x + w;
      case kMinY: return y;
      default: return y + h;
    }
  }
  double left() const { return x; }
  double right() const { return x + w; }
  double top() const { return y; }
  double bottom() const { return y + h; }
  P center() const { return {x + w / 2, y + h / 2}; }
  bool contains(P p, double margin = 0.0) const {
    return !(p.x < x - margin || p.y < y - margin || p.x > x + w + margin || p.y > y + h + margin);
  }
};

Box common(const Box& a, const Box& b) {
  const double x0 = pmin(a.x, b.x), y0 = pmin(a.y, b.y);
  return {x0, y0, pmax(a.right(), b.right()) - x0, pmax(a.bottom(), b.bottom()) - y0};
}

struct Range {
  double lo, hi;
};

inline bool within(double v, Range r) { return r.lo <= v && v <= r.hi; }

// _subtract: a minus b, as zero, one or two ranges.
int subtract(Range a, Range b, Range out[2]) {
  if (a.lo <= b.lo && b.hi <= a.hi) {
    out[0] = {a.lo, b.lo};
    out[1] = {b.hi, a.hi};
    return 2;
  }
  if (b.hi <= a.lo || b.lo >= a.hi) {
    out[0] = a;
    return 1;
  }
  if (b.lo <= a.lo && a.hi <= b.hi) return 0;
  if (within(a.lo, b)) {
    out[0] = {b.hi, a.hi};
    return 1;
  }
  if (within(a.hi, b)) {
    out[0] = {a.lo, b.lo};
    return 1;
  }
  return 0;
}

// ------------------------------------------------------------------ polylines
// intersect_segment_segment (segments.hpp)
bool intersect_ss(P a1, P a2, P b1, P b2, P& out) { return detail::intersect_segment_segment(a1, a2, b1, b2, out); }

// intersect_segment_polyline
std::vector<P> intersect_sp(P a, P b, const std::vector<P>& pts, bool closed) {
  std::vector<P> out;
  const std::size_t n = pts.size();
  const std::size_t stop = closed ? n : n - 1;
  for (std::size_t i = 0; i < stop; ++i) {
    P p;
    if (intersect_ss(a, b, pts[i], pts[(i + 1) % n], p)) out.push_back(p);
  }
  return out;
}

// nearest_on_polyline
P nearest(P p, const std::vector<P>& pts, bool closed) {
  double bx = pts[0].x, by = pts[0].y;
  const double d0x = p.x - pts[0].x, d0y = p.y - pts[0].y;
  double best = d0x * d0x + d0y * d0y;
  const std::size_t n = pts.size();
  const std::size_t stop = closed ? n : n - 1;
  for (std::size_t i = 0; i < stop; ++i) {
    const double sx = pts[i].x, sy = pts[i].y;
    const double ex = pts[(i + 1) % n].x, ey = pts[(i + 1) % n].y;
    const double dx = ex - sx, dy = ey - sy;
    const double l2 = dx * dx + dy * dy;
    double nx, ny;
    if (l2 == 0) {
      nx = sx;
      ny = sy;
    } else {
      const double t = ((p.x - sx) * dx + (p.y - sy) * dy) / l2;
      if (t <= 0) {
        nx = sx;
        ny = sy;
      } else if (t >= 1) {
        nx = ex;
        ny = ey;
      } else {
        nx = sx + dx * t;
        ny = sy + dy * t;
      }
    }
    const double d = psq(p.x - nx) + psq(p.y - ny);
    if (d < best) {
      bx = nx;
      by = ny;
      best = d;
    }
  }
  return {bx, by};
}

// _in_polygon: winding number, as tldraw's pointInPolygon
bool in_polygon(P p, const std::vector<P>& pts) {
  int wn = 0;
  const std::size_t n = pts.size();
  for (std::size_t i = 0; i < n; ++i) {
    const P a = pts[i];
    if (a.x == p.x && a.y == p.y) return true;
    const P b = pts[(i + 1) % n];
    const double cr = (b.x - a.x) * (p.y - a.y) - (p.x - a.x) * (b.y - a.y);
    if (a.y <= p.y) {
      if (b.y > p.y && cr > 0) wn += 1;
    } else if (b.y <= p.y && cr < 0) {
      wn -= 1;
    }
  }
  return wn != 0;
}

// _Geom: a bound target's outline in the arrow's frame.
struct Geom {
  std::vector<P> pts;
  bool closed = false;
  Box box;
  HypotVariant variant = HypotVariant::kSplit;

  bool hit(P p, double margin) const {
    if (closed && in_polygon(p, pts)) return true;
    const P q = nearest(p, pts, closed);
    return psq(p.x - q.x) + psq(p.y - q.y) <= margin * margin;
  }
  std::vector<double> lengths() const {
    const std::size_t n = pts.size();
    const std::size_t stop = closed ? n : n - 1;
    std::vector<double> out;
    out.reserve(stop);
    for (std::size_t i = 0; i < stop; ++i) {
      const P a = pts[i], b = pts[(i + 1) % n];
      out.push_back(python_hypot(b.x - a.x, b.y - a.y, variant));
    }
    return out;
  }
  double length() const { return psum(lengths(), variant); }
  P interpolate(double t) const {
    if (t <= 0) return pts[0];
    const std::vector<double> lens = lengths();
    const double goal = t * psum(lens, variant);
    double run = 0.0;
    for (std::size_t i = 0; i < lens.size(); ++i) {
      const double d = lens[i];
      if (run + d >= goal) {
        const P a = pts[i], b = pts[(i + 1) % pts.size()];
        const double k = d != 0.0 ? (goal - run) / d : 0.0;
        return {a.x + (b.x - a.x) * k, a.y + (b.y - a.y) * k};
      }
      run += d;
    }
    return closed ? pts[0] : pts.back();
  }
  double uninterpolate(P p) const {
    const std::size_t n = pts.size();
    const std::size_t stop = closed ? n : n - 1;
    double best = kInf, at = 0.0, run = 0.0;
    for (std::size_t i = 0; i < stop; ++i) {
      const double sx = pts[i].x, sy = pts[i].y;
      const double ex = pts[(i + 1) % n].x, ey = pts[(i + 1) % n].y;
      const double dx = ex - sx, dy = ey - sy;
      const double l2 = dx * dx + dy * dy;
      const double t = l2 == 0 ? 0.0 : pmin(1.0, pmax(0.0, ((p.x - sx) * dx + (p.y - sy) * dy) / l2));
      const double d = python_hypot(p.x - sx - dx * t, p.y - sy - dy * t, variant);
      const double seg = std::sqrt(l2);
      if (d < best) {
        best = d;
        at = run + seg * t;
      }
      run += seg;
    }
    return run != 0.0 ? at / run : 0.0;
  }
};

// ------------------------------------------------------------------ terminals
enum Side : int { kNone = -1, kTop = 0, kRight = 1, kBottom = 2, kLeft = 3, kAxisX = 4, kAxisY = 5 };

constexpr Side kSides[4] = {kRight, kBottom, kLeft, kTop};  // _SIDES
inline Side opposite(Side s) {
  switch (s) {
    case kTop: return kBottom;
    case kRight: return kLeft;
    case kBottom: return kTop;
    default: return kRight;
  }
}

// _Term: tldraw's ElbowArrowTerminal
struct Term {
  bool bound = false;
  Side side = kNone;
  Box bounds;
  const Geom* geom = nullptr;
  P target{0, 0};
  double offset = 0.0;
  double min_end = 0.0;
  bool exact = false;
  bool is_point = false;
  bool edge_snap = false;
};

Side side_of_anchor(double ax, double ay) {
  if (std::fabs(ax - 0.5) < 1e-6 && std::fabs(ay - 0.5) < 1e-6) return kNone;
  if (std::fabs(ax - 0.5) > std::fabs(ay - 0.5) - 0.0001) return ax < 0.5 ? kLeft : kRight;
  return ay < 0.5 ? kTop : kBottom;
}

Term terminal(const ElbowTerminal* t, P free, const double* arrow_xf, bool head, double stroke, double scale,
              Geom& geom, HypotVariant variant) {
  Term out;
  out.min_end = stroke * 3;
  if (t == nullptr) {
    out.bounds = {free.x, free.y, 0.0, 0.0};
    out.target = free;
    out.is_point = true;
    return out;
  }
  std::vector<P> local_pts(t->n_points);
  for (std::size_t i = 0; i < t->n_points; ++i) local_pts[i] = {t->points[2 * i], t->points[2 * i + 1]};
  const Box local = Box::of(local_pts);
  geom.pts.resize(t->n_points);
  for (std::size_t i = 0; i < t->n_points; ++i) geom.pts[i] = from_page(arrow_xf, to_page(t->xf, local_pts[i]));
  geom.closed = t->closed;
  geom.box = Box::of(geom.pts);
  geom.variant = variant;
  const double ax = t->precise ? t->anchor[0] : 0.5;
  const double ay = t->precise ? t->anchor[1] : 0.5;
  out.target = from_page(arrow_xf, to_page(t->xf, {local.x + ax * local.w, local.y + ay * local.h}));
  if (head) out.offset = stroke + t->target_stroke + kBoundArrowOffset * scale;
  if (t->precise) {
    const double rot = std::atan2(t->xf[3], t->xf[2]) - std::atan2(arrow_xf[3], arrow_xf[2]);
    if (rot == 0.0) {
      out.side = side_of_anchor(t->anchor[0], t->anchor[1]);
    } else {
      const double c = std::cos(rot), s = std::sin(rot);
      const double dx = t->anchor[0] - 0.5, dy = t->anchor[1] - 0.5;
      out.side = side_of_anchor(0.5 + dx * c - dy * s, 0.5 + dx * s + dy * c);
    }
  }
  out.bound = true;
  out.bounds = geom.box;
  out.geom = &geom;
  out.exact = t->exact;
  out.edge_snap = t->edge_snap;
  return out;
}

// _to_point
Term to_point(const Term& t) {
  if (t.is_point) return t;
  Term out = t;
  out.side = kNone;
  out.offset = 0.0;
  if (t.edge_snap) {
    out.offset = t.offset;
    if (t.side == kAxisX || t.side == kLeft || t.side == kRight) out.side = kAxisX;
    if (t.side == kAxisY || t.side == kTop || t.side == kBottom) out.side = kAxisY;
  }
  out.bounds = {t.target.x, t.target.y, 0.0, 0.0};
  out.is_point = true;
  return out;
}

// _unclosed: a terminal on an open outline (a line, a stroke) picks its side from the outline's direction.
Term unclosed(Term t, const Term& other, double expand) {
  const Geom* g = t.geom;
  if (g == nullptr || g->closed || g->pts.size() < 2) return t;
  const double length = g->length();
  const double at = g->uninterpolate(t.target);
  const P prev = length != 0.0 ? g->interpolate(at - 0.01 / length) : g->pts[0];
  const P nxt = length != 0.0 ? g->interpolate(at + 0.01 / length) : g->pts.back();
  const double nx = -(nxt.y - prev.y), ny = nxt.x - prev.x;
  const Side axis = std::fabs(nx) > std::fabs(ny) ? kAxisX : kAxisY;
  if (g->box.contains(other.target, expand)) {
    t.side = axis;
    return to_point(t);
  }
  const int i = axis == kAxisX ? 0 : 1;
  const double size = axis == kAxisX ? t.bounds.w : t.bounds.h;
  P lo{0.0, 0.0}, hi{0.0, 0.0};
  lo[i] = t.target[i] - size * 2;
  hi[i] = t.target[i] + size * 2;
  lo[1 - i] = hi[1 - i] = t.target[1 - i];
  double lo_d = 0.0, hi_d = 0.0;
  bool has_lo = false, has_hi = false;
  for (const P& p : intersect_sp(lo, hi, g->pts, g->closed)) {
    if (std::fabs(p[i] - t.target[i]) < 1) continue;
    const double d = std::fabs(p.x - t.target.x) + std::fabs(p.y - t.target.y);
    if (p[i] < t.target[i]) {
      if (d > lo_d) {
        lo_d = d;
        has_lo = true;
      }
    } else if (d > hi_d) {
      hi_d = d;
      has_hi = true;
    }
  }
  const Side lo_edge = axis == kAxisX ? kLeft : kTop;
  const Side hi_edge = axis == kAxisX ? kRight : kBottom;
  Side side = axis;
  if (has_lo && has_hi) {
    side = lo_d > hi_d ? hi_edge : lo_edge;
  } else if (has_lo) {
    side = hi_edge;
  } else if (has_hi) {
    side = lo_edge;
  }
  t.side = side;
  return t;
}

// ------------------------------------------------------------------ edges
struct Edge {
  double value;
  bool has_exp;
  double expanded;
  Range cross;
  double cross_target;
};
using Edges = std::array<std::optional<Edge>, 4>;  // by Side (top, right, bottom, left)

struct SideProps {
  double sign;
  Get main, opposite, cmin, cmax;
  int grow, axis;
};
// _SIDE_PROPS, by Side
constexpr SideProps kSideProps[4] = {
    {-1, kMinY, kMaxY, kMinX, kMaxX, 1, 0},  // top
    {1, kMaxX, kMinX, kMinY, kMaxY, 0, 1},   // right
    {1, kMaxY, kMinY, kMinX, kMaxX, 0, 0},   // bottom
    {-1, kMinX, kMaxX, kMinY, kMaxY, 1, 1},  // left
};

std::optional<Edge> usable_edge(const Term& a, const Term& b, Side side, double expand_len, double min_len,
                                bool same_target) {
  const SideProps& sp = kSideProps[side];
  const bool external = same_target && a.edge_snap && b.edge_snap;
  const double value = a.bounds.get(sp.main);
  const bool has_exp = !a.is_point;
  const double expanded = has_exp ? value + sp.sign * expand_len : 0.0;
  const double v1 = a.bounds.get(sp.cmin), v2 = a.bounds.get(sp.cmax);
  Range cross{pmin(v1, v2), pmax(v1, v2)};
  const double m1 = b.bounds.get(sp.main), m2 = b.bounds.get(sp.opposite);
  double b_range[2] = {pmin(m1, m2), pmax(m1, m2)};
  if (!b.is_point) b_range[sp.grow] -= min_len * 2 * sp.sign;
  const double c1 = b.bounds.get(sp.cmin), c2 = b.bounds.get(sp.cmax);
  const Range b_cross{pmin(c1, c2) - expand_len, pmax(c1, c2) + expand_len};
  if (within(value, {b_range[0], b_range[1]}) && !a.is_point && !b.is_point && !external) {
    Range parts[2];
    const int n = subtract(cross, b_cross, parts);
    if (n == 0) return std::nullopt;
    if (n == 1) {
      cross = parts[0];
    } else {
      cross = parts[0].hi - parts[0].lo > parts[1].hi - parts[1].lo ? parts[0] : parts[1];
    }
  }
  const double ct = a.target[sp.axis];
  if (!within(ct, cross)) return std::nullopt;
  return Edge{value, has_exp, expanded, cross, ct};
}

Edges edges_of(const Term& a, const Term& b, double expand_len, double min_len, bool same_target) {
  Edges e;
  for (Side s : {kTop, kRight, kBottom, kLeft}) e[s] = usable_edge(a, b, s, expand_len, min_len, same_target);
  return e;
}

bool has_usable(const Edges& e, Side side) {
  if (side == kNone) return e[0] || e[1] || e[2] || e[3];
  if (side == kAxisX) return e[kLeft] || e[kRight];
  if (side == kAxisY) return e[kTop] || e[kBottom];
  return e[side].has_value();
}

Side side_to_use(const Term& t, const Term& other, const Edges& e) {
  if (t.side == kNone) return kNone;
  if (t.side == kAxisX) {
    if (t.bounds.center().x > other.bounds.center().x && e[kLeft]) return kLeft;
    return e[kRight] ? kRight : kNone;
  }
  if (t.side == kAxisY) {
    if (t.bounds.center().y > other.bounds.center().y && e[kTop]) return kTop;
    return e[kBottom] ? kBottom : kNone;
  }
  return t.side;
}

// ------------------------------------------------------------------ working info
struct T {
  int x, y;
  bool tr;
};
constexpr T kIdentity{1, 1, false};
constexpr T kRot90{-1, 1, true};
constexpr T kRot180{-1, -1, false};
constexpr T kRot270{1, -1, true};
constexpr T kFlipY{1, -1, false};

void tbox(T t, Box& b) {
  if (t.x == -1) b.x = -(b.x + b.w);
  if (t.y == -1) b.y = -(b.y + b.h);
  if (t.tr) {
    std::swap(b.x, b.y);
    std::swap(b.w, b.h);
  }
}

void flip_cross(std::optional<Edge>& e) {
  if (e) {
    e->cross = {-e->cross.hi, -e->cross.lo};
    e->cross_target = -e->cross_target;
  }
}

void flip_value(std::optional<Edge>& e) {
  if (e) {
    e->value = -e->value;
    if (e->has_exp) e->expanded = -e->expanded;
  }
}

void tedges(T t, Edges& e) {
  if (t.x == -1) {
    std::swap(e[kLeft], e[kRight]);
    flip_cross(e[kTop]);
    flip_cross(e[kBottom]);
    flip_value(e[kLeft]);
    flip_value(e[kRight]);
  }
  if (t.y == -1) {
    std::swap(e[kTop], e[kBottom]);
    flip_cross(e[kLeft]);
    flip_cross(e[kRight]);
    flip_value(e[kTop]);
    flip_value(e[kBottom]);
  }
  if (t.tr) {
    std::swap(e[kLeft], e[kTop]);
    std::swap(e[kRight], e[kBottom]);
  }
}

struct SideW {
  Box original, expanded;
  Edges edges;
  bool is_point;
};

struct Route {
  std::vector<P> points;
  double distance = 0.0;
  bool has_mid = false;
  P mid{0, 0};
};

// _Work: tldraw's ElbowArrowWorkingInfo
struct Work {
  SideW A, B;
  Box common_o, common_e;
  double gap_x, gap_y;
  bool has_mx, has_my;
  double mid_x, mid_y;
  double expand_len;
  double bias[2] = {1.0, 1.0};
  T transform = kIdentity;
  T inverse = kIdentity;
  HypotVariant variant;

  void apply(T t) {
    const T cur = transform;
    int nx = t.x, ny = t.y;
    bool ntr = t.tr;
    if (cur.tr) {
      std::swap(nx, ny);
      ntr = !ntr;
    }
    if (cur.x == -1) nx = -nx;
    if (cur.y == -1) ny = -ny;
    transform = {nx, ny, ntr};
    inverse = ntr ? T{ny, nx, true} : T{nx, ny, ntr};
    for (Box* b : {&A.original, &B.original, &common_o, &A.expanded, &B.expanded, &common_e}) tbox(t, *b);
    tedges(t, A.edges);
    tedges(t, B.edges);
    bias[0] = bias[0] * t.x;
    bias[1] = bias[1] * t.y;
    if (t.tr) std::swap(bias[0], bias[1]);
    if (t.x == -1) {
      gap_x = -gap_x;
      if (has_mx) mid_x = -mid_x;
    }
    if (t.y == -1) {
      gap_y = -gap_y;
      if (has_my) mid_y = -mid_y;
    }
    if (t.tr) {
      std::swap(mid_x, mid_y);
      std::swap(has_mx, has_my);
      std::swap(gap_x, gap_y);
    }
  }
  void reset() { apply(inverse); }
  P vec(double x, double y) const {
    const T t = inverse;
    x = t.x * x;
    y = t.y * y;
    return t.tr ? P{y, x} : P{x, y};
  }
};

// _Builder
class Builder {
 public:
  explicit Builder(const Work& info) : info_(info) {}
  Builder& add(double x, double y) {
    points_.push_back(info_.vec(x, y));
    return *this;
  }
  Builder& midpoint() {
    const P a = points_[points_.size() - 2], b = points_.back();
    has_mid_ = true;
    mid_ = {(a.x + b.x) / 2, (a.y + b.y) / 2};
    return *this;
  }
  std::optional<Route> build() const {
    Route r;
    std::vector<P>& out = r.points;
    for (const P& p0 : points_) {
      if (out.size() < 2) {
        out.push_back(p0);
        continue;
      }
      P& p1 = out[out.size() - 1];
      const P& p2 = out[out.size() - 2];
      const double d1x = std::fabs(p0.x - p1.x), d1y = std::fabs(p0.y - p1.y);
      const double d2x = std::fabs(p0.x - p2.x), d2y = std::fabs(p0.y - p2.y);
      if (d1x < kMinDistance && d1y < kMinDistance) {
      } else if (d1x < kMinDistance && d2x < kMinDistance) {
        p1.y = p0.y;
      } else if (d1y < kMinDistance && d2y < kMinDistance) {
        p1.x = p0.x;
      } else {
        out.push_back(p0);
      }
    }
    std::vector<double> legs;
    for (std::size_t i = 0; i + 1 < out.size(); ++i) {
      legs.push_back(std::fabs(out[i + 1].x - out[i].x) + std::fabs(out[i + 1].y - out[i].y));
    }
    r.distance = psum(legs, info_.variant);
    r.has_mid = has_mid_;
    r.mid = mid_;
    return r;
  }

 private:
  const Work& info_;
  std::vector<P> points_;
  bool has_mid_ = false;
  P mid_{0, 0};
};

// ------------------------------------------------------------------ the route catalogue
using Maybe = std::optional<Route>;

Maybe right_to_left(Work& info) {
  if (!info.A.edges[kRight] || !info.B.edges[kLeft]) return std::nullopt;
  Edge ae = *info.A.edges[kRight], be = *info.B.edges[kLeft];
  if (ae.cross_target > be.cross_target) {
    info.apply(kFlipY);
    ae = *info.A.edges[kRight];
    be = *info.B.edges[kLeft];
  }
  const Box ce = info.common_e;
  if (info.gap_x > 0 && info.has_mx) {
    return Builder(info).add(ae.value, ae.cross_target).add(info.mid_x, ae.cross_target)
        .add(info.mid_x, be.cross_target).midpoint().add(be.value, be.cross_target).build();
  }
  if (!ae.has_exp || !be.has_exp) return std::nullopt;
  if (info.has_my) {
    return Builder(info).add(ae.value, ae.cross_target).add(ae.expanded, ae.cross_target)
        .add(ae.expanded, info.mid_y).add(be.expanded, info.mid_y).midpoint()
        .add(be.expanded, be.cross_target).add(be.value, be.cross_target).build();
  }
  const double d3 = std::fabs(ae.value - ce.right()) + std::fabs(ae.cross_target - ce.bottom()) +
                    std::fabs(ce.right() - be.expanded) + std::fabs(ce.bottom() - be.cross_target) +
                    info.expand_len + 6;
  const double d4 = info.expand_len + std::fabs(ae.cross_target - ce.top()) + std::fabs(ae.expanded - ce.left()) +
                    std::fabs(ce.top() - be.cross_target) + std::fabs(ce.left() - be.value) + 6 + info.bias[1];
  const double d5 = info.gap_x < 0 && info.has_mx
                        ? info.expand_len + std::fabs(ae.cross_target - info.A.expanded.bottom()) + ce.w +
                              std::fabs(info.A.expanded.bottom() - info.B.expanded.top()) +
                              std::fabs(info.B.expanded.top() - be.cross_target) + info.expand_len + 8
                        : kInf;
  if (d3 < d4 && d3 < d5) {
    return Builder(info).add(ae.value, ae.cross_target).add(ce.right(), ae.cross_target)
        .add(ce.right(), ce.bottom()).add(be.expanded, ce.bottom()).add(be.expanded, be.cross_target)
        .add(be.value, be.cross_target).build();
  }
  if (d4 < d5) {
    return Builder(info).add(ae.value, ae.cross_target).add(ae.expanded, ae.cross_target)
        .add(ae.expanded, ce.top()).add(ce.left(), ce.top()).add(ce.left(), be.cross_target)
        .add(be.value, be.cross_target).build();
  }
  if (info.has_mx) {
    return Builder(info).add(ae.value, ae.cross_target).add(ae.expanded, ae.cross_target)
        .add(ae.expanded, info.A.expanded.bottom()).add(info.mid_x, info.A.expanded.bottom())
        .add(info.mid_x, info.B.expanded.top()).midpoint().add(be.expanded, info.B.expanded.top())
        .add(be.expanded, be.cross_target).add(be.value, be.cross_target).build();
  }
  return std::nullopt;
}

Maybe right_to_top(Work& info) {
  if (!info.A.edges[kRight] || !info.B.edges[kTop]) return std::nullopt;
  const Edge ae = *info.A.edges[kRight], be = *info.B.edges[kTop];
  const Box ce = info.common_e;
  const double a_exp = ae.has_exp ? ae.expanded : ae.value;
  const double b_exp = be.has_exp ? be.expanded : be.value;
  if ((ae.cross_target < b_exp && be.cross_target > a_exp) ||
      (info.A.is_point && info.B.expanded.contains(info.A.original.center()))) {
    return Builder(info).add(ae.value, ae.cross_target).add(be.cross_target, ae.cross_target)
        .add(be.cross_target, be.value).build();
  }
  if (info.gap_x > 0 && info.has_mx && be.has_exp) {
    return Builder(info).add(ae.value, ae.cross_target).add(info.mid_x, ae.cross_target)
        .add(info.mid_x, be.expanded).midpoint().add(be.cross_target, be.expanded)
        .add(be.cross_target, be.value).build();
  }
  if (info.gap_y > 0 && ae.has_exp && be.cross_target < ae.expanded && info.has_my) {
    return Builder(info).add(ae.value, ae.cross_target).add(ae.expanded, ae.cross_target)
        .add(ae.expanded, info.mid_y).add(be.cross_target, info.mid_y).midpoint()
        .add(be.cross_target, be.value).build();
  }
  const double l4 = std::fabs(ae.value - ce.right()) + std::fabs(ae.cross_target - ce.top()) +
                    std::fabs(be.cross_target - ce.right()) + std::fabs(be.value - ce.top());
  const double l5 = ae.has_exp && info.has_my && be.has_exp
                        ? std::fabs(ae.value - ae.expanded) + std::fabs(info.B.expanded.left() - ae.expanded) +
                              std::fabs(info.B.expanded.left() - be.cross_target) +
                              std::fabs(ae.cross_target - info.B.expanded.top()) + std::fabs(be.value - be.expanded)
                        : kInf;
  const double l6 = ae.has_exp && info.has_mx && be.has_exp
                        ? std::fabs(ae.value - ce.right()) + std::fabs(ae.cross_target - info.A.expanded.bottom()) +
                              std::fabs(ae.expanded - be.cross_target) +
                              std::fabs(info.A.expanded.bottom() - be.expanded) + std::fabs(be.expanded - be.value)
                        : kInf;
  if (l4 < l5 && l4 < l6) {
    return Builder(info).add(ae.value, ae.cross_target).add(ce.right(), ae.cross_target)
        .add(ce.right(), ce.top()).add(be.cross_target, ce.top()).add(be.cross_target, be.value).build();
  }
  if (be.has_exp && ae.has_exp && info.has_my && l5 < l6) {
    return Builder(info).add(ae.value, ae.cross_target).add(ae.expanded, ae.cross_target)
        .add(ae.expanded, info.mid_y).add(info.B.expanded.left(), info.mid_y).midpoint()
        .add(info.B.expanded.left(), be.expanded).add(be.cross_target, be.expanded)
        .add(be.cross_target, be.value).build();
  }
  if (be.has_exp && ae.has_exp && info.has_mx) {
    return Builder(info).add(ae.value, ae.cross_target).add(ae.expanded, ae.cross_target)
        .add(ae.expanded, info.A.expanded.bottom()).add(info.mid_x, info.A.expanded.bottom())
        .add(info.mid_x, be.expanded).midpoint().add(be.cross_target, be.expanded)
        .add(be.cross_target, be.value).build();
  }
  return std::nullopt;
}

Maybe right_to_bottom(Work& info) {
  info.apply(kFlipY);
  return right_to_top(info);
}

Maybe right_to_right(Work& info) {
  if (!info.A.edges[kRight] || !info.B.edges[kRight]) return std::nullopt;
  const Edge ae = *info.A.edges[kRight], be = *info.B.edges[kRight];
  const Box ce = info.common_e;
  if ((info.gap_x <= 0 || ae.cross_target > info.B.expanded.bottom() || ae.cross_target < info.B.expanded.top()) &&
      (be.value > info.A.original.left() || be.cross_target > info.A.expanded.bottom() ||
       be.cross_target < info.A.expanded.top())) {
    return Builder(info).add(ae.value, ae.cross_target).add(ce.right(), ae.cross_target)
        .add(ce.right(), be.cross_target).add(be.value, be.cross_target).build();
  }
  if (!info.has_mx) return std::nullopt;
  if (be.has_exp && info.gap_x >= 0) {
    const double via_b = std::fabs(be.cross_target - info.B.expanded.bottom()) +
                         std::fabs(ae.cross_target - info.B.expanded.bottom());
    const double via_t = std::fabs(be.cross_target - info.B.expanded.top()) +
                         std::fabs(ae.cross_target - info.B.expanded.top());
    const double y = via_b < via_t ? info.B.expanded.bottom() : info.B.expanded.top();
    return Builder(info).add(ae.value, ae.cross_target).add(info.mid_x, ae.cross_target).add(info.mid_x, y)
        .midpoint().add(be.expanded, y).add(be.expanded, be.cross_target).add(be.value, be.cross_target).build();
  }
  if (ae.has_exp && info.gap_x <= 0) {
    const double via_b = std::fabs(be.cross_target - info.A.expanded.bottom()) +
                         std::fabs(ae.cross_target - info.A.expanded.bottom());
    const double via_t = std::fabs(be.cross_target - info.A.expanded.top()) +
                         std::fabs(ae.cross_target - info.A.expanded.top());
    const double y = via_b < via_t ? info.A.expanded.bottom() : info.A.expanded.top();
    return Builder(info).add(ae.value, ae.cross_target).add(ae.expanded, ae.cross_target).add(ae.expanded, y)
        .add(info.mid_x, y).add(info.mid_x, be.cross_target).midpoint().add(be.value, be.cross_target).build();
  }
  return std::nullopt;
}

enum Fn { kToLeft, kToTop, kToBottom, kToRight };
struct RouteKind {
  T t;
  Fn fn;
};
// _ROUTES[a][b], by Side (top, right, bottom, left)
constexpr RouteKind kRoutes[4][4] = {
    {{kRot270, kToRight}, {kRot270, kToBottom}, {kRot270, kToLeft}, {kRot270, kToTop}},          // top
    {{kIdentity, kToTop}, {kIdentity, kToRight}, {kIdentity, kToBottom}, {kIdentity, kToLeft}},  // right
    {{kRot90, kToLeft}, {kRot90, kToTop}, {kRot90, kToRight}, {kRot90, kToBottom}},              // bottom
    {{kRot180, kToBottom}, {kRot180, kToLeft}, {kRot180, kToTop}, {kRot180, kToRight}},          // left
};

Maybe try_route(Work& info, Side a, Side b) {
  const RouteKind& k = kRoutes[a][b];
  info.apply(k.t);
  Maybe r;
  switch (k.fn) {
    case kToLeft: r = right_to_left(info); break;
    case kToTop: r = right_to_top(info); break;
    case kToBottom: r = right_to_bottom(info); break;
    default: r = right_to_right(info); break;
  }
  info.reset();
  return r;
}

Maybe pick_best(Work& info, const std::vector<std::pair<Side, Side>>& pairs) {
  Maybe best;
  double best_n = kInf, best_d = kInf;
  int bias = 0;
  for (const auto& [a, b] : pairs) {
    bias += 1;
    Maybe r = try_route(info, a, b);
    if (!r) continue;
    const double n = static_cast<double>(r->points.size());
    if (n < best_n) {
      best_n = n;
      best_d = r->distance;
      best = std::move(r);
    } else if (n == best_n && r->distance + bias < best_d) {
      best_d = r->distance;
      best = std::move(r);
    }
  }
  return best;
}

inline double exp_of(const Edge& e) { return e.has_exp ? e.expanded : e.value; }

Maybe auto_route(Work& info) {
  Maybe ideal;
  if (std::fabs(info.gap_x) + 1 > std::fabs(info.gap_y) && info.has_mx) {
    ideal = info.gap_x > 0 ? try_route(info, kRight, kLeft) : try_route(info, kLeft, kRight);
  } else {
    const std::optional<Edge> ar = info.A.edges[kRight], al = info.A.edges[kLeft];
    const std::optional<Edge> bt = info.B.edges[kTop], bb = info.B.edges[kBottom];
    if (info.A.is_point && info.B.is_point) {
      ideal = info.gap_y > 0 ? try_route(info, kBottom, kTop) : try_route(info, kTop, kBottom);
    } else if (ar && bt && exp_of(*ar) <= bt->cross_target && ar->cross_target <= exp_of(*bt)) {
      ideal = try_route(info, kRight, kTop);
    } else if (ar && bb && exp_of(*ar) <= bb->cross_target && ar->cross_target >= exp_of(*bb)) {
      ideal = try_route(info, kRight, kBottom);
    } else if (al && bt && exp_of(*al) >= bt->cross_target && al->cross_target <= exp_of(*bt)) {
      ideal = try_route(info, kLeft, kTop);
    } else if (al && bb && exp_of(*al) >= bb->cross_target && al->cross_target >= exp_of(*bb)) {
      ideal = try_route(info, kLeft, kBottom);
    } else if (info.gap_y > 0 && info.has_my) {
      ideal = try_route(info, kBottom, kTop);
    } else if (info.gap_y < 0 && info.has_my) {
      ideal = try_route(info, kTop, kBottom);
    }
  }
  if (ideal) return ideal;
  std::vector<std::pair<Side, Side>> pairs;
  for (Side a : kSides) {
    if (!info.A.edges[a]) continue;
    for (Side b : kSides) {
      if (info.B.edges[b]) pairs.emplace_back(a, b);
    }
  }
  return pick_best(info, pairs);
}

Maybe partial_route(Work& info, Side a_side) {
  Maybe ideal;
  const std::optional<Edge> ar = info.A.edges[kRight], al = info.A.edges[kLeft];
  const std::optional<Edge> bt = info.B.edges[kTop], bb = info.B.edges[kBottom];
  if (a_side == kRight) {
    if (info.gap_x > 0 && info.gap_x > std::fabs(info.gap_y) && info.has_mx) {
      ideal = try_route(info, kRight, kLeft);
    } else if (ar && bt && exp_of(*ar) <= bt->cross_target && ar->cross_target <= exp_of(*bt)) {
      ideal = try_route(info, kRight, kTop);
    } else if (ar && bb && exp_of(*ar) <= bb->cross_target && ar->cross_target >= exp_of(*bb)) {
      ideal = try_route(info, kRight, kBottom);
    }
  } else if (a_side == kLeft) {
    if (info.gap_x < 0 && std::fabs(info.gap_x) > std::fabs(info.gap_y) && info.has_mx) {
      ideal = try_route(info, kLeft, kRight);
    } else if (al && bt && exp_of(*al) >= bt->cross_target && al->cross_target <= exp_of(*bt)) {
      ideal = try_route(info, kLeft, kTop);
    } else if (al && bb && exp_of(*al) >= bb->cross_target && al->cross_target >= exp_of(*bb)) {
      ideal = try_route(info, kLeft, kBottom);
    }
  }
  if (ideal) return ideal;
  static constexpr Side order[4][4] = {
      {kBottom, kRight, kLeft, kTop},  // top
      {kLeft, kBottom, kRight, kTop},  // right
      {kTop, kRight, kLeft, kBottom},  // bottom
      {kRight, kBottom, kLeft, kTop},  // left
  };
  std::vector<std::pair<Side, Side>> pairs;
  for (Side b : order[a_side]) pairs.emplace_back(a_side, b);
  return pick_best(info, pairs);
}

Maybe manual_route(Work& info, Side a_side, Side b_side) {
  Maybe r = try_route(info, a_side, b_side);
  if (r) return r;
  const Side oa = opposite(a_side), ob = opposite(b_side);
  if (info.A.is_point && info.B.is_point) return pick_best(info, {{oa, ob}, {a_side, ob}, {oa, b_side}});
  if (info.A.is_point) return try_route(info, oa, b_side);
  if (info.B.is_point) return try_route(info, a_side, ob);
  return std::nullopt;
}

// ------------------------------------------------------------------ finishing the ends
void cast(bool first, const Term& t, const Term& other, Route& route) {
  const Geom* g = t.geom;
  if (g == nullptr) return;
  std::vector<P>& pts = route.points;
  const std::size_t i1 = first ? 0 : pts.size() - 1;
  const std::size_t i2 = first ? 1 : pts.size() - 2;
  const P p2t = pts[i2];
  const P probe = g->closed ? p2t : t.target;
  const double initial = manhattan(pts[i1], probe);
  bool has_nearest = false;
  P nearest_pt{0, 0};
  if (t.exact) {
    nearest_pt = t.target;
    has_nearest = true;
  } else {
    std::vector<P> hits = intersect_sp(p2t, t.target, g->pts, g->closed);
    if (g->hit(t.target, pmax(1.0, t.offset))) hits.push_back(t.target);
    double best = kInf;
    for (const P& h : hits) {
      const double d = manhattan(probe, h);
      if (d < best) {
        best = d;
        nearest_pt = h;
        has_nearest = true;
      }
    }
  }
  if (!has_nearest) return;
  double offset = t.offset;
  const double seg = manhattan(p2t, nearest_pt);
  if (seg < t.offset * 2) offset = seg - (t.offset * 2 - t.offset);
  if (offset < t.min_end) offset = g->box.contains(other.target) ? pmax(0.0, offset) : -t.offset;
  P moved = nearest_pt;
  bool extra = false;
  if (!t.exact && offset != 0) {
    const double dx = p2t.x - nearest_pt.x, dy = p2t.y - nearest_pt.y;
    const double n = python_hypot(dx, dy, g->variant);
    const P nudged = n != 0.0 ? P{nearest_pt.x + dx / n * offset, nearest_pt.y + dy / n * offset} : nearest_pt;
    if (offset < 0 && !g->hit(nudged, 0.0)) {
      moved = nearest_pt;
    } else {
      extra = offset < 0;
      moved = nudged;
    }
  }
  route.distance += manhattan(p2t, moved) - initial;
  pts[i1] = moved;
  if (extra) {
    const P mid{(pts[i2].x + pts[i1].x) / 2, (pts[i2].y + pts[i1].y) / 2};
    pts.insert(pts.begin() + static_cast<std::ptrdiff_t>(first ? 1 : pts.size() - 1), mid);
  }
}

void fix_nubs(Route& route, const Term& a, const Term& b) {
  std::vector<P>& pts = route.points;
  if (pts.size() >= 3) {
    const P p = pts[0], q = pts[1];
    if (manhattan(p, q) < a.min_end) {
      pts.erase(pts.begin() + 1);
      if (pts.size() >= 3) {
        const int i = std::fabs(p.x - q.x) < 1e-6 ? 1 : 0;
        pts[1][i] = p[i];
      }
    }
  }
  if (pts.size() >= 3) {
    const P p = pts[pts.size() - 1], q = pts[pts.size() - 2];
    if (manhattan(p, q) < b.min_end) {
      pts.erase(pts.end() - 2);
      if (pts.size() >= 3) {
        const int i = std::fabs(p.x - q.x) < 1e-6 ? 1 : 0;
        pts[pts.size() - 2][i] = p[i];
      }
    }
  }
}

void check_terminal(const ElbowTerminal* t, const char* name) {
  if (t == nullptr) return;
  if (t->n_points == 0 || t->points == nullptr) {
    throw std::invalid_argument(std::string(name) + " outline has no points");
  }
}

// elbow_route's body, inside this file's namespace so that its short names (P, Box, Term)
// never meet another source's in the unity build.
bool route(const ElbowInput& in, ElbowOutput& out) {
  if (in.variant != HypotVariant::kSplit && in.variant != HypotVariant::kFma) {
    throw std::invalid_argument("unknown hypot variant");
  }
  check_terminal(in.start, "start");
  check_terminal(in.end, "end");
  const double expand_len = in.expand_len, min_len = in.min_len;
  Geom geoms[2];
  Term s = terminal(in.start, {in.free_start[0], in.free_start[1]}, in.arrow_xf, in.heads[0], in.stroke, in.scale,
                    geoms[0], in.variant);
  Term e = terminal(in.end, {in.free_end[0], in.free_end[1]}, in.arrow_xf, in.heads[1], in.stroke, in.scale,
                    geoms[1], in.variant);
  s = unclosed(s, e, expand_len);
  e = unclosed(e, s, expand_len);
  const bool swap = s.side == kNone && e.side != kNone;
  Term a = swap ? e : s;
  Term b = swap ? s : e;
  const bool same = in.same_target;
  Edges ea = edges_of(a, b, expand_len, min_len, same), eb = edges_of(b, a, expand_len, min_len, same);
  const bool a_ok = has_usable(ea, a.side), b_ok = has_usable(eb, b.side);
  if (!a_ok || !b_ok) {
    if (!a_ok) b = to_point(b);
    if (!b_ok) a = to_point(a);
    if (b.bounds.contains(a.target, expand_len)) b = to_point(b);
    if (a.bounds.contains(b.target, expand_len)) a = to_point(a);
    ea = edges_of(a, b, expand_len, min_len, same);
    eb = edges_of(b, a, expand_len, min_len, same);
  }
  Box xa = a.bounds, xb = b.bounds;
  if (!a.is_point) xa.expand(expand_len);
  if (!b.is_point) xb.expand(expand_len);
  const Box common_o = common(a.bounds, b.bounds), common_e = common(xa, xb);
  double gap_x = b.bounds.left() - a.bounds.right();
  if (gap_x < 0) gap_x = -pmax(0.0, a.bounds.left() - b.bounds.right());
  double gap_y = b.bounds.top() - a.bounds.bottom();
  if (gap_y < 0) gap_y = -pmax(0.0, a.bounds.top() - b.bounds.bottom());
  const double a_min = a.min_end * 3, b_min = b.min_end * 3;
  const double need = (a.is_point ? a_min : min_len) + (b.is_point ? b_min : min_len);
  bool has_mx = false, has_my = false;
  double mx0 = 0, mx1 = 0, my0 = 0, my1 = 0;
  if (gap_x > need) {
    has_mx = true;
    mx0 = a.is_point ? a.bounds.right() + a_min : xa.right();
    mx1 = b.is_point ? b.bounds.left() - b_min : xb.left();
  } else if (gap_x < -need) {
    has_mx = true;
    mx0 = a.is_point ? a.bounds.left() - a_min : xa.left();
    mx1 = b.is_point ? b.bounds.right() + b_min : xb.right();
  }
  if (gap_y > need) {
    has_my = true;
    my0 = a.is_point ? a.bounds.bottom() + a_min : xa.bottom();
    my1 = b.is_point ? b.bounds.top() - b_min : xb.top();
  } else if (gap_y < -need) {
    has_my = true;
    my0 = a.is_point ? a.bounds.top() - a_min : xa.top();
    my1 = b.is_point ? b.bounds.bottom() + b_min : xb.bottom();
  }
  const double mid = swap ? 1 - in.mid : in.mid;
  Work info{{a.bounds, xa, ea, a.is_point},
            {b.bounds, xb, eb, b.is_point},
            common_o,
            common_e,
            gap_x,
            gap_y,
            has_mx,
            has_my,
            has_mx ? mx0 + (mx1 - mx0) * mid : 0.0,
            has_my ? my0 + (my1 - my0) * mid : 0.0,
            expand_len,
            {1.0, 1.0},
            kIdentity,
            kIdentity,
            in.variant};
  const Side a_side = side_to_use(a, b, ea), b_side = side_to_use(b, a, eb);
  Maybe route;
  if (a_side != kNone && b_side != kNone) {
    route = manual_route(info, a_side, b_side);
  } else if (a_side != kNone && b_side == kNone) {
    route = partial_route(info, a_side);
  }
  if (!route) route = auto_route(info);
  if (!route) return false;
  cast(true, a, b, *route);
  cast(false, b, a, *route);
  fix_nubs(*route, a, b);
  std::vector<P>& pts = route->points;
  if (swap) std::reverse(pts.begin(), pts.end());
  out.points.resize(2 * pts.size());
  for (std::size_t i = 0; i < pts.size(); ++i) {
    out.points[2 * i] = pts[i].x;
    out.points[2 * i + 1] = pts[i].y;
  }
  const Term& st = swap ? b : a;
  const Term& et = swap ? a : b;
  out.start_handle[0] = st.target.x;
  out.start_handle[1] = st.target.y;
  out.end_handle[0] = et.target.x;
  out.end_handle[1] = et.target.y;
  out.has_mid = route->has_mid;
  out.mid[0] = route->mid.x;
  out.mid[1] = route->mid.y;
  out.start_offset = st.offset;
  out.end_offset = et.offset;
  return true;
}

}  // namespace elbow_detail

bool elbow_route(const ElbowInput& in, ElbowOutput& out) { return elbow_detail::route(in, out); }

}  // namespace spatialobs
