#include "spatialobs/arrows.hpp"
#include "spatialobs/segments.hpp"

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <stdexcept>
#include <string>
#include <vector>

namespace spatialobs {

namespace detail {

struct Pt {
  double x, y;
};

// A rigid page transform: origin and the cosine and sine of the rotation.
struct Xf {
  double ox, oy, c, s;
};

// CPython's vector_norm for two values, 3.10/3.11 form: squares split by
// Veltkamp (2^27 + 1) and summed with their rounding errors, then a square
// root with one differential correction.
double hypot_split(double x, double y, double mx) {
  constexpr double kT27 = 134217729.0;
  double vec[2] = {x, y};
  double csum = 1.0, frac1 = 0.0, frac2 = 0.0, frac3 = 0.0, oldcsum, t, hi, lo, h, v;
  int max_e = 0;
  std::frexp(mx, &max_e);
  if (max_e >= -1023) {
    const double scale = std::ldexp(1.0, -max_e);
    for (double e : vec) {
      v = e * scale;
      t = v * kT27;
      hi = t - (t - v);
      lo = v - hi;
      v = hi * hi;
      oldcsum = csum;
      csum += v;
      frac1 += (oldcsum - csum) + v;
      v = 2.0 * hi * lo;
      oldcsum = csum;
      csum += v;
      frac2 += (oldcsum - csum) + v;
      frac3 += lo * lo;
    }
    h = std::sqrt(csum - 1.0 + (frac1 + frac2 + frac3));
    v = h;
    t = v * kT27;
    hi = t - (t - v);
    lo = v - hi;
    v = -hi * hi;
    oldcsum = csum;
    csum += v;
    frac1 += (oldcsum - csum) + v;
    v = -2.0 * hi * lo;
    oldcsum = csum;
    csum += v;
    frac2 += (oldcsum - csum) + v;
    v = -lo * lo;
    oldcsum = csum;
    csum += v;
    frac3 += (oldcsum - csum) + v;
    v = csum - 1.0 + (frac1 + frac2 + frac3);
    return (h + v / (2.0 * h)) / scale;
  }
  // ldexp(1, -max_e) would overflow: divide by the largest instead
  for (double e : vec) {
    v = e / mx;
    v = v * v;
    oldcsum = csum;
    csum += v;
    frac1 += (oldcsum - csum) + v;
  }
  return mx * std::sqrt(csum - 1.0 + frac1);
}

// CPython's vector_norm for two values, 3.12+ form: exact squares by fused
// multiply-add, fast two-sums, one differential correction.
double hypot_fma(double x, double y, double mx) {
  int max_e = 0;
  std::frexp(mx, &max_e);
  if (max_e < -1023) return DBL_MIN * hypot_fma(x / DBL_MIN, y / DBL_MIN, mx / DBL_MIN);
  const double scale = std::ldexp(1.0, -max_e);
  double csum = 1.0, frac1 = 0.0, frac2 = 0.0;
  const double vec[2] = {x, y};
  for (double e : vec) {
    const double v = e * scale;
    const double hi = v * v;
    const double lo = std::fma(v, v, -hi);
    const double s = csum + hi;
    const double s_lo = (csum - s) + hi;
    csum = s;
    frac1 += lo;
    frac2 += s_lo;
  }
  double h = std::sqrt(csum - 1.0 + (frac1 + frac2));
  const double hi = -h * h;
  const double lo = std::fma(-h, h, -hi);
  const double s = csum + hi;
  const double s_lo = (csum - s) + hi;
  csum = s;
  frac1 += lo;
  frac2 += s_lo;
  const double v = csum - 1.0 + (frac1 + frac2);
  h += v / (2.0 * h);
  return h / scale;
}

// Python's max(a, b) and min(a, b): the first unless the second compares
// greater (smaller), so a NaN in second place never wins.
inline double py_max(double a, double b) { return b > a ? b : a; }
inline double py_min(double a, double b) { return b < a ? b : a; }

// Python's x ** 2 for a float: the C library's pow, which the compiler must
// not turn into x * x (the volatile exponent keeps the call).
inline double py_square(double x) {
  volatile double two = 2.0;
  if (x == 0.0) return 0.0;
  const double r = std::pow(std::fabs(x), two);
  if (std::isinf(r) && std::isfinite(x)) throw std::overflow_error("(34, 'Numerical result out of range')");
  return r;
}

class Kernel {
 public:
  explicit Kernel(HypotVariant v) : variant_(v) {}

  double hypot(double x, double y) const { return python_hypot(x, y, variant_); }

  Pt uni(double x, double y) const {
    const double n = hypot(x, y);
    if (n != 0.0) return {x / n, y / n};
    return {x, y};
  }

  double dist(Pt a, Pt b) const { return hypot(a.x - b.x, a.y - b.y); }

 private:
  HypotVariant variant_;
};

inline double dist2(Pt a, Pt b) {
  const double dx = a.x - b.x, dy = a.y - b.y;
  return dx * dx + dy * dy;
}

inline bool equals(Pt a, Pt b) { return std::fabs(a.x - b.x) < 1e-4 && std::fabs(a.y - b.y) < 1e-4; }

inline Pt to_page(const Xf& xf, Pt p) { return {xf.ox + xf.c * p.x - xf.s * p.y, xf.oy + xf.s * p.x + xf.c * p.y}; }

inline Pt from_page(const Xf& xf, Pt p) {
  const double dx = p.x - xf.ox, dy = p.y - xf.oy;
  return {xf.c * dx + xf.s * dy, -xf.s * dx + xf.c * dy};
}

// tldraw's segment crossing (segments.hpp).
inline bool intersect_segments(Pt a1, Pt a2, Pt b1, Pt b2, Pt* out) {
  return intersect_segment_segment(a1, a2, b1, b2, *out);
}

struct Outline {
  const double* pts;  // rows [x, y]
  std::size_t n;
  bool closed;
  double x0, y0, x1, y1;  // bounds
  double stroke;          // half the target's stroke width
  Pt at(std::size_t i) const { return {pts[2 * i], pts[2 * i + 1]}; }
};

// nearest_on_polyline: the first nearest point on a tie.
Pt nearest_on_polyline(Pt p, const Outline& o) {
  Pt best_pt = o.at(0);
  double best = dist2(p, best_pt);
  const std::size_t stop = o.closed ? o.n : o.n - 1;
  for (std::size_t i = 0; i < stop; ++i) {
    const Pt s = o.at(i), e = o.at((i + 1) % o.n);
    const double dx = e.x - s.x, dy = e.y - s.y;
    const double l2 = dx * dx + dy * dy;
    Pt q;
    if (l2 == 0) {
      q = s;
    } else {
      const double t = ((p.x - s.x) * dx + (p.y - s.y) * dy) / l2;
      if (t <= 0) {
        q = s;
      } else if (t >= 1) {
        q = e;
      } else {
        q = {s.x + dx * t, s.y + dy * t};
      }
    }
    const double d = py_square(p.x - q.x) + py_square(p.y - q.y);
    if (d < best) {
      best_pt = q;
      best = d;
    }
  }
  return best_pt;
}

struct Terminal {
  const Outline* outline = nullptr;
  Xf xf{};
  Pt anchor{};
  bool precise = false, exact = false, hit = false;
  std::int64_t target = -1;
  double page_box[4] = {0, 0, 0, 0};
};

Pt handle(const Terminal& t, const Xf& arrow_xf, bool force) {
  const Outline& o = *t.outline;
  double ax = 0.5, ay = 0.5;
  if (t.precise || force) {
    ax = py_min(py_max(t.anchor.x, 1e-3), 1 - 1e-3);
    ay = py_min(py_max(t.anchor.y, 1e-3), 1 - 1e-3);
  }
  const Pt local{o.x0 + ax * (o.x1 - o.x0), o.y0 + ay * (o.y1 - o.y0)};
  return from_page(arrow_xf, to_page(t.xf, local));
}

// _page_box: the outline's bounds moved, or the box of its turned points.
void page_box(const Outline& o, const Xf& xf, double* box) {
  if (xf.s == 0.0 && xf.c == 1.0) {
    box[0] = o.x0 + xf.ox;
    box[1] = o.y0 + xf.oy;
    box[2] = o.x1 + xf.ox;
    box[3] = o.y1 + xf.oy;
    return;
  }
  Pt p = to_page(xf, o.at(0));
  box[0] = box[2] = p.x;
  box[1] = box[3] = p.y;
  for (std::size_t i = 1; i < o.n; ++i) {
    p = to_page(xf, o.at(i));
    box[0] = py_min(box[0], p.x);
    box[1] = py_min(box[1], p.y);
    box[2] = py_max(box[2], p.x);
    box[3] = py_max(box[3], p.y);
  }
}

inline bool contains(const double* a, const double* b) {
  return a[0] <= b[0] && a[1] <= b[1] && a[2] >= b[2] && a[3] >= b[3];
}

enum class Rel { kSafe, kDoubleBound, kStartContainsEnd, kEndContainsStart };

// _hit_straight: where the segment from `opposite` to `point` first meets the target's outline.
Pt hit_straight(Pt point, Pt opposite, const Xf& arrow_xf, Terminal* t) {
  if (t == nullptr || t->exact) return point;
  const Pt a = from_page(t->xf, to_page(arrow_xf, opposite));
  const Pt b = from_page(t->xf, to_page(arrow_xf, point));
  const Outline& o = *t->outline;
  const std::size_t stop = o.closed ? o.n : o.n - 1;
  bool found = false;
  Pt q{};
  double best = 0;
  for (std::size_t i = 0; i < stop; ++i) {
    Pt h;
    if (!intersect_segments(a, b, o.at(i), o.at((i + 1) % o.n), &h)) continue;
    const double d = dist2(h, a);
    if (!found || d < best) {
      q = h;
      best = d;
      found = true;
    }
  }
  if (!found) {
    q = nearest_on_polyline(b, o);
    if (!(dist2(q, b) < 1)) return point;
  }
  t->hit = true;
  return from_page(arrow_xf, to_page(t->xf, q));
}

struct Straight {
  Pt a, b;
  bool valid;
};

// _straight: the body between the handles a0 and b0, clipped to the targets and shortened by the arrowheads.
Straight straight(const Kernel& k, Pt a0, Pt b0, Terminal* s, Terminal* e, const Xf& arrow_xf, const bool* heads,
                  double sw, double scale, Rel rel) {
  if (equals(a0, b0)) return {a0, b0, false};
  const Pt uab = k.uni(b0.x - a0.x, b0.y - a0.y);
  Pt b = hit_straight(b0, a0, arrow_xf, e);
  Pt a = hit_straight(a0, b0, arrow_xf, s);
  double offset_a = 0.0, offset_b = 0.0;
  double min_len = 10.0 * scale;
  const bool self_hit = s != nullptr && e != nullptr && s->target == e->target;
  if (rel == Rel::kSafe && s != nullptr && e != nullptr && !self_hit && !s->exact && !e->exact) {
    if (e->hit && !s->hit) {
      if (s->outline->closed) a = {b.x + uab.x * min_len, b.y + uab.y * min_len};
    } else if (!e->hit) {
      if (e->outline->closed) b = {a.x - uab.x * min_len, a.y - uab.y * min_len};
    }
  }
  const Pt u = k.uni(b.x - a.x, b.y - a.y);
  const bool flip = !equals(u, uab);
  if (!self_hit) {
    if (rel != Rel::kStartContainsEnd && s != nullptr && heads[0] && !s->exact) {
      const double so = sw / 2 + s->outline->stroke;
      offset_a = (10.0 + so) * scale;
      min_len += so * scale;
    }
    if (rel != Rel::kEndContainsStart && e != nullptr && heads[1] && !e->exact) {
      const double so = sw / 2 + e->outline->stroke;
      offset_b = (10.0 + so) * scale;
      min_len += so * scale;
    }
  }
  const double f = flip ? -1.0 : 1.0;
  const Pt ta{a.x + u.x * offset_a * f, a.y + u.y * offset_a * f};
  const Pt tb{b.x - u.x * offset_b * f, b.y - u.y * offset_b * f};
  if (dist2(ta, tb) < min_len * min_len) {
    if (offset_a != 0 && offset_b != 0) {
      offset_a *= -1.5;
      offset_b *= -1.5;
    } else if (offset_a != 0) {
      offset_a *= -1;
    } else if (offset_b != 0) {
      offset_b *= -1;
    }
  }
  a = {a.x + u.x * offset_a * f, a.y + u.y * offset_a * f};
  b = {b.x - u.x * offset_b * f, b.y - u.y * offset_b * f};
  if (flip && s != nullptr && e != nullptr) b = {a.x - u.x * 10.0 * scale, a.y - u.y * 10.0 * scale};
  return {a, b, k.dist(a, b) > 0};
}

Xf row_xf(const StraightArrowsInput& in, std::int64_t r) {
  const double rot = in.rotation[r];
  if (rot == 0.0) return {in.px[r], in.py[r], 1.0, 0.0};
  return {in.px[r], in.py[r], std::cos(rot), std::sin(rot)};
}

[[noreturn]] void bad(const std::string& what) { throw std::invalid_argument(what); }

void check_finite(double v, const std::string& what) {
  if (!std::isfinite(v)) bad(what + " is not finite (" + std::to_string(v) + ")");
}

// check_finite with the value's name made only when the value fails (the name of an element of a
// batch is a string built per element: making it for every one took most of a batch's check).
template <class Name>
inline void check_finite_named(double v, const Name& name) {
  if (!std::isfinite(v)) check_finite(v, name());
}

const char* kTerm[2] = {"start", "end"};

void check_input(const StraightArrowsInput& in) {
  if (in.hypot != HypotVariant::kSplit && in.hypot != HypotVariant::kFma) bad("unknown hypot variant");
  if (in.offsets[0] != 0) bad("outline offsets must start at 0, got " + std::to_string(in.offsets[0]));
  for (std::size_t k = 0; k < in.n_outlines; ++k) {
    auto name = [k] { return "outline " + std::to_string(k); };
    if (in.offsets[k + 1] <= in.offsets[k]) bad(name() + " has no points (offsets must ascend)");
    for (int j = 0; j < 4; ++j) check_finite_named(in.bounds[4 * k + j], [&] { return name() + " bounds"; });
    check_finite_named(in.outline_stroke[k], [&] { return name() + " stroke"; });
  }
  const std::int64_t n_points = in.offsets[in.n_outlines];
  for (std::int64_t i = 0; i < 2 * n_points; ++i) {
    check_finite_named(in.outline_points[i], [i] { return "outline point " + std::to_string(i / 2); });
  }
  const auto n_rows = static_cast<std::int64_t>(in.n_rows);
  const auto n_outlines = static_cast<std::int64_t>(in.n_outlines);
  auto check_row = [&](std::int64_t r, const auto& name) {
    if (r < 0 || r >= n_rows) {
      throw std::out_of_range(name() + " row " + std::to_string(r) + " is outside [0, " + std::to_string(n_rows) + ")");
    }
    check_finite_named(in.px[r], [&] { return name() + " x"; });
    check_finite_named(in.py[r], [&] { return name() + " y"; });
    check_finite_named(in.rotation[r], [&] { return name() + " rotation"; });
  };
  for (std::size_t i = 0; i < in.n; ++i) {
    auto name = [i] { return "arrow " + std::to_string(i); };
    check_row(in.arrow_row[i], name);
    check_finite_named(in.scale[i], [&] { return name() + " scale"; });
    if (in.scale[i] == 0.0) bad(name() + " scale is 0");
    check_finite_named(in.stroke[i], [&] { return name() + " stroke"; });
    for (int j = 0; j < 2; ++j) {
      auto tn = [&name, j] { return name() + " " + kTerm[j]; };
      check_finite_named(in.points[4 * i + 2 * j], [&] { return tn() + " point x"; });
      check_finite_named(in.points[4 * i + 2 * j + 1], [&] { return tn() + " point y"; });
      const std::int64_t t = in.target[2 * i + j];
      if (t == -1) continue;
      check_row(t, [&] { return tn() + " target"; });
      for (const std::int64_t* col : {in.outline, in.box_outline}) {
        const std::int64_t o = col[2 * i + j];
        if (o < 0 || o >= n_outlines) {
          throw std::out_of_range(tn() + " outline " + std::to_string(o) + " is outside [0, " +
                                  std::to_string(n_outlines) + ")");
        }
      }
      check_finite_named(in.anchor[4 * i + 2 * j], [&] { return tn() + " anchor x"; });
      check_finite_named(in.anchor[4 * i + 2 * j + 1], [&] { return tn() + " anchor y"; });
    }
  }
}

// Arcs and labels (arrows.py's _arc, _arc_info, _arc_hit, arc_vertices, _label_box):
// the same operations in the same order; names kept apart from the unity build's others.
namespace arrow_arcs {

constexpr double kPi = 3.141592653589793;
constexpr double kPi2 = 2 * 3.141592653589793;

// _angle: math.atan2, which answers a NaN argument with its own (positive) NaN where
// the C library passes the argument's on (its sign included).
inline double angle(Pt a, Pt b) {
  const double y = b.y - a.y, x = b.x - a.x;
  if (std::isnan(x) || std::isnan(y)) return std::nan("");
  return std::atan2(y, x);
}

// _canon, _cw_dist, _ccw_dist (math.fmod is the C library's fmod).
inline double canon(double a) {
  a = std::fmod(a, kPi2);
  if (a < 0) a += kPi2;
  return a + 0.0;
}

inline double cw_dist(double a0, double a1) {
  a0 = canon(a0);
  a1 = canon(a1);
  if (a0 > a1) a1 += kPi2;
  return a1 - a0;
}

inline double ccw_dist(double a0, double a1) { return kPi2 - cw_dist(a0, a1); }

inline double arc_dist(bool cw, double a0, double a1) { return cw ? cw_dist(a0, a1) : ccw_dist(a0, a1); }

// _on_circle: JavaScript's Math.cos(Infinity) is NaN.
inline Pt on_circle(Pt c, double r, double a) {
  if (std::isinf(a)) return {std::nan(""), std::nan("")};
  return {c.x + std::cos(a) * r, c.y + std::sin(a) * r};
}

// _js_div: a / b as JavaScript divides.
inline double js_div(double a, double b) {
  if (b != 0) return a / b;
  if (std::isnan(a) || a == 0) return std::nan("");
  return std::copysign(INFINITY, a) * std::copysign(1.0, b);
}

// _circle_center: None (false) for a zero divisor or a centre that is not finite.
bool circle_center(Pt a, Pt b, Pt c, Pt* out) {
  const double u = -2 * (a.x * (b.y - c.y) - a.y * (b.x - c.x) + b.x * c.y - c.x * b.y);
  const double a2 = a.x * a.x + a.y * a.y, b2 = b.x * b.x + b.y * b.y, c2 = c.x * c.x + c.y * c.y;
  if (u == 0) return false;
  const double x = (a2 * (c.y - b.y) + b2 * (a.y - c.y) + c2 * (b.y - a.y)) / u;
  const double y = (a2 * (b.x - c.x) + b2 * (c.x - a.x) + c2 * (a.x - b.x)) / u;
  if (!(std::isfinite(x) && std::isfinite(y))) return false;
  *out = {x, y};
  return true;
}

struct ArcInfo {
  Pt center;
  double radius, size, length;
  int large, sweep;
};

// _arc_info: the arc a -> c -> b.
ArcInfo arc_info(const Kernel& k, Pt a, Pt b, Pt c) {
  ArcInfo r{};
  if (!circle_center(a, b, c, &r.center)) r.center = {(a.x + b.x) / 2, (a.y + b.y) / 2};
  r.radius = k.dist(r.center, a);
  r.sweep = ((b.x - a.x) * (c.y - a.y) - (c.x - a.x) * (b.y - a.y)) < 0 ? 1 : 0;
  const double ab = k.dist(a, b), bc = k.dist(b, c), ca = k.dist(c, a);
  double theta = std::nan("");
  const double den = 2 * bc * ca;
  if (den != 0) {
    const double cosv = (bc * bc + ca * ca - ab * ab) / den;
    if (-1 <= cosv && cosv <= 1) theta = std::acos(cosv) * 2;
  }
  r.large = kPi > theta ? 1 : 0;
  r.size = (kPi2 - theta) * (r.sweep ? 1.0 : -1.0);
  r.length = r.size * r.radius;
  return r;
}

// _segment_circle, appending to `out`.
void segment_circle(Pt a1, Pt a2, Pt c, double r, std::vector<Pt>& out) {
  const double dx = a2.x - a1.x, dy = a2.y - a1.y;
  const double ocx = a1.x - c.x, ocy = a1.y - c.y;
  const double a = dx * dx + dy * dy;
  const double b = 2 * (dx * ocx + dy * ocy);
  const double cc = ocx * ocx + ocy * ocy - r * r;
  const double det = b * b - 4 * a * cc;
  if (det <= 0 || a == 0) return;
  const double e = std::sqrt(det);
  const double u1 = (-b + e) / (2 * a);
  const double u2 = (-b - e) / (2 * a);
  if (0 <= u1 && u1 <= 1) out.push_back({a1.x + dx * u1, a1.y + dy * u1});
  if (0 <= u2 && u2 <= 1) out.push_back({a1.x + dx * u2, a1.y + dy * u2});
}

// _arc_hit: where the body's circle meets the terminal's outline; false for None.
bool arc_hit(Terminal* t, const Xf& arrow_xf, Pt ta, Pt tb, Pt center, double radius, bool cw, double frac,
             bool from_start, std::vector<Pt>& hits, Pt* out) {
  const Pt sl = from_page(t->xf, to_page(arrow_xf, ta));
  const Pt cl = from_page(t->xf, to_page(arrow_xf, center));
  const Pt el = from_page(t->xf, to_page(arrow_xf, tb));
  const Outline& o = *t->outline;
  hits.clear();
  const std::size_t stop = o.closed ? o.n : o.n - 1;
  for (std::size_t i = 0; i < stop; ++i) segment_circle(o.at(i), o.at((i + 1) % o.n), cl, radius, hits);
  bool found = false;
  Pt point{};
  if (!hits.empty()) {
    const double a_s = angle(cl, sl);
    const double d_ab = arc_dist(cw, a_s, angle(cl, el));
    const double target = d_ab * frac;
    double best = 0;
    for (const Pt& p : hits) {
      const double dp = arc_dist(cw, a_s, angle(cl, p));
      if (!(dp <= d_ab)) continue;
      const double key = o.closed ? std::fabs(arc_dist(cw, a_s, angle(cl, p)) - target) : dp;
      if (!found || key < best) {
        best = key;
        point = p;
        found = true;
      }
    }
  }
  if (!found) {
    const Pt probe = from_start ? sl : el;
    if (o.closed) {
      const Pt q = nearest_on_polyline(probe, o);
      if (dist2(q, probe) < 1) {
        point = q;
        found = true;
      }
    } else {
      point = probe;
      found = true;
    }
  }
  if (!found) return false;
  t->hit = true;
  *out = from_page(arrow_xf, to_page(t->xf, point));
  return true;
}

struct Arc {
  Pt a, b, center;
  bool valid;
  int sweep, large;
};

// _arc: false where tldraw draws the arrow straight instead.
bool arc(const Kernel& k, Pt a0, Pt b0, double bend, Terminal* s, Terminal* e, const Xf& arrow_xf,
         const bool* heads, double sw, double scale, Rel rel, std::vector<Pt>& hits, Arc* out) {
  const Pt med{(a0.x + b0.x) / 2, (a0.y + b0.y) / 2};
  const Pt u = k.uni(b0.x - a0.x, b0.y - a0.y);
  const Pt middle{med.x + u.y * -bend, med.y - u.x * -bend};
  if (equals(a0, b0)) return false;
  const bool cw = bend < 0;
  const ArcInfo h = arc_info(k, a0, b0, middle);
  const Pt center = h.center;
  const double radius = h.radius;
  const double h_aca = angle(center, a0);
  const double h_acb = angle(center, b0);
  const double h_dab = arc_dist(cw, h_aca, h_acb);
  constexpr double kMaxSafe = 9007199254740991.0;
  if (h.length == 0 || h.size == 0 || !(std::fabs(h.length) < kMaxSafe) || !(std::fabs(h.size) < kMaxSafe)) {
    return false;
  }
  Pt ta = a0, tb = b0;
  double offset_a = 0.0, offset_b = 0.0;
  double min_len = 10.0 * scale;
  Pt p;
  if (s != nullptr && !s->exact && arc_hit(s, arrow_xf, ta, tb, center, radius, cw, 0.25, true, hits, &p)) {
    ta = p;
    if (heads[0]) {
      const double so = sw / 2 + s->outline->stroke;
      offset_a = (10.0 + so) * scale;
      min_len += so * scale;
    }
  }
  if (e != nullptr && !e->exact && arc_hit(e, arrow_xf, ta, tb, center, radius, cw, 0.75, false, hits, &p)) {
    tb = p;
    if (heads[1]) {
      const double so = sw / 2 + e->outline->stroke;
      offset_b = (10.0 + so) * scale;
      min_len += so * scale;
    }
  }
  double aca = angle(center, ta);
  double acb = angle(center, tb);
  double dab = arc_dist(cw, aca, acb);
  double lab = dab * radius;
  const double sgn = cw ? 1.0 : -1.0;
  auto moved = [&](double base, double off, double sign) {
    return on_circle(center, radius, base + dab * (js_div(off, lab) * sign));
  };
  const Pt pa = offset_a != 0 ? moved(aca, offset_a, sgn) : ta;
  const Pt pb = offset_b != 0 ? moved(acb, offset_b, -sgn) : tb;
  if (dist2(pa, pb) < min_len * min_len) {
    if (offset_a != 0 && offset_b != 0) {
      offset_a *= -1.5;
      offset_b *= -1.5;
    } else if (offset_a != 0) {
      offset_a *= -2;
    } else if (offset_b != 0) {
      offset_b *= -2;
    }
    offset_a = py_max(offset_a, 0.1 - arc_dist(cw, h_aca, aca) * radius);
    offset_b = py_max(offset_b, 0.1 - arc_dist(cw, acb, h_acb) * radius);
  }
  if (offset_a != 0) ta = moved(aca, offset_a, sgn);
  if (offset_b != 0) tb = moved(acb, offset_b, -sgn);
  if (s != nullptr && e != nullptr && !s->exact && !e->exact) {
    aca = angle(center, ta);
    acb = angle(center, tb);
    dab = arc_dist(cw, aca, acb);
    lab = dab * radius;
    if (rel == Rel::kDoubleBound && lab < 30) {
      ta = a0;
      tb = b0;
    } else if (rel == Rel::kSafe) {
      if (!s->hit) ta = a0;
      if (!e->hit || arc_dist(cw, h_aca, aca) > arc_dist(cw, h_aca, acb)) {
        tb = on_circle(center, radius, aca + dab * (py_min(0.9, js_div(10.0 * scale, lab)) * sgn));
      }
    }
  }
  aca = angle(center, ta);
  acb = angle(center, tb);
  double d = cw_dist(aca, acb);
  if (!cw) d = kPi2 - d;
  Pt tc = on_circle(center, radius, aca + d * (0.5 * sgn));
  if (d > h_dab) {
    tc = {2 * center.x - tc.x, 2 * center.y - tc.y};
    std::swap(ta, tb);
  }
  if (equals(ta, tb)) {
    ta = {tc.x + 1, tc.y + 1};
    tb = {tc.x - 1, tc.y - 1};
  }
  const ArcInfo body = arc_info(k, ta, tb, tc);
  *out = Arc{ta, tb, center, body.length != 0 && std::isfinite(body.center.x) && std::isfinite(body.center.y),
             body.sweep, body.large};
  return true;
}

constexpr long kMaxArcSpans = 65536;

// arc_vertices (one vertex per 20 units, at least 8 spans, at most kMaxArcSpans).
void arc_vertices(const Kernel& k, Pt center, Pt start, Pt end, int sweep, int large, std::vector<Pt>& out) {
  const double a0 = angle(center, start);
  const double a1 = angle(center, end);
  const double r = k.dist(center, start);
  double m = std::fmod(2 * std::fmod(a1 - a0, kPi2), kPi2) - std::fmod(a1 - a0, kPi2);
  if (large) m = (kPi2 - std::fabs(m)) * (sweep ? 1.0 : -1.0);
  const double length = std::fabs(m * r);
  long n = kMaxArcSpans;
  if (length < 20.0 * kMaxArcSpans) n = std::max(8L, static_cast<long>(std::ceil(length / 20)));
  out.clear();
  out.reserve(static_cast<std::size_t>(n) + 1);
  const double dn = static_cast<double>(n);
  for (long i = 0; i <= n; ++i) out.push_back(on_circle(center, r, a0 + (static_cast<double>(i) / dn) * m));
}

// The body resolve_arrow samples: an arc's vertices, or the two ends.
void body_vertices(const Kernel& k, bool is_arc, Pt a, Pt b, Pt center, int sweep, int large,
                   std::vector<Pt>& out) {
  if (is_arc && !equals(a, b)) {
    arc_vertices(k, center, a, b, sweep, large, out);
  } else {
    out.assign({a, b});
  }
}

// _bbox (Python's min and max over the coordinates, in order).
void bbox(const std::vector<Pt>& pts, double* box) {
  box[0] = box[2] = pts[0].x;
  box[1] = box[3] = pts[0].y;
  for (std::size_t i = 1; i < pts.size(); ++i) {
    box[0] = py_min(box[0], pts[i].x);
    box[2] = py_max(box[2], pts[i].x);
  }
  for (std::size_t i = 1; i < pts.size(); ++i) {
    box[1] = py_min(box[1], pts[i].y);
    box[3] = py_max(box[3], pts[i].y);
  }
}

// _Runs: segment lengths, their sum as the builtin sum adds floats (plain before
// CPython 3.12, Neumaier-compensated from 3.12, which is also where hypot takes
// its fma form), running ends as a loop adds them.
struct Runs {
  std::vector<double> lens, ends;
  double total = 0;
  bool ordered = true;

  void measure(const Kernel& k, const std::vector<Pt>& pts, bool neumaier) {
    lens.clear();
    ends.clear();
    ordered = true;
    double run = 0;
    for (std::size_t i = 0; i + 1 < pts.size(); ++i) {
      const double d = k.dist(pts[i], pts[i + 1]);
      lens.push_back(d);
      run = i ? run + d : d;
      ends.push_back(run);
      if (d != d) ordered = false;
    }
    // sum(): 0 + the first length (+0.0 for a length of -0.0; hypot gives none), then the rest
    double f = 0.0 + lens[0], c = 0.0;
    for (std::size_t i = 1; i < lens.size(); ++i) {
      const double x = lens[i];
      if (!neumaier) {
        f += x;
        continue;
      }
      const double t = f + x;
      if (std::fabs(f) >= std::fabs(x)) {
        c += (f - t) + x;
      } else {
        c += (x - t) + f;
      }
      f = t;
    }
    if (neumaier && c != 0 && std::isfinite(c)) f += c;
    total = f;
  }
};

// _interp: the point a fraction t of the way along the polyline.
Pt interp(const std::vector<Pt>& pts, double t, const Runs& r) {
  if (t <= 0) return pts[0];
  const double goal = t * r.total;
  if (goal != goal) return pts.back();
  std::size_t i = 0;
  const std::size_t n = r.ends.size();
  if (r.ordered) {
    i = static_cast<std::size_t>(std::lower_bound(r.ends.begin(), r.ends.end(), goal) - r.ends.begin());
  } else {
    while (i < n && !(r.ends[i] >= goal)) ++i;
  }
  if (i == n) return pts.back();
  const double d = r.lens[i];
  if (d == 0) return pts[i];
  const double kk = (goal - (i ? r.ends[i - 1] : 0.0)) / d;
  return {pts[i].x + (pts[i + 1].x - pts[i].x) * kk, pts[i].y + (pts[i + 1].y - pts[i].y) * kk};
}

// _uninterp: how far along the polyline its nearest point to p lies.
double uninterp(const Kernel& k, const std::vector<Pt>& pts, Pt p) {
  double best = INFINITY, at = 0.0, run = 0.0;
  for (std::size_t i = 0; i + 1 < pts.size(); ++i) {
    const double sx = pts[i].x, sy = pts[i].y;
    const double dx = pts[i + 1].x - sx, dy = pts[i + 1].y - sy;
    const double l2 = dx * dx + dy * dy;
    const double t = l2 == 0 ? 0.0 : py_min(1.0, py_max(0.0, ((p.x - sx) * dx + (p.y - sy) * dy) / l2));
    const double nx = sx + dx * t, ny = sy + dy * t;
    const double d = k.hypot(p.x - nx, p.y - ny);
    const double seg = std::sqrt(l2);
    if (d < best) {
      best = d;
      at = run + seg * t;
    }
    run += seg;
  }
  return run != 0 ? at / run : 0.0;
}

// _label_box's constrained(): the crossing of the body with the label box at `c`
// farthest from `end_pt`; false for None.
bool constrained(const std::vector<Pt>& body, Pt c, Pt end_pt, double lw, double lh, std::vector<Pt>& hits,
                 Pt* out) {
  const double grow = 0.0;
  const double x0 = c.x - lw / 2 - grow, y0 = c.y - lh / 2 - grow;
  const double x1 = c.x + lw / 2 + grow, y1 = c.y + lh / 2 + grow;
  const Pt box[4] = {{x0, y0}, {x1, y0}, {x1, y1}, {x0, y1}};
  hits.clear();
  for (std::size_t s = 0; s + 1 < body.size(); ++s) {
    const Pt a = body[s], b = body[s + 1];
    if (py_max(a.x, b.x) < x0 || py_min(a.x, b.x) > x1 || py_max(a.y, b.y) < y0 || py_min(a.y, b.y) > y1) continue;
    for (int i = 0; i < 4; ++i) {
      Pt h;
      if (!intersect_segments(box[i], box[(i + 1) % 4], a, b, &h)) continue;
      bool seen = false;
      for (const Pt& q : hits) {
        if (q.x == h.x && q.y == h.y) {
          seen = true;
          break;
        }
      }
      if (!seen) hits.push_back(h);
    }
  }
  bool found = false;
  double fd = -INFINITY;
  for (const Pt& h : hits) {
    const double d = dist2(end_pt, h);
    if (d > fd) {
      *out = h;
      fd = d;
      found = true;
    }
  }
  return found;
}

}  // namespace arrow_arcs

}  // namespace detail

double python_hypot(double x, double y, HypotVariant variant) {
  x = std::fabs(x);
  y = std::fabs(y);
  double mx = 0.0;
  if (x > mx) mx = x;
  if (y > mx) mx = y;
  if (std::isinf(mx)) return mx;
  if (std::isnan(x) || std::isnan(y)) return std::nan("");
  if (mx == 0.0) return mx;
  return variant == HypotVariant::kFma ? detail::hypot_fma(x, y, mx) : detail::hypot_split(x, y, mx);
}

namespace detail::arrow_arcs {

// The batch of resolve_straight_arrows and resolve_arrows: `bend` and `arc` null
// for straight arrows only (then the arc outputs are null too).
void resolve_batch(const StraightArrowsInput& in, const StraightArrowsOutput& out, const double* bend,
                   const bool* arc_flag, bool* is_arc, double* centers, bool* sweep_large) {
  check_input(in);
  if (bend != nullptr) {
    for (std::size_t i = 0; i < in.n; ++i) {
      check_finite_named(bend[i], [i] { return "arrow " + std::to_string(i) + " bend"; });
    }
  }
  const Kernel k(in.hypot);
  std::vector<Outline> outlines(in.n_outlines);
  for (std::size_t j = 0; j < in.n_outlines; ++j) {
    const double* b = in.bounds + 4 * j;
    outlines[j] = Outline{in.outline_points + 2 * in.offsets[j], static_cast<std::size_t>(in.offsets[j + 1] - in.offsets[j]),
                          in.closed[j], b[0], b[1], b[2], b[3], in.outline_stroke[j]};
  }
  std::vector<Pt> hits, verts;
  for (std::size_t i = 0; i < in.n; ++i) {
    const Xf axf = row_xf(in, in.arrow_row[i]);
    Terminal terms[2];
    Terminal* tp[2] = {nullptr, nullptr};
    for (int j = 0; j < 2; ++j) {
      const std::int64_t t = in.target[2 * i + j];
      if (t == -1) continue;
      Terminal& term = terms[j];
      term.outline = &outlines[static_cast<std::size_t>(in.outline[2 * i + j])];
      term.xf = row_xf(in, t);
      term.anchor = {in.anchor[4 * i + 2 * j], in.anchor[4 * i + 2 * j + 1]};
      term.precise = in.precise[2 * i + j];
      term.exact = in.exact[2 * i + j];
      term.target = t;
      tp[j] = &term;
    }
    Terminal* s = tp[0];
    Terminal* e = tp[1];
    Rel rel = Rel::kSafe;
    if (s != nullptr && e != nullptr) {
      if (s->target == e->target) {
        rel = Rel::kDoubleBound;
      } else {
        page_box(outlines[static_cast<std::size_t>(in.box_outline[2 * i])], s->xf, s->page_box);
        page_box(outlines[static_cast<std::size_t>(in.box_outline[2 * i + 1])], e->xf, e->page_box);
        if (contains(s->page_box, e->page_box)) {
          rel = Rel::kStartContainsEnd;
        } else if (contains(e->page_box, s->page_box)) {
          rel = Rel::kEndContainsStart;
        }
      }
    }
    const Pt a0 = s != nullptr ? handle(*s, axf, rel == Rel::kDoubleBound || rel == Rel::kStartContainsEnd)
                               : Pt{in.points[4 * i], in.points[4 * i + 1]};
    const Pt b0 = e != nullptr ? handle(*e, axf, rel == Rel::kDoubleBound || rel == Rel::kEndContainsStart)
                               : Pt{in.points[4 * i + 2], in.points[4 * i + 3]};
    double* box = out.boxes + 4 * i;
    double* ends = out.ends + 4 * i;
    arrow_arcs::Arc a{};
    const bool bent = arc_flag != nullptr && arc_flag[i] &&
                      arrow_arcs::arc(k, a0, b0, bend[i], s, e, axf, in.heads + 2 * i, in.stroke[i], in.scale[i],
                                      rel, hits, &a);
    if (bent) {
      arrow_arcs::body_vertices(k, true, a.a, a.b, a.center, a.sweep, a.large, verts);
      arrow_arcs::bbox(verts, box);
      ends[0] = a.a.x;
      ends[1] = a.a.y;
      ends[2] = a.b.x;
      ends[3] = a.b.y;
      out.valid[i] = a.valid;
      is_arc[i] = true;
      centers[2 * i] = a.center.x;
      centers[2 * i + 1] = a.center.y;
      sweep_large[2 * i] = a.sweep != 0;
      sweep_large[2 * i + 1] = a.large != 0;
      continue;
    }
    for (Terminal* t : tp) {
      if (t != nullptr) t->hit = false;  // as _course resets them after an arc that fell back
    }
    const Straight body = straight(k, a0, b0, s, e, axf, in.heads + 2 * i, in.stroke[i], in.scale[i], rel);
    box[0] = py_min(body.a.x, body.b.x);
    box[1] = py_min(body.a.y, body.b.y);
    box[2] = py_max(body.a.x, body.b.x);
    box[3] = py_max(body.a.y, body.b.y);
    ends[0] = body.a.x;
    ends[1] = body.a.y;
    ends[2] = body.b.x;
    ends[3] = body.b.y;
    out.valid[i] = body.valid;
    if (is_arc != nullptr) {
      is_arc[i] = false;
      centers[2 * i] = centers[2 * i + 1] = 0.0;
      sweep_large[2 * i] = sweep_large[2 * i + 1] = false;
    }
  }
}

}  // namespace detail::arrow_arcs

void resolve_straight_arrows(const StraightArrowsInput& in, const StraightArrowsOutput& out) {
  detail::arrow_arcs::resolve_batch(in, out, nullptr, nullptr, nullptr, nullptr, nullptr);
}

void resolve_arrows(const ArrowsInput& in, const ArrowsOutput& out) {
  detail::arrow_arcs::resolve_batch(in.base, out.base, in.bend, in.arc, out.is_arc, out.centers, out.sweep_large);
}

void place_arrow_labels(const LabelsInput& in, double* boxes, double* labels) {
  using namespace detail;
  using namespace detail::arrow_arcs;
  if (in.hypot != HypotVariant::kSplit && in.hypot != HypotVariant::kFma) bad("unknown hypot variant");
  for (std::size_t i = 0; i < in.n; ++i) {
    auto name = [i] { return "label " + std::to_string(i); };
    check_finite_named(in.size[2 * i], [&] { return name() + " width"; });
    check_finite_named(in.size[2 * i + 1], [&] { return name() + " height"; });
    check_finite_named(in.pad[i], [&] { return name() + " padding"; });
    check_finite_named(in.position[i], [&] { return name() + " position"; });
  }
  const Kernel k(in.hypot);
  const bool neumaier = in.hypot == HypotVariant::kFma;
  std::vector<Pt> body, hits;
  Runs runs;
  for (std::size_t i = 0; i < in.n; ++i) {
    const Pt start{in.ends[4 * i], in.ends[4 * i + 1]};
    const Pt end{in.ends[4 * i + 2], in.ends[4 * i + 3]};
    body_vertices(k, in.is_arc[i], start, end, {in.centers[2 * i], in.centers[2 * i + 1]}, in.sweep_large[2 * i],
                  in.sweep_large[2 * i + 1], body);
    const double lw = in.size[2 * i], lh = in.size[2 * i + 1], pad = in.pad[i];
    runs.measure(k, body, neumaier);
    const double length = runs.total;
    const double rel = length != 0 ? pad / length : 0.0;
    Pt sc, ec;
    const bool has_sc = constrained(body, interp(body, rel, runs), start, lw, lh, hits, &sc);
    const bool has_ec = constrained(body, interp(body, 1 - rel, runs), end, lw, lh, hits, &ec);
    double r0 = has_sc ? uninterp(k, body, sc) : 0.5;
    double r1 = has_ec ? uninterp(k, body, ec) : 0.5;
    if (r0 > r1) r0 = r1 = 0.5;
    const double lo = in.clamp[2 * i] ? r0 : 0.0;
    const double hi = in.clamp[2 * i + 1] ? r1 : 1.0;
    const double pos = py_max(lo, py_min(hi, in.position[i]));
    const Pt c = interp(body, pos, runs);
    double* lb = labels + 4 * i;
    lb[0] = c.x - lw / 2;
    lb[1] = c.y - lh / 2;
    lb[2] = c.x + lw / 2;
    lb[3] = c.y + lh / 2;
    const double* bb = in.body_boxes + 4 * i;
    double* box = boxes + 4 * i;
    box[0] = py_min(bb[0], lb[0]);
    box[1] = py_min(bb[1], lb[1]);
    box[2] = py_max(bb[2], lb[2]);
    box[3] = py_max(bb[3], lb[3]);
  }
}

}  // namespace spatialobs
