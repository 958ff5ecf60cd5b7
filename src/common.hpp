// Helpers shared by the binding translation units: argument checks with the
// GIL held, and zero-copy hand-off of result vectors to numpy.
#pragma once

#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <array>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "spatialobs/box.hpp"

namespace spatialobs::bind {

namespace py = pybind11;

inline std::string dtype_name(const py::array& a) { return py::str(a.dtype()).cast<std::string>(); }

template <class T>
inline const char* dtype_label();
template <>
inline const char* dtype_label<double>() { return "float64"; }
template <>
inline const char* dtype_label<std::int64_t>() { return "int64"; }
template <>
inline const char* dtype_label<bool>() { return "bool"; }

// A C-contiguous array of exactly dtype T, else std::invalid_argument saying
// how to fix it. No silent conversion: a wrong dtype is the caller's bug.
template <class T>
inline void check_array(const py::array& a, const char* name) {
  if (!a.dtype().equal(py::dtype::of<T>())) {
    throw std::invalid_argument(std::string(name) + " must have dtype " + dtype_label<T>() + ", got " +
                                dtype_name(a) + "; convert it with np.ascontiguousarray(" + name + ", dtype=np." +
                                dtype_label<T>() + ")");
  }
  if (!(a.flags() & py::array::c_style)) {
    throw std::invalid_argument(std::string(name) + " must be C-contiguous; pass np.ascontiguousarray(" + name + ")");
  }
}

// An (n, 4) float64 C-contiguous array of boxes; returns n.
inline std::size_t check_boxes_array(const py::array& a, const char* name = "boxes") {
  if (a.ndim() != 2 || a.shape(1) != 4) {
    std::string shape = "(";
    for (py::ssize_t d = 0; d < a.ndim(); ++d) shape += (d ? ", " : "") + std::to_string(a.shape(d));
    shape += a.ndim() == 1 ? ",)" : ")";
    throw std::invalid_argument(std::string(name) + " must have shape (n, 4) as rows [x0, y0, x1, y1], got shape " +
                                shape);
  }
  check_array<double>(a, name);
  return static_cast<std::size_t>(a.shape(0));
}

// A 1-D array of dtype T and length n.
template <class T>
inline const T* check_column(const py::array& a, std::size_t n, const char* name) {
  if (a.ndim() != 1 || static_cast<std::size_t>(a.shape(0)) != n) {
    throw std::invalid_argument(std::string(name) + " must be a 1-D array with one value per box (" +
                                std::to_string(n) + ")");
  }
  check_array<T>(a, name);
  return static_cast<const T*>(a.data());
}

inline Rect to_rect(const std::array<double, 4>& b) { return Rect{b[0], b[1], b[2], b[3]}; }

// Moves v into a heap vector owned by a capsule: the numpy array shares its
// buffer, no copy.
template <class T>
inline py::array_t<T> to_numpy(std::vector<T>&& v, std::vector<py::ssize_t> shape) {
  auto* heap = new std::vector<T>(std::move(v));
  py::capsule owner(heap, [](void* p) { delete static_cast<std::vector<T>*>(p); });
  return py::array_t<T>(std::move(shape), heap->data(), owner);
}

// A row-layout pair vector [a0, a1, ..., b0, b1, ...] as a (2, k) array
// (row 0 the first of each pair, the layout shapely uses), without a copy.
inline py::array_t<std::int64_t> pairs_to_numpy(std::vector<std::int64_t>&& rows) {
  const auto k = static_cast<py::ssize_t>(rows.size() / 2);
  return to_numpy(std::move(rows), {py::ssize_t{2}, k});
}

void register_arrows(py::module_& m);
void register_box_index(py::module_& m);
void register_coverage(py::module_& m);
void register_elbow(py::module_& m);
void register_geometry(py::module_& m);
void register_placement(py::module_& m);
void register_screen(py::module_& m);
void register_text(py::module_& m);

}  // namespace spatialobs::bind
