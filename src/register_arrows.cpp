// Binding of the straight-arrow kernel: check shapes and dtypes and allocate
// with the GIL held, resolve without it, return the boxes, ends and validity.
#include <initializer_list>
#include <string>

#include "common.hpp"
#include "spatialobs/arrows.hpp"
#include "spatialobs/outlines.hpp"

namespace spatialobs::bind {

namespace {

std::string shape_text(const py::array& a) {
  std::string s = "(";
  for (py::ssize_t d = 0; d < a.ndim(); ++d) s += (d ? ", " : "") + std::to_string(a.shape(d));
  return s + (a.ndim() == 1 ? ",)" : ")");
}

// An array of dtype T and exactly `shape` (a -1 takes any length), C-contiguous; returns its data.
template <class T>
const T* checked(const py::array& a, const char* name, std::initializer_list<py::ssize_t> shape) {
  bool ok = a.ndim() == static_cast<py::ssize_t>(shape.size());
  py::ssize_t d = 0;
  std::string want = "(";
  for (py::ssize_t s : shape) {
    want += (d ? ", " : "") + (s < 0 ? std::string("k") : std::to_string(s));
    if (ok && s >= 0 && a.shape(d) != s) ok = false;
    ++d;
  }
  want += shape.size() == 1 ? ",)" : ")";
  if (!ok) throw std::invalid_argument(std::string(name) + " must have shape " + want + ", got " + shape_text(a));
  check_array<T>(a, name);
  return static_cast<const T*>(a.data());
}

StraightArrowsInput straight_input(const py::array& px, const py::array& py_, const py::array& rotation,
                                          const py::array& arrow_row, const py::array& points,
                                          const py::array& scale, const py::array& stroke, const py::array& heads,
                                          const py::array& target, const py::array& outline,
                                          const py::array& box_outline, const py::array& anchor,
                                          const py::array& precise, const py::array& exact,
                                          const py::array& offsets, const py::array& outline_points,
                                          const py::array& closed, const py::array& bounds,
                                          const py::array& outline_stroke, int hypot_variant) {
  StraightArrowsInput in{};
  if (px.ndim() != 1) throw std::invalid_argument("px must have shape (n_rows,), got " + shape_text(px));
  const py::ssize_t n_rows = px.shape(0);
  in.n_rows = static_cast<std::size_t>(n_rows);
  in.px = checked<double>(px, "px", {n_rows});
  in.py = checked<double>(py_, "py", {n_rows});
  in.rotation = checked<double>(rotation, "rotation", {n_rows});
  if (arrow_row.ndim() != 1) {
    throw std::invalid_argument("arrow_row must have shape (n,), got " + shape_text(arrow_row));
  }
  const py::ssize_t n = arrow_row.shape(0);
  in.n = static_cast<std::size_t>(n);
  in.arrow_row = checked<std::int64_t>(arrow_row, "arrow_row", {n});
  in.points = checked<double>(points, "points", {n, 4});
  in.scale = checked<double>(scale, "scale", {n});
  in.stroke = checked<double>(stroke, "stroke", {n});
  in.heads = checked<bool>(heads, "heads", {n, 2});
  in.target = checked<std::int64_t>(target, "target", {n, 2});
  in.outline = checked<std::int64_t>(outline, "outline", {n, 2});
  in.box_outline = checked<std::int64_t>(box_outline, "box_outline", {n, 2});
  in.anchor = checked<double>(anchor, "anchor", {n, 4});
  in.precise = checked<bool>(precise, "precise", {n, 2});
  in.exact = checked<bool>(exact, "exact", {n, 2});
  if (closed.ndim() != 1) throw std::invalid_argument("closed must have shape (k,), got " + shape_text(closed));
  const py::ssize_t k = closed.shape(0);
  in.n_outlines = static_cast<std::size_t>(k);
  in.closed = checked<bool>(closed, "closed", {k});
  in.offsets = checked<std::int64_t>(offsets, "offsets", {k + 1});
  in.outline_points = checked<double>(outline_points, "outline_points", {-1, 2});
  if (in.offsets[k] != outline_points.shape(0)) {
    throw std::invalid_argument("offsets must end at the number of outline points (" +
                                std::to_string(outline_points.shape(0)) + "), got " + std::to_string(in.offsets[k]));
  }
  in.bounds = checked<double>(bounds, "bounds", {k, 4});
  in.outline_stroke = checked<double>(outline_stroke, "outline_stroke", {k});
  if (hypot_variant != 0 && hypot_variant != 1) {
    throw std::invalid_argument("hypot_variant must be 0 (CPython 3.10-3.11) or 1 (3.12+), got " +
                                std::to_string(hypot_variant));
  }
  in.hypot = static_cast<HypotVariant>(hypot_variant);
  return in;
}

#define SPATIALOBS_ARROW_ARGS                                                                                 \
  const py::array &px, const py::array &py_, const py::array &rotation, const py::array &arrow_row,          \
      const py::array &points, const py::array &scale, const py::array &stroke, const py::array &heads,      \
      const py::array &target, const py::array &outline, const py::array &box_outline,                       \
      const py::array &anchor, const py::array &precise, const py::array &exact, const py::array &offsets,   \
      const py::array &outline_points, const py::array &closed, const py::array &bounds,                     \
      const py::array &outline_stroke
#define SPATIALOBS_ARROW_NAMES                                                                                \
  px, py_, rotation, arrow_row, points, scale, stroke, heads, target, outline, box_outline, anchor, precise, \
      exact, offsets, outline_points, closed, bounds, outline_stroke

py::tuple resolve_straight_arrows_binding(SPATIALOBS_ARROW_ARGS, int hypot_variant) {
  const StraightArrowsInput in = straight_input(SPATIALOBS_ARROW_NAMES, hypot_variant);
  const auto n = static_cast<py::ssize_t>(in.n);
  py::array_t<double> boxes({n, py::ssize_t{4}});
  py::array_t<double> ends({n, py::ssize_t{4}});
  py::array_t<bool> valid({n});
  StraightArrowsOutput out{boxes.mutable_data(), ends.mutable_data(), valid.mutable_data()};
  {
    // Safe without the GIL: only raw buffers kept alive by the arguments above.
    py::gil_scoped_release release;
    resolve_straight_arrows(in, out);
  }
  return py::make_tuple(boxes, ends, valid);
}

py::tuple resolve_arrows_binding(SPATIALOBS_ARROW_ARGS, const py::array& bend, const py::array& arc,
                                 int hypot_variant) {
  ArrowsInput in{straight_input(SPATIALOBS_ARROW_NAMES, hypot_variant), nullptr, nullptr};
  const auto n = static_cast<py::ssize_t>(in.base.n);
  in.bend = checked<double>(bend, "bend", {n});
  in.arc = checked<bool>(arc, "arc", {n});
  py::array_t<double> boxes({n, py::ssize_t{4}});
  py::array_t<double> ends({n, py::ssize_t{4}});
  py::array_t<bool> valid({n});
  py::array_t<bool> is_arc({n});
  py::array_t<double> centers({n, py::ssize_t{2}});
  py::array_t<bool> sweep_large({n, py::ssize_t{2}});
  ArrowsOutput out{{boxes.mutable_data(), ends.mutable_data(), valid.mutable_data()},
                   is_arc.mutable_data(),
                   centers.mutable_data(),
                   sweep_large.mutable_data()};
  {
    py::gil_scoped_release release;
    resolve_arrows(in, out);
  }
  return py::make_tuple(boxes, ends, valid, is_arc, centers, sweep_large);
}

py::tuple place_arrow_labels_binding(const py::array& is_arc, const py::array& ends, const py::array& centers,
                                     const py::array& sweep_large, const py::array& body_boxes,
                                     const py::array& size, const py::array& pad, const py::array& position,
                                     const py::array& clamp, int hypot_variant) {
  LabelsInput in{};
  if (is_arc.ndim() != 1) throw std::invalid_argument("is_arc must have shape (n,), got " + shape_text(is_arc));
  const py::ssize_t n = is_arc.shape(0);
  in.n = static_cast<std::size_t>(n);
  in.is_arc = checked<bool>(is_arc, "is_arc", {n});
  in.ends = checked<double>(ends, "ends", {n, 4});
  in.centers = checked<double>(centers, "centers", {n, 2});
  in.sweep_large = checked<bool>(sweep_large, "sweep_large", {n, 2});
  in.body_boxes = checked<double>(body_boxes, "body_boxes", {n, 4});
  in.size = checked<double>(size, "size", {n, 2});
  in.pad = checked<double>(pad, "pad", {n});
  in.position = checked<double>(position, "position", {n});
  in.clamp = checked<bool>(clamp, "clamp", {n, 2});
  if (hypot_variant != 0 && hypot_variant != 1) {
    throw std::invalid_argument("hypot_variant must be 0 (CPython 3.10-3.11) or 1 (3.12+), got " +
                                std::to_string(hypot_variant));
  }
  in.hypot = static_cast<HypotVariant>(hypot_variant);
  py::array_t<double> boxes({n, py::ssize_t{4}});
  py::array_t<double> labels({n, py::ssize_t{4}});
  {
    py::gil_scoped_release release;
    place_arrow_labels(in, boxes.mutable_data(), labels.mutable_data());
  }
  return py::make_tuple(boxes, labels);
}

#undef SPATIALOBS_ARROW_ARGS
#undef SPATIALOBS_ARROW_NAMES

double python_hypot_binding(double x, double y, int hypot_variant) {
  if (hypot_variant != 0 && hypot_variant != 1) {
    throw std::invalid_argument("hypot_variant must be 0 (CPython 3.10-3.11) or 1 (3.12+), got " +
                                std::to_string(hypot_variant));
  }
  return python_hypot(x, y, static_cast<HypotVariant>(hypot_variant));
}

// A result vector handed to numpy without a copy (the array owns it).
template <class T>
py::array_t<T> owned(std::vector<T>&& v, std::initializer_list<py::ssize_t> shape) {
  auto* heap = new std::vector<T>(std::move(v));
  py::capsule owner(heap, [](void* p) { delete static_cast<std::vector<T>*>(p); });
  return py::array_t<T>(std::vector<py::ssize_t>(shape), heap->data(), owner);
}

py::tuple target_outlines_binding(const py::array& kind, const py::array& size, const py::array& flip,
                                  const py::array& ex_offsets, const py::array& ex_points,
                                  const py::array& ex_bounds) {
  OutlinesInput in{};
  if (kind.ndim() != 1) throw std::invalid_argument("kind must have shape (k,), got " + shape_text(kind));
  const py::ssize_t k = kind.shape(0);
  in.n = static_cast<std::size_t>(k);
  in.kind = checked<std::int64_t>(kind, "kind", {k});
  in.size = checked<double>(size, "size", {k, 2});
  in.flip = checked<bool>(flip, "flip", {k, 2});
  if (ex_offsets.ndim() != 1 || ex_offsets.shape(0) < 1) {
    throw std::invalid_argument("ex_offsets must have shape (e + 1,), got " + shape_text(ex_offsets));
  }
  const py::ssize_t e = ex_offsets.shape(0) - 1;
  in.n_explicit = static_cast<std::size_t>(e);
  in.ex_offsets = checked<std::int64_t>(ex_offsets, "ex_offsets", {e + 1});
  in.ex_points = checked<double>(ex_points, "ex_points", {-1, 2});
  in.ex_bounds = checked<double>(ex_bounds, "ex_bounds", {e, 4});
  if (in.ex_offsets[e] != ex_points.shape(0)) {
    throw std::invalid_argument("ex_offsets must end at the number of explicit points (" +
                                std::to_string(ex_points.shape(0)) + "), got " + std::to_string(in.ex_offsets[e]));
  }
  OutlinesOutput out;
  {
    py::gil_scoped_release release;
    out = target_outlines(in);
  }
  const auto m = static_cast<py::ssize_t>(out.points.size() / 2);
  return py::make_tuple(owned(std::move(out.offsets), {k + 1}), owned(std::move(out.points), {m, 2}),
                        owned(std::move(out.bounds), {k, 4}));
}

}  // namespace

void register_arrows(py::module_& m) {
  m.def("resolve_straight_arrows", &resolve_straight_arrows_binding, py::arg("px"), py::arg("py"),
        py::arg("rotation"), py::arg("arrow_row"), py::arg("points"), py::arg("scale"), py::arg("stroke"),
        py::arg("heads"), py::arg("target"), py::arg("outline"), py::arg("box_outline"), py::arg("anchor"),
        py::arg("precise"), py::arg("exact"), py::arg("offsets"), py::arg("outline_points"), py::arg("closed"),
        py::arg("bounds"), py::arg("outline_stroke"), py::arg("hypot_variant") = 0,
        "Straight tldraw arrows resolved against their targets: (boxes, ends, valid), as the Python twin.");
  m.def("resolve_arrows", &resolve_arrows_binding, py::arg("px"), py::arg("py"), py::arg("rotation"),
        py::arg("arrow_row"), py::arg("points"), py::arg("scale"), py::arg("stroke"), py::arg("heads"),
        py::arg("target"), py::arg("outline"), py::arg("box_outline"), py::arg("anchor"), py::arg("precise"),
        py::arg("exact"), py::arg("offsets"), py::arg("outline_points"), py::arg("closed"), py::arg("bounds"),
        py::arg("outline_stroke"), py::arg("bend"), py::arg("arc"), py::arg("hypot_variant") = 0,
        "Arc and straight tldraw arrows resolved against their targets: (boxes, ends, valid, is_arc, centers, "
        "sweep_large), as the Python twin; an arrow is tried as an arc where `arc` is set.");
  m.def("place_arrow_labels", &place_arrow_labels_binding, py::arg("is_arc"), py::arg("ends"), py::arg("centers"),
        py::arg("sweep_large"), py::arg("body_boxes"), py::arg("size"), py::arg("pad"), py::arg("position"),
        py::arg("clamp"), py::arg("hypot_variant") = 0,
        "Arrow labels of measured sizes placed along resolved bodies: (boxes with the label, label boxes), as "
        "the Python twin.");
  m.def("target_outlines", &target_outlines_binding, py::arg("kind"), py::arg("size"), py::arg("flip"),
        py::arg("ex_offsets"), py::arg("ex_points"), py::arg("ex_bounds"),
        "Arrow targets' outlines in a batch: (offsets, points, bounds), boxes and polygonal geo kinds built "
        "as arrows.target_outline builds them, explicit ones (kind -1) copied in order.");
  m.def("python_hypot", &python_hypot_binding, py::arg("x"), py::arg("y"), py::arg("hypot_variant") = 0,
        "CPython's math.hypot(x, y) as the arrow kernel computes it (0: CPython 3.10-3.11, 1: 3.12+).");
}

}  // namespace spatialobs::bind
