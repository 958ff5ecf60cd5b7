// Binding of the elbow router: one arrow a call, its terminals as plain Python
// tuples (the outline's points are read where they are, no array is built).
#include <array>
#include <string>
#include <vector>

#include "common.hpp"
#include "spatialobs/elbow.hpp"

namespace spatialobs::bind {

namespace {

constexpr const char* kTermShape =
    " must be None or a tuple (points, closed, xf, anchor, precise, exact, edge_snap, target_stroke)";

double to_double(PyObject* o, const std::string& what) {
  const double v = PyFloat_AsDouble(o);
  if (v == -1.0 && PyErr_Occurred()) {
    PyErr_Clear();
    throw std::invalid_argument(what + " must be a number");
  }
  return v;
}

// Reads `n` numbers of a sequence into out.
void read_numbers(const py::handle& seq, std::size_t n, double* out, const std::string& what) {
  PyObject* fast = PySequence_Fast(seq.ptr(), "");
  if (fast == nullptr) {
    PyErr_Clear();
    throw std::invalid_argument(what + " must be a sequence of " + std::to_string(n) + " numbers");
  }
  py::object keep = py::reinterpret_steal<py::object>(fast);
  if (static_cast<std::size_t>(PySequence_Fast_GET_SIZE(fast)) != n) {
    throw std::invalid_argument(what + " must be a sequence of " + std::to_string(n) + " numbers, got " +
                                std::to_string(PySequence_Fast_GET_SIZE(fast)));
  }
  PyObject** items = PySequence_Fast_ITEMS(fast);
  for (std::size_t i = 0; i < n; ++i) out[i] = to_double(items[i], what);
}

bool read_terminal(const py::object& obj, const char* name, ElbowTerminal& t, std::vector<double>& points) {
  if (obj.is_none()) return false;
  if (!py::isinstance<py::tuple>(obj) || py::len(obj) != 8) throw std::invalid_argument(std::string(name) + kTermShape);
  const py::tuple tup = py::reinterpret_borrow<py::tuple>(obj);
  const std::string pname = std::string(name) + " outline points";
  PyObject* fast = PySequence_Fast(tup[0].ptr(), "");
  if (fast == nullptr) {
    PyErr_Clear();
    throw std::invalid_argument(pname + " must be a sequence of (x, y) pairs");
  }
  py::object keep = py::reinterpret_steal<py::object>(fast);
  const auto n = static_cast<std::size_t>(PySequence_Fast_GET_SIZE(fast));
  if (n == 0) throw std::invalid_argument(std::string(name) + " outline has no points");
  PyObject** items = PySequence_Fast_ITEMS(fast);
  points.resize(2 * n);
  for (std::size_t i = 0; i < n; ++i) {
    PyObject* p = items[i];
    if (PyTuple_Check(p) && PyTuple_GET_SIZE(p) == 2) {
      points[2 * i] = to_double(PyTuple_GET_ITEM(p, 0), pname);
      points[2 * i + 1] = to_double(PyTuple_GET_ITEM(p, 1), pname);
    } else {
      read_numbers(py::handle(p), 2, &points[2 * i], pname + " (each an (x, y) pair)");
    }
  }
  t.points = points.data();
  t.n_points = n;
  t.closed = py::cast<bool>(tup[1]);
  read_numbers(tup[2], 4, t.xf, std::string(name) + " xf");
  read_numbers(tup[3], 2, t.anchor, std::string(name) + " anchor");
  t.precise = py::cast<bool>(tup[4]);
  t.exact = py::cast<bool>(tup[5]);
  t.edge_snap = py::cast<bool>(tup[6]);
  t.target_stroke = to_double(tup[7].ptr(), std::string(name) + " target_stroke");
  return true;
}

inline py::tuple pair(double x, double y) {
  return py::reinterpret_steal<py::tuple>(PyTuple_Pack(2, py::float_(x).ptr(), py::float_(y).ptr()));
}

py::object elbow_route_binding(const std::array<double, 4>& arrow_xf, const std::array<double, 2>& start_free,
                               const std::array<double, 2>& end_free, const py::object& start,
                               const py::object& end, bool same_target, bool head_start, bool head_end,
                               double stroke, double scale, double expand_len, double min_len, double mid,
                               int hypot_variant) {
  if (hypot_variant != 0 && hypot_variant != 1) {
    throw std::invalid_argument("hypot_variant must be 0 (CPython 3.10-3.11) or 1 (3.12+), got " +
                                std::to_string(hypot_variant));
  }
  ElbowInput in{};
  for (int i = 0; i < 4; ++i) in.arrow_xf[i] = arrow_xf[i];
  in.free_start[0] = start_free[0];
  in.free_start[1] = start_free[1];
  in.free_end[0] = end_free[0];
  in.free_end[1] = end_free[1];
  ElbowTerminal ts, te;
  std::vector<double> ps, pe;
  if (read_terminal(start, "start", ts, ps)) in.start = &ts;
  if (read_terminal(end, "end", te, pe)) in.end = &te;
  in.same_target = same_target;
  in.heads[0] = head_start;
  in.heads[1] = head_end;
  in.stroke = stroke;
  in.scale = scale;
  in.expand_len = expand_len;
  in.min_len = min_len;
  in.mid = mid;
  in.variant = static_cast<HypotVariant>(hypot_variant);
  ElbowOutput out;
  if (!elbow_route(in, out)) return py::none();
  const std::size_t n = out.points.size() / 2;
  py::list pts(n);
  for (std::size_t i = 0; i < n; ++i) pts[i] = pair(out.points[2 * i], out.points[2 * i + 1]);
  py::object mid_pt = out.has_mid ? py::object(pair(out.mid[0], out.mid[1])) : py::object(py::none());
  return py::make_tuple(pts, pair(out.start_handle[0], out.start_handle[1]),
                        pair(out.end_handle[0], out.end_handle[1]), mid_pt, out.start_offset, out.end_offset);
}

}  // namespace

void register_elbow(py::module_& m) {
  m.def("elbow_route", &elbow_route_binding, py::arg("arrow_xf"), py::arg("start_free"), py::arg("end_free"),
        py::arg("start"), py::arg("end"), py::arg("same_target"), py::arg("head_start"), py::arg("head_end"),
        py::arg("stroke"), py::arg("scale"), py::arg("expand_len"), py::arg("min_len"), py::arg("mid"),
        py::arg("hypot_variant") = 0,
        "One tldraw elbow arrow routed as the Python twin (spatialobs.canvas.document.elbow) routes it: "
        "(points, start_handle, end_handle, midpoint or None, start_offset, end_offset), or None without a route.");
}

}  // namespace spatialobs::bind
