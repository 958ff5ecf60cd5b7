// Binding of the packed static box index.
#include <memory>

#include "common.hpp"
#include "spatialobs/box_index.hpp"

namespace spatialobs::bind {

void register_box_index(py::module_& m) {
  py::class_<BoxIndex>(m, "BoxIndex")
      .def(py::init([](const py::array& boxes, py::ssize_t node_size) {
             const std::size_t n = check_boxes_array(boxes);
             if (node_size < 0) throw std::invalid_argument("node_size must be positive");
             const double* b = static_cast<const double*>(boxes.data());
             py::gil_scoped_release release;  // raw buffer only; the index copies it
             return std::make_unique<BoxIndex>(b, n, static_cast<std::size_t>(node_size));
           }),
           py::arg("boxes"), py::arg("node_size") = BoxIndex::kDefaultNodeSize)
      .def("__len__", &BoxIndex::size)
      .def_property_readonly("node_size", &BoxIndex::node_size)
      .def_property_readonly("bounds",
                             [](const BoxIndex& ix) -> py::object {
                               if (ix.size() == 0) return py::none();
                               const Rect r = ix.bounds();
                               return py::make_tuple(r.x0, r.y0, r.x1, r.y1);
                             })
      .def(
          "query",
          [](const BoxIndex& ix, const std::array<double, 4>& box) {
            const Rect q = to_rect(box);
            check_box(q, "box");
            std::vector<std::int64_t> out;
            {
              py::gil_scoped_release release;  // the index is immutable after construction
              out = ix.query(q);
            }
            const auto k = static_cast<py::ssize_t>(out.size());
            return to_numpy(std::move(out), {k});
          },
          py::arg("box"))
      .def(
          "query_many",
          [](const BoxIndex& ix, const py::array& boxes) {
            const std::size_t m = check_boxes_array(boxes, "queries");
            const double* q = static_cast<const double*>(boxes.data());
            std::vector<std::int64_t> out;
            {
              py::gil_scoped_release release;  // the index is immutable; a raw buffer only
              out = ix.query_many(q, m);
            }
            return pairs_to_numpy(std::move(out));
          },
          py::arg("boxes"))
      .def(
          "query_containing",
          [](const BoxIndex& ix, const std::array<double, 4>& box) {
            const Rect q = to_rect(box);
            check_box(q, "box");
            std::vector<std::int64_t> out;
            {
              py::gil_scoped_release release;  // the index is immutable after construction
              ix.search_containing(q, [&out](std::size_t i) { out.push_back(static_cast<std::int64_t>(i)); });
              std::sort(out.begin(), out.end());
            }
            const auto k = static_cast<py::ssize_t>(out.size());
            return to_numpy(std::move(out), {k});
          },
          py::arg("box"))
      .def("query_pairs", [](const BoxIndex& ix) {
        std::vector<std::int64_t> pairs;
        {
          py::gil_scoped_release release;  // the index is immutable after construction
          pairs = ix.query_pairs();
        }
        return pairs_to_numpy(std::move(pairs));
      });
}

}  // namespace spatialobs::bind
