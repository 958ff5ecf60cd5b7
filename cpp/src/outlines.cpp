#include "spatialobs/outlines.hpp"

#include <cmath>
#include <stdexcept>
#include <string>
#include <vector>

namespace spatialobs {

namespace {

constexpr double kPi = 3.141592653589793;  // math.pi
constexpr double kPi2 = 2 * kPi;          // 2 * math.pi, exact

// Python's min(a, b) and max(a, b): the first unless the second compares below
// (above) it, which decides NaN and the sign of a zero as Python does.
inline double py_min(double a, double b) { return b < a ? b : a; }
inline double py_max(double a, double b) { return b > a ? b : a; }

struct Poly {
  std::vector<double> xy;  // rows [x, y]
  void add(double x, double y) {
    xy.push_back(x);
    xy.push_back(y);
  }
  std::size_t size() const { return xy.size() / 2; }
};

// tldraw's PathBuilder closing a sub-path of lines: the start again unless the
// last point is within 1e-6 of it on both axes (`_Path.close`).
void close_path(Poly& p) {
  const double sx = p.xy[0], sy = p.xy[1];
  const double lx = p.xy[p.xy.size() - 2], ly = p.xy[p.xy.size() - 1];
  if (!(std::fabs(lx - sx) <= 1e-6 && std::fabs(ly - sy) <= 1e-6)) p.add(sx, sy);
}

// Python's min / max over the xs (ys) of a point list, in order (`_bbox`).
void bbox(const double* xy, std::size_t n, double* out) {
  double x0 = xy[0], y0 = xy[1], x1 = xy[0], y1 = xy[1];
  for (std::size_t i = 1; i < n; ++i) {
    const double x = xy[2 * i], y = xy[2 * i + 1];
    if (x < x0) x0 = x;
    if (y < y0) y0 = y;
    if (x > x1) x1 = x;
    if (y > y1) y1 = y;
  }
  out[0] = x0;
  out[1] = y0;
  out[2] = x1;
  out[3] = y1;
}

// `_polygon_vertices`: a regular polygon in the box, stretched to fill it.
void polygon(Poly& p, double w, double h, int sides) {
  const double cx = w / 2, cy = h / 2;
  for (int i = 0; i < sides; ++i) {
    const double t = -kPi / 2 + static_cast<double>(i) * (kPi2 / sides);
    p.add(cx + cx * std::cos(t), cy + cy * std::sin(t));
  }
  double b[4];
  bbox(p.xy.data(), p.size(), b);
  const double bw = b[2] - b[0], bh = b[3] - b[1];
  if (w - bw != 0 || h - bh != 0) {
    for (std::size_t i = 0; i < p.size(); ++i) {
      p.xy[2 * i] = (p.xy[2 * i] - b[0]) / bw * w;
      p.xy[2 * i + 1] = (p.xy[2 * i + 1] - b[1]) / bh * h;
    }
  }
}

// `_star`: tldraw's five-pointed star.
void star(Poly& p, double w, double h) {
  const int sides = 5;
  const double step = kPi2 / sides / 2;
  const int right = (sides / 4) * 2;
  const int left = sides * 2 - right;
  const int bottom = (sides / 2) * 2;
  const double max_x = (std::cos(-kPi / 2 + right * step) * w) / 2;
  const double min_x = (std::cos(-kPi / 2 + left * step) * w) / 2;
  const double min_y = (std::sin(-kPi / 2) * h) / 2;
  const double max_y = (std::sin(-kPi / 2 + bottom * step) * h) / 2;
  const double diff_x = w - std::fabs(max_x - min_x);
  const double diff_y = h - std::fabs(max_y - min_y);
  const double off_x = w / 2 + min_x - (w / 2 - max_x);
  const double off_y = h / 2 + min_y - (h / 2 - max_y);
  const double cx = (w - off_x) / 2, cy = (h - off_y) / 2;
  const double ox = (w + diff_x) / 2, oy = (h + diff_y) / 2;
  const double ix = ox / 2, iy = oy / 2;
  for (int i = 0; i < sides * 2; ++i) {
    p.add(cx + ((i % 2) ? ix : ox) * std::cos(-kPi / 2 + i * step),
          cy + ((i % 2) ? iy : oy) * std::sin(-kPi / 2 + i * step));
  }
}

// `_geo_points` for the kinds drawn with straight lines, then closed.
void geo_points(Poly& p, OutlineKind kind, double w, double h) {
  const double cx = w / 2, cy = h / 2;
  switch (kind) {
    case OutlineKind::kTriangle:
      p.add(cx, 0.0), p.add(w, h), p.add(0.0, h);
      break;
    case OutlineKind::kDiamond:
      p.add(cx, 0.0), p.add(w, cy), p.add(cx, h), p.add(0.0, cy);
      break;
    case OutlineKind::kStar:
      star(p, w, h);
      break;
    case OutlineKind::kPentagon:
      polygon(p, w, h, 5);
      break;
    case OutlineKind::kHexagon:
      polygon(p, w, h, 6);
      break;
    case OutlineKind::kOctagon:
      polygon(p, w, h, 8);
      break;
    case OutlineKind::kRhombus:
    case OutlineKind::kRhombus2:
    case OutlineKind::kTrapezoid: {
      const double off = py_min(w * 0.38, h * 0.38);
      if (kind == OutlineKind::kRhombus) {
        p.add(off, 0.0), p.add(w, 0.0), p.add(w - off, h), p.add(0.0, h);
      } else if (kind == OutlineKind::kRhombus2) {
        p.add(0.0, 0.0), p.add(w - off, 0.0), p.add(w, h), p.add(off, h);
      } else {
        p.add(off, 0.0), p.add(w - off, 0.0), p.add(w, h), p.add(0.0, h);
      }
      break;
    }
    case OutlineKind::kArrowLeft:
    case OutlineKind::kArrowRight: {
      const double ox = py_min(w, h) * 0.38, oy = h * 0.16;
      if (kind == OutlineKind::kArrowLeft) {
        p.add(ox, 0.0), p.add(ox, oy), p.add(w, oy), p.add(w, h - oy), p.add(ox, h - oy), p.add(ox, h),
            p.add(0.0, h / 2);
      } else {
        p.add(0.0, oy), p.add(w - ox, oy), p.add(w - ox, 0.0), p.add(w, h / 2), p.add(w - ox, h),
            p.add(w - ox, h - oy), p.add(0.0, h - oy);
      }
      break;
    }
    case OutlineKind::kArrowUp:
    case OutlineKind::kArrowDown: {
      const double ox = w * 0.16, oy = py_min(w, h) * 0.38;
      if (kind == OutlineKind::kArrowUp) {
        p.add(w / 2, 0.0), p.add(w, oy), p.add(w - ox, oy), p.add(w - ox, h), p.add(ox, h), p.add(ox, oy),
            p.add(0.0, oy);
      } else {
        p.add(ox, 0.0), p.add(w - ox, 0.0), p.add(w - ox, h - oy), p.add(w, h - oy), p.add(w / 2, h),
            p.add(0.0, h - oy), p.add(ox, h - oy);
      }
      break;
    }
    default:  // kRectangle
      p.add(0.0, 0.0), p.add(w, 0.0), p.add(w, h), p.add(0.0, h);
      break;
  }
  close_path(p);
}

}  // namespace

OutlinesOutput target_outlines(const OutlinesInput& in) {
  std::size_t n_ex = 0;
  for (std::size_t k = 0; k < in.n; ++k) {
    const std::int64_t kind = in.kind[k];
    if (kind < -1 || kind > kOutlineKindLast) {
      throw std::invalid_argument("kind of outline " + std::to_string(k) + " must be in [-1, " +
                                  std::to_string(kOutlineKindLast) + "], got " + std::to_string(kind));
    }
    if (kind == -1) ++n_ex;
  }
  if (n_ex != in.n_explicit) {
    throw std::invalid_argument("the batch has " + std::to_string(n_ex) +
                                " outlines of kind -1 (explicit) but " + std::to_string(in.n_explicit) +
                                " explicit outlines were given");
  }
  if (in.n_explicit > 0 || in.ex_offsets != nullptr) {
    if (in.ex_offsets[0] != 0) {
      throw std::invalid_argument("ex_offsets must start at 0, got " + std::to_string(in.ex_offsets[0]));
    }
    for (std::size_t e = 0; e < in.n_explicit; ++e) {
      if (in.ex_offsets[e + 1] <= in.ex_offsets[e]) {
        throw std::invalid_argument("explicit outline " + std::to_string(e) + " has no points (ex_offsets " +
                                    std::to_string(in.ex_offsets[e]) + " to " + std::to_string(in.ex_offsets[e + 1]) +
                                    ")");
      }
    }
  }
  OutlinesOutput out;
  out.offsets.reserve(in.n + 1);
  out.offsets.push_back(0);
  out.points.reserve(in.n * 10);
  out.bounds.resize(in.n * 4);
  Poly p;
  std::size_t e = 0;
  for (std::size_t k = 0; k < in.n; ++k) {
    const auto kind = static_cast<OutlineKind>(in.kind[k]);
    double* b = out.bounds.data() + 4 * k;
    if (kind == OutlineKind::kExplicit) {
      const std::int64_t a = in.ex_offsets[e], z = in.ex_offsets[e + 1];
      out.points.insert(out.points.end(), in.ex_points + 2 * a, in.ex_points + 2 * z);
      for (int j = 0; j < 4; ++j) b[j] = in.ex_bounds[4 * e + j];
      ++e;
    } else if (kind == OutlineKind::kBox) {
      const double w = in.size[2 * k], h = in.size[2 * k + 1];
      const double box[8] = {0.0, 0.0, w, 0.0, w, h, 0.0, h};
      out.points.insert(out.points.end(), box, box + 8);
      b[0] = 0.0, b[1] = 0.0, b[2] = w, b[3] = h;
    } else {
      const double gw = py_max(1.0, in.size[2 * k]), gh = py_max(1.0, in.size[2 * k + 1]);
      p.xy.clear();
      geo_points(p, kind, gw, gh);
      const bool fx = in.flip[2 * k], fy = in.flip[2 * k + 1];
      if (fx || fy) {
        for (std::size_t i = 0; i < p.size(); ++i) {
          if (fx) p.xy[2 * i] = gw - p.xy[2 * i];
          if (fy) p.xy[2 * i + 1] = gh - p.xy[2 * i + 1];
        }
      }
      bbox(p.xy.data(), p.size(), b);
      out.points.insert(out.points.end(), p.xy.begin(), p.xy.end());
    }
    out.offsets.push_back(static_cast<std::int64_t>(out.points.size() / 2));
  }
  return out;
}

}  // namespace spatialobs
