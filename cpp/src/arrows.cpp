#include "spatialobs/arrows.hpp"

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

// tldraw's segment crossing (intersect_segment_segment with precision 1e-10).
inline bool intersect_segments(Pt a1, Pt a2, Pt b1, Pt b2, Pt* out) {
  constexpr double p = 1e-10;
  const double abx = a1.x - b1.x, aby = a1.y - b1.y;
  const double bvx = b2.x - b1.x, bvy = b2.y - b1.y;
  const double avx = a2.x - a1.x, avy = a2.y - a1.y;
  const double ua_t = bvx * aby - bvy * abx;
  const double ub_t = avx * aby - avy * abx;
  const double u_b = bvy * avx - bvx * avy;
  if (std::fabs(ua_t) <= p || std::fabs(ub_t) <= p || std::fabs(u_b) <= p) return false;
  const double ua = ua_t / u_b;
  const double ub = ub_t / u_b;
  if (-p <= ua && ua <= 1 + p && -p <= ub && ub <= 1 + p) {
    *out = {a1.x + ua * avx, a1.y + ua * avy};
    return true;
  }
  return false;
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

const char* kTerm[2] = {"start", "end"};

void check_input(const StraightArrowsInput& in) {
  if (in.hypot != HypotVariant::kSplit && in.hypot != HypotVariant::kFma) bad("unknown hypot variant");
  if (in.offsets[0] != 0) bad("outline offsets must start at 0, got " + std::to_string(in.offsets[0]));
  for (std::size_t k = 0; k < in.n_outlines; ++k) {
    const std::string name = "outline " + std::to_string(k);
    if (in.offsets[k + 1] <= in.offsets[k]) bad(name + " has no points (offsets must ascend)");
    for (int j = 0; j < 4; ++j) check_finite(in.bounds[4 * k + j], name + " bounds");
    check_finite(in.outline_stroke[k], name + " stroke");
  }
  const std::int64_t n_points = in.offsets[in.n_outlines];
  for (std::int64_t i = 0; i < 2 * n_points; ++i) {
    check_finite(in.outline_points[i], "outline point " + std::to_string(i / 2));
  }
  const auto n_rows = static_cast<std::int64_t>(in.n_rows);
  const auto n_outlines = static_cast<std::int64_t>(in.n_outlines);
  auto check_row = [&](std::int64_t r, const std::string& name) {
    if (r < 0 || r >= n_rows) {
      throw std::out_of_range(name + " row " + std::to_string(r) + " is outside [0, " + std::to_string(n_rows) + ")");
    }
    check_finite(in.px[r], name + " x");
    check_finite(in.py[r], name + " y");
    check_finite(in.rotation[r], name + " rotation");
  };
  for (std::size_t i = 0; i < in.n; ++i) {
    const std::string name = "arrow " + std::to_string(i);
    check_row(in.arrow_row[i], name);
    check_finite(in.scale[i], name + " scale");
    if (in.scale[i] == 0.0) bad(name + " scale is 0");
    check_finite(in.stroke[i], name + " stroke");
    for (int j = 0; j < 2; ++j) {
      const std::string tn = name + " " + kTerm[j];
      check_finite(in.points[4 * i + 2 * j], tn + " point x");
      check_finite(in.points[4 * i + 2 * j + 1], tn + " point y");
      const std::int64_t t = in.target[2 * i + j];
      if (t == -1) continue;
      check_row(t, tn + " target");
      for (const std::int64_t* col : {in.outline, in.box_outline}) {
        const std::int64_t o = col[2 * i + j];
        if (o < 0 || o >= n_outlines) {
          throw std::out_of_range(tn + " outline " + std::to_string(o) + " is outside [0, " +
                                  std::to_string(n_outlines) + ")");
        }
      }
      check_finite(in.anchor[4 * i + 2 * j], tn + " anchor x");
      check_finite(in.anchor[4 * i + 2 * j + 1], tn + " anchor y");
    }
  }
}

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

void resolve_straight_arrows(const StraightArrowsInput& in, const StraightArrowsOutput& out) {
  using namespace detail;
  check_input(in);
  const Kernel k(in.hypot);
  std::vector<Outline> outlines(in.n_outlines);
  for (std::size_t j = 0; j < in.n_outlines; ++j) {
    const double* b = in.bounds + 4 * j;
    outlines[j] = Outline{in.outline_points + 2 * in.offsets[j], static_cast<std::size_t>(in.offsets[j + 1] - in.offsets[j]),
                          in.closed[j], b[0], b[1], b[2], b[3], in.outline_stroke[j]};
  }
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
    const Straight body = straight(k, a0, b0, s, e, axf, in.heads + 2 * i, in.stroke[i], in.scale[i], rel);
    double* box = out.boxes + 4 * i;
    box[0] = py_min(body.a.x, body.b.x);
    box[1] = py_min(body.a.y, body.b.y);
    box[2] = py_max(body.a.x, body.b.x);
    box[3] = py_max(body.a.y, body.b.y);
    double* ends = out.ends + 4 * i;
    ends[0] = body.a.x;
    ends[1] = body.a.y;
    ends[2] = body.b.x;
    ends[3] = body.b.y;
    out.valid[i] = body.valid;
  }
}

}  // namespace spatialobs
