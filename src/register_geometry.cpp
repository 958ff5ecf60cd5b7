// Bindings of the geometry kernels: check and allocate with the GIL held,
// compute on raw pointers without it, return numpy arrays.
#include <memory>
#include <string>

#include "common.hpp"
#include "spatialobs/occlusion.hpp"
#include "spatialobs/relations.hpp"
#include "spatialobs/visibility.hpp"

namespace spatialobs::bind {

namespace {

py::tuple visibility_binding(const py::array& boxes, const std::array<double, 4>& viewport, double near_factor) {
  const std::size_t n = check_boxes_array(boxes);
  py::array_t<std::int8_t> labels(static_cast<py::ssize_t>(n));
  py::array_t<double> gaps(static_cast<py::ssize_t>(n));
  const double* b = static_cast<const double*>(boxes.data());
  std::int8_t* l = labels.mutable_data();
  double* g = gaps.mutable_data();
  {
    // Safe without the GIL: only raw buffers kept alive by the arguments above.
    py::gil_scoped_release release;
    visibility(b, n, to_rect(viewport), near_factor, l, g);
  }
  return py::make_tuple(labels, gaps);
}

py::array_t<std::int8_t> visibility_labels_binding(const py::array& boxes, const std::array<double, 4>& viewport,
                                                  double near_factor) {
  const std::size_t n = check_boxes_array(boxes);
  py::array_t<std::int8_t> labels(static_cast<py::ssize_t>(n));
  const double* b = static_cast<const double*>(boxes.data());
  std::int8_t* l = labels.mutable_data();
  {
    py::gil_scoped_release release;
    visibility(b, n, to_rect(viewport), near_factor, l, nullptr);
  }
  return labels;
}

OcclusionInput occlusion_input(const py::array& boxes, const py::array& order, const py::array& opacity,
                               const py::array& hidden, const std::array<double, 4>& viewport, double min_opacity) {
  const std::size_t n = check_boxes_array(boxes);
  OcclusionInput in{};
  in.boxes = static_cast<const double*>(boxes.data());
  in.order = check_column<std::int64_t>(order, n, "order");
  in.opacity = check_column<double>(opacity, n, "opacity");
  in.hidden = reinterpret_cast<const std::uint8_t*>(check_column<bool>(hidden, n, "hidden"));
  in.n = n;
  in.viewport = to_rect(viewport);
  in.min_opacity = min_opacity;
  return in;
}

py::object occluders_binding(const py::array& boxes, const py::array& order, const py::array& opacity,
                             const py::array& hidden, const std::array<double, 4>& viewport, double min_opacity,
                             const std::string& mode, const py::object& targets) {
  const OcclusionInput in = occlusion_input(boxes, order, opacity, hidden, viewport, min_opacity);
  const std::uint8_t* only = nullptr;
  py::array target_flags;
  if (!targets.is_none()) {
    if (mode != "union") throw std::invalid_argument("targets is for mode 'union' only, got mode '" + mode + "'");
    if (!py::isinstance<py::array>(targets)) throw std::invalid_argument("targets must be a numpy array of bool or None");
    target_flags = py::reinterpret_borrow<py::array>(targets);
    only = reinterpret_cast<const std::uint8_t*>(check_column<bool>(target_flags, in.n, "targets"));
  }
  if (mode == "bounds") {
    std::vector<std::int64_t> occ;
    {
      py::gil_scoped_release release;  // raw buffers only
      occ = occluders(in);
    }
    return to_numpy(std::move(occ), {static_cast<py::ssize_t>(in.n)});
  }
  if (mode == "union") {
    py::array_t<std::int64_t> occ(static_cast<py::ssize_t>(in.n));
    py::array_t<double> fraction(static_cast<py::ssize_t>(in.n));
    std::int64_t* o = occ.mutable_data();
    double* f = fraction.mutable_data();
    {
      py::gil_scoped_release release;  // raw buffers only
      occluders_union(in, o, f, only);
    }
    return py::make_tuple(occ, fraction);
  }
  throw std::invalid_argument("mode must be 'bounds' or 'union', got '" + mode + "'");
}

// Working memory kept per Python thread between calls, so that a kernel's
// temporaries, and the index the box overloads build, reuse pages already
// mapped (release_scratch() frees them). Kernels called from several Python
// threads at once each use their own.
struct ThreadState {
  Scratch scratch;
  std::unique_ptr<BoxIndex> index;
  std::vector<std::uint64_t> keys, tmp;

  std::size_t bytes() const {
    return scratch.bytes() + (index ? index->bytes() : 0) + (keys.capacity() + tmp.capacity()) * sizeof(std::uint64_t);
  }
};

ThreadState& thread_state() {
  thread_local ThreadState state;
  return state;
}

Scratch& thread_scratch() { return thread_state().scratch; }

// This thread's kept index, rebuilt in place over the boxes (validated first).
const BoxIndex& thread_index(const double* boxes, std::size_t n) {
  ThreadState& st = thread_state();
  if (!st.index) st.index = std::make_unique<BoxIndex>(boxes, 0);
  st.index->assign(boxes, n, st.keys, st.tmp);
  return *st.index;
}

std::size_t check_threads(py::ssize_t threads) {
  if (threads < 0) throw std::invalid_argument("threads must be >= 0 (0: one per core), got " + std::to_string(threads));
  return static_cast<std::size_t>(threads);
}

// The box overloads build an index first, inside the released section. The
// index kernels read only the index, which is immutable after construction
// and kept alive by the argument; so both run without the GIL, on raw buffers
// and this thread's Scratch.
py::tuple overlap_pairs_binding(const py::array& boxes, py::ssize_t threads) {
  const std::size_t n = check_boxes_array(boxes);
  const std::size_t t = check_threads(threads);
  const double* b = static_cast<const double*>(boxes.data());
  std::vector<std::int64_t> pairs;
  std::vector<double> areas;
  {
    py::gil_scoped_release release;
    overlap_pairs(thread_index(b, n), pairs, areas, thread_scratch(), t);
  }
  const auto k = static_cast<py::ssize_t>(areas.size());
  return py::make_tuple(pairs_to_numpy(std::move(pairs)), to_numpy(std::move(areas), {k}));
}

py::array_t<std::int64_t> containment_pairs_binding(const py::array& boxes, py::ssize_t threads) {
  const std::size_t n = check_boxes_array(boxes);
  const std::size_t t = check_threads(threads);
  const double* b = static_cast<const double*>(boxes.data());
  std::vector<std::int64_t> pairs;
  {
    py::gil_scoped_release release;
    pairs = containment_pairs(thread_index(b, n), thread_scratch(), t);
  }
  return pairs_to_numpy(std::move(pairs));
}

py::tuple proximity_pairs_binding(const py::array& boxes, double max_gap, py::ssize_t k_nearest, py::ssize_t threads) {
  const std::size_t n = check_boxes_array(boxes);
  if (k_nearest < 0) throw std::invalid_argument("k_nearest must be >= 0, got " + std::to_string(k_nearest));
  const std::size_t t = check_threads(threads);
  const double* b = static_cast<const double*>(boxes.data());
  std::vector<std::int64_t> pairs;
  std::vector<double> gaps;
  {
    py::gil_scoped_release release;
    detail::check_tolerance(max_gap, "max_gap");  // before the index is built, as before
    proximity_pairs(thread_index(b, n), max_gap, static_cast<std::size_t>(k_nearest), pairs, gaps, thread_scratch(), t);
  }
  const auto k = static_cast<py::ssize_t>(gaps.size());
  return py::make_tuple(pairs_to_numpy(std::move(pairs)), to_numpy(std::move(gaps), {k}));
}

py::tuple overlap_pairs_index_binding(const BoxIndex& index, py::ssize_t threads) {
  const std::size_t t = check_threads(threads);
  std::vector<std::int64_t> pairs;
  std::vector<double> areas;
  {
    py::gil_scoped_release release;
    overlap_pairs(index, pairs, areas, thread_scratch(), t);
  }
  const auto k = static_cast<py::ssize_t>(areas.size());
  return py::make_tuple(pairs_to_numpy(std::move(pairs)), to_numpy(std::move(areas), {k}));
}

py::array_t<std::int64_t> containment_pairs_index_binding(const BoxIndex& index, py::ssize_t threads) {
  const std::size_t t = check_threads(threads);
  std::vector<std::int64_t> pairs;
  {
    py::gil_scoped_release release;
    pairs = containment_pairs(index, thread_scratch(), t);
  }
  return pairs_to_numpy(std::move(pairs));
}

py::tuple proximity_pairs_index_binding(const BoxIndex& index, double max_gap, py::ssize_t k_nearest,
                                        py::ssize_t threads) {
  if (k_nearest < 0) throw std::invalid_argument("k_nearest must be >= 0, got " + std::to_string(k_nearest));
  const std::size_t t = check_threads(threads);
  std::vector<std::int64_t> pairs;
  std::vector<double> gaps;
  {
    py::gil_scoped_release release;
    proximity_pairs(index, max_gap, static_cast<std::size_t>(k_nearest), pairs, gaps, thread_scratch(), t);
  }
  const auto k = static_cast<py::ssize_t>(gaps.size());
  return py::make_tuple(pairs_to_numpy(std::move(pairs)), to_numpy(std::move(gaps), {k}));
}

py::tuple overlap_pairs_between_binding(const BoxIndex& index, const py::array& queries) {
  const std::size_t m = check_boxes_array(queries, "queries");
  const double* q = static_cast<const double*>(queries.data());
  std::vector<std::int64_t> pairs;
  std::vector<double> areas;
  {
    py::gil_scoped_release release;  // the index and a raw buffer only
    overlap_pairs_between(index, q, m, pairs, areas);
  }
  const auto k = static_cast<py::ssize_t>(areas.size());
  return py::make_tuple(pairs_to_numpy(std::move(pairs)), to_numpy(std::move(areas), {k}));
}

py::array_t<bool> overlap_any_ranked_binding(const BoxIndex& index, const py::array& ranks, const py::array& queries,
                                             const py::array& query_ranks, bool above) {
  const std::size_t m = check_boxes_array(queries, "queries");
  const std::int64_t* r = check_column<std::int64_t>(ranks, index.size(), "ranks");
  const std::int64_t* qr = check_column<std::int64_t>(query_ranks, m, "query_ranks");
  const double* q = static_cast<const double*>(queries.data());
  py::array_t<bool> out(static_cast<py::ssize_t>(m));
  auto* o = reinterpret_cast<std::uint8_t*>(out.mutable_data());
  {
    py::gil_scoped_release release;  // the index and raw buffers only
    overlap_any_ranked(index, r, q, qr, m, above, o);
  }
  return out;
}

py::tuple alignment_pairs_binding(const py::array& boxes, double tol, py::ssize_t threads, int kind) {
  const std::size_t n = check_boxes_array(boxes);
  const std::size_t t = check_threads(threads);
  const double* b = static_cast<const double*>(boxes.data());
  std::vector<std::int64_t> pairs;
  std::vector<std::int8_t> kinds;
  {
    py::gil_scoped_release release;  // raw buffers and this thread's Scratch only
    alignment_pairs(b, n, tol, pairs, kinds, thread_scratch(), t, kind);
  }
  const auto k = static_cast<py::ssize_t>(kinds.size());
  return py::make_tuple(pairs_to_numpy(std::move(pairs)), to_numpy(std::move(kinds), {k}));
}

py::tuple alignment_masks_binding(const py::array& boxes, double tol, const py::object& group) {
  const std::size_t n = check_boxes_array(boxes);
  const double* b = static_cast<const double*>(boxes.data());
  const std::int64_t* g = nullptr;
  py::array group_arr;
  if (!group.is_none()) {
    group_arr = py::array::ensure(group);
    if (!group_arr || !group_arr.dtype().is(py::dtype::of<std::int64_t>()) || group_arr.ndim() != 1 ||
        static_cast<std::size_t>(group_arr.shape(0)) != n || !(group_arr.flags() & py::array::c_style)) {
      throw std::invalid_argument("group must be a C-contiguous int64 array of one entry per box "
                                  "(use np.ascontiguousarray(group, dtype=np.int64))");
    }
    g = static_cast<const std::int64_t*>(group_arr.data());
  }
  std::vector<std::int64_t> pairs;
  std::vector<std::int8_t> axes, masks;
  {
    py::gil_scoped_release release;  // raw buffers only; group_arr keeps its buffer alive
    alignment_masks(b, n, tol, g, pairs, axes, masks);
  }
  const auto k = static_cast<py::ssize_t>(axes.size());
  return py::make_tuple(pairs_to_numpy(std::move(pairs)), to_numpy(std::move(axes), {k}), to_numpy(std::move(masks), {k}));
}

py::array_t<std::int64_t> reading_order_binding(const py::array& boxes, double row_tol) {
  const std::size_t n = check_boxes_array(boxes);
  const double* b = static_cast<const double*>(boxes.data());
  std::vector<std::int64_t> rank;
  {
    py::gil_scoped_release release;  // raw buffers only
    rank = reading_order(b, n, row_tol);
  }
  return to_numpy(std::move(rank), {static_cast<py::ssize_t>(n)});
}

}  // namespace

void register_geometry(py::module_& m) {
  m.attr("VISIBLE") = static_cast<int>(kVisible);
  m.attr("PARTIAL") = static_cast<int>(kPartial);
  m.attr("OCCLUDED") = static_cast<int>(kOccluded);
  m.attr("OFFSCREEN_NEAR") = static_cast<int>(kOffscreenNear);
  m.attr("OFFSCREEN_FAR") = static_cast<int>(kOffscreenFar);
  m.def("visibility", &visibility_binding, py::arg("boxes"), py::arg("viewport"), py::arg("near_factor") = 0.75);
  m.def("visibility_labels", &visibility_labels_binding, py::arg("boxes"), py::arg("viewport"),
        py::arg("near_factor") = 0.75);
  m.def("occluders", &occluders_binding, py::arg("boxes"), py::arg("order"), py::arg("opacity"), py::arg("hidden"),
        py::arg("viewport"), py::arg("min_opacity") = 0.9, py::arg("mode") = "bounds",
        py::arg("targets") = py::none());
  // The index overloads first: pybind11 tries overloads in order.
  m.def("overlap_pairs", &overlap_pairs_index_binding, py::arg("index"), py::kw_only(), py::arg("threads") = 1);
  m.def("overlap_pairs", &overlap_pairs_binding, py::arg("boxes"), py::kw_only(), py::arg("threads") = 1);
  m.def("containment_pairs", &containment_pairs_index_binding, py::arg("index"), py::kw_only(),
        py::arg("threads") = 1);
  m.def("containment_pairs", &containment_pairs_binding, py::arg("boxes"), py::kw_only(), py::arg("threads") = 1);
  m.def("proximity_pairs", &proximity_pairs_index_binding, py::arg("index"), py::arg("max_gap"),
        py::arg("k_nearest"), py::kw_only(), py::arg("threads") = 1);
  m.def("proximity_pairs", &proximity_pairs_binding, py::arg("boxes"), py::arg("max_gap"), py::arg("k_nearest"),
        py::kw_only(), py::arg("threads") = 1);
  m.def("overlap_pairs_between", &overlap_pairs_between_binding, py::arg("index"), py::arg("queries"));
  m.def("overlap_any_ranked", &overlap_any_ranked_binding, py::arg("index"), py::arg("ranks"), py::arg("queries"),
        py::arg("query_ranks"), py::arg("above") = true);
  m.def("alignment_pairs", &alignment_pairs_binding, py::arg("boxes"), py::arg("tol"), py::kw_only(),
        py::arg("threads") = 1, py::arg("kind") = -1);
  m.def("release_scratch", [] { thread_state() = ThreadState(); });
  m.def("scratch_bytes", [] { return thread_state().bytes(); });
  m.def("alignment_masks", &alignment_masks_binding, py::arg("boxes"), py::arg("tol"), py::arg("group") = py::none());
  m.def("reading_order", &reading_order_binding, py::arg("boxes"), py::arg("row_tol"));
}

}  // namespace spatialobs::bind
