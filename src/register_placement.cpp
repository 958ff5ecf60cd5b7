// Binding of the greedy placement kernel: check and allocate with the GIL
// held, place without it, return the corners and the failed box.
#include <string>

#include "common.hpp"
#include "spatialobs/placement.hpp"

namespace spatialobs::bind {

namespace {

// An (n, 2) float64 C-contiguous array; returns n.
std::size_t check_pairs_array(const py::array& a, const char* name) {
  if (a.ndim() != 2 || a.shape(1) != 2) {
    throw std::invalid_argument(std::string(name) + " must have shape (n, 2), got " + std::to_string(a.ndim()) +
                                " dimension(s)" + (a.ndim() == 2 ? " of width " + std::to_string(a.shape(1)) : ""));
  }
  check_array<double>(a, name);
  return static_cast<std::size_t>(a.shape(0));
}

py::tuple place_greedy_binding(const py::array& sizes, const py::array& wants, const std::array<double, 4>& room,
                               const py::array& obstacles, const py::array& order) {
  PlacementInput in{};
  in.n = check_pairs_array(sizes, "sizes");
  if (check_pairs_array(wants, "wants") != in.n) {
    throw std::invalid_argument("wants must have one row per size (" + std::to_string(in.n) + "), got " +
                                std::to_string(wants.shape(0)));
  }
  in.m = check_boxes_array(obstacles, "obstacles");
  if (order.ndim() != 1) throw std::invalid_argument("order must be a 1-D array of box indices");
  check_array<std::int64_t>(order, "order");
  in.sizes = static_cast<const double*>(sizes.data());
  in.wants = static_cast<const double*>(wants.data());
  in.obstacles = static_cast<const double*>(obstacles.data());
  in.order = static_cast<const std::int64_t*>(order.data());
  in.n_order = static_cast<std::size_t>(order.shape(0));
  in.room = to_rect(room);
  py::array_t<double> corners({static_cast<py::ssize_t>(in.n), py::ssize_t{2}});
  double* c = corners.mutable_data();
  std::fill(c, c + 2 * in.n, 0.0);
  std::int64_t failed = -1;
  {
    // Safe without the GIL: only raw buffers kept alive by the arguments above.
    py::gil_scoped_release release;
    failed = place_greedy(in, c);
  }
  return py::make_tuple(corners, failed);
}

}  // namespace

void register_placement(py::module_& m) {
  m.def("place_greedy", &place_greedy_binding, py::arg("sizes"), py::arg("wants"), py::arg("room"),
        py::arg("obstacles"), py::arg("order"),
        "Corners of boxes placed in turn at the free spot nearest each wish; (corners, failed box or -1).");
}

}  // namespace spatialobs::bind
