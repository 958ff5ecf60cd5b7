// Binding of the polygon coverage kernel: check and allocate with the GIL held,
// compute on raw pointers without it, return numpy arrays.
#include "common.hpp"
#include "spatialobs/coverage.hpp"

namespace spatialobs::bind {

namespace {

py::tuple polygon_coverage_binding(const py::array& verts, const py::array& starts, const py::array& targets,
                                   const py::array& cover_starts, const py::array& cover) {
  if (verts.ndim() != 2 || verts.shape(1) != 2) {
    throw std::invalid_argument("verts must have shape (m, 2) as rows [x, y]");
  }
  check_array<double>(verts, "verts");
  const std::size_t m = static_cast<std::size_t>(verts.shape(0));
  if (starts.ndim() != 1 || starts.shape(0) < 1) throw std::invalid_argument("starts must be a 1-D array of k + 1 offsets");
  const std::size_t k = static_cast<std::size_t>(starts.shape(0)) - 1;
  const std::int64_t* st = check_column<std::int64_t>(starts, k + 1, "starts");
  if (targets.ndim() != 1) throw std::invalid_argument("targets must be a 1-D array of polygon indices");
  const std::size_t t = static_cast<std::size_t>(targets.shape(0));
  const std::int64_t* tg = check_column<std::int64_t>(targets, t, "targets");
  const std::int64_t* cs = check_column<std::int64_t>(cover_starts, t + 1, "cover_starts");
  if (cover.ndim() != 1) throw std::invalid_argument("cover must be a 1-D array of polygon indices");
  const std::size_t c = static_cast<std::size_t>(cover.shape(0));
  const std::int64_t* cv = check_column<std::int64_t>(cover, c, "cover");
  PolygonSet polys{static_cast<const double*>(verts.data()), m, st, k};
  py::array_t<double> area(static_cast<py::ssize_t>(t)), covered(static_cast<py::ssize_t>(t));
  py::array_t<std::int64_t> best(static_cast<py::ssize_t>(t));
  double* a = area.mutable_data();
  double* cd = covered.mutable_data();
  std::int64_t* b = best.mutable_data();
  {
    py::gil_scoped_release release;  // raw buffers only
    polygon_coverage(polys, tg, t, cs, cv, c, a, cd, b);
  }
  return py::make_tuple(area, covered, best);
}

}  // namespace

void register_coverage(py::module_& m) {
  m.def("polygon_coverage", &polygon_coverage_binding, py::arg("verts"), py::arg("starts"), py::arg("targets"),
        py::arg("cover_starts"), py::arg("cover"),
        "Per query: target area, area covered by the union of its covers, and the cover meeting it most.");
}

}  // namespace spatialobs::bind
