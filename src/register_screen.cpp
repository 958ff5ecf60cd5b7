// Bindings of the screen-identity core: atoms, the n-gram embedder, the
// two-set Jaccard score, the atom store (exact table + batch verifier) and the
// BM25 index. Arguments are checked with the GIL held; kernels run without it.
#include <cmath>
#include <mutex>
#include <shared_mutex>
#include <string>
#include <vector>

#include "common.hpp"
#include "spatialobs/atom_store.hpp"
#include "spatialobs/atoms.hpp"
#include "spatialobs/bm25.hpp"
#include "spatialobs/hybrid_insert.hpp"
#include "spatialobs/jaccard.hpp"
#include "spatialobs/ngram_embed.hpp"
#include "spatialobs/rrf.hpp"

namespace spatialobs::bind {

namespace {

// A 1-D C-contiguous uint64 array (an atom set); returns its data and length.
const std::uint64_t* check_atoms(const py::array& a, const char* name, std::size_t& n) {
  if (!a.dtype().equal(py::dtype::of<std::uint64_t>())) {
    throw std::invalid_argument(std::string(name) + " must have dtype uint64, got " + dtype_name(a) +
                                "; convert it with np.ascontiguousarray(" + name + ", dtype=np.uint64)");
  }
  if (a.ndim() != 1) throw std::invalid_argument(std::string(name) + " must be a 1-D array of atoms");
  if (!(a.flags() & py::array::c_style)) {
    throw std::invalid_argument(std::string(name) + " must be C-contiguous; pass np.ascontiguousarray(" + name + ")");
  }
  n = static_cast<std::size_t>(a.shape(0));
  return static_cast<const std::uint64_t*>(a.data());
}

const std::uint64_t* check_atom_set_array(const py::array& a, const char* name, std::size_t& n) {
  const std::uint64_t* p = check_atoms(a, name, n);
  check_atom_set(p, n, name);
  return p;
}

Ratio to_ratio(std::uint64_t num, std::uint64_t den) {
  Ratio r{num, den};
  check_threshold(r);
  return r;
}

template <class T>
py::array_t<T> vector_to_numpy(std::vector<T>&& v) {
  const auto k = static_cast<py::ssize_t>(v.size());
  return to_numpy(std::move(v), {k});
}

// The core classes are not synchronized; the holders add a reader-writer
// lock so that queries may run in parallel (without the GIL) while an add is
// excluded. The lock is always taken after the GIL is released.
struct AtomStoreHolder {
  AtomStore store;
  mutable std::shared_mutex mu;
};

struct Bm25Holder {
  Bm25Holder(double k1, double b) : index(k1, b) {}
  Bm25Index index;
  mutable std::shared_mutex mu;
};

py::tuple screen_atoms_binding(const py::array& boxes, double width, double height, std::int32_t grid,
                               const std::vector<std::string>& roles, const std::vector<std::string>& texts) {
  const std::size_t n = check_boxes_array(boxes, "bounds");
  const double* b = static_cast<const double*>(boxes.data());
  std::vector<std::uint64_t> control, text;
  {
    py::gil_scoped_release release;  // raw buffer and C++ strings only
    screen_atoms(b, n, width, height, grid, roles, texts, control, text);
  }
  return py::make_tuple(vector_to_numpy(std::move(control)), vector_to_numpy(std::move(text)));
}

py::tuple grid_cells_binding(const py::array& boxes, double width, double height, std::int32_t grid) {
  const std::size_t n = check_boxes_array(boxes, "bounds");
  const double* b = static_cast<const double*>(boxes.data());
  py::array_t<std::int32_t> cols(static_cast<py::ssize_t>(n)), rows(static_cast<py::ssize_t>(n));
  std::int32_t* c = cols.mutable_data();
  std::int32_t* r = rows.mutable_data();
  {
    py::gil_scoped_release release;  // raw buffers only
    grid_cells(b, n, width, height, grid, c, r);
  }
  return py::make_tuple(cols, rows);
}

py::array_t<float> ngram_embed_binding(const std::vector<std::string>& texts, std::int32_t n, std::int32_t dim) {
  if (dim < 1 || dim > kMaxEmbedDim) {
    throw std::invalid_argument("dim must be between 1 and " + std::to_string(kMaxEmbedDim) + ", got " +
                                std::to_string(dim));
  }
  py::array_t<float> out({static_cast<py::ssize_t>(texts.size()), static_cast<py::ssize_t>(dim)});
  float* o = out.mutable_data();
  {
    py::gil_scoped_release release;  // C++ strings and the output buffer only
    for (std::size_t i = 0; i < texts.size(); ++i) ngram_embed(texts[i], n, dim, o + i * static_cast<std::size_t>(dim));
  }
  return out;
}

struct Pair {
  const std::uint64_t *ac, *at, *bc, *bt;
  std::size_t nac, nat, nbc, nbt;
};

Pair check_pair(const py::array& ac, const py::array& at, const py::array& bc, const py::array& bt) {
  Pair p{};
  p.ac = check_atom_set_array(ac, "a_control", p.nac);
  p.at = check_atom_set_array(at, "a_text", p.nat);
  p.bc = check_atom_set_array(bc, "b_control", p.nbc);
  p.bt = check_atom_set_array(bt, "b_text", p.nbt);
  if (p.nac > AtomStore::kMaxSetSize || p.nat > AtomStore::kMaxSetSize || p.nbc > AtomStore::kMaxSetSize ||
      p.nbt > AtomStore::kMaxSetSize) {
    throw std::invalid_argument("an atom set holds fewer than 2^31 atoms");
  }
  return p;
}

Ratio pair_ratio(const Pair& p) {
  py::gil_scoped_release release;  // raw buffers only
  return jaccard_ratio(jaccard_counts(p.ac, p.nac, p.at, p.nat, p.bc, p.nbc, p.bt, p.nbt));
}

}  // namespace

void register_screen(py::module_& m) {
  m.def("atom_hash", &atom_hash, py::arg("kind"), py::arg("col"), py::arg("row"), py::arg("value"));
  m.def("grid_cells", &grid_cells_binding, py::arg("bounds"), py::arg("width"), py::arg("height"), py::arg("grid"));
  m.def("screen_atoms", &screen_atoms_binding, py::arg("bounds"), py::arg("width"), py::arg("height"),
        py::arg("grid"), py::arg("roles"), py::arg("texts"));
  m.def("ngram_embed", &ngram_embed_binding, py::arg("texts"), py::arg("n"), py::arg("dim"));
  m.def(
      "rrf_fuse",
      [](const py::list& lists, double k) {
        std::vector<const std::int64_t*> ptrs;
        std::vector<std::size_t> sizes;
        std::vector<py::array> keep;  // holds the arrays while the GIL is released
        for (const py::handle& h : lists) {
          if (!py::isinstance<py::array>(h)) throw std::invalid_argument("rrf_fuse takes a list of int64 arrays");
          py::array a = py::reinterpret_borrow<py::array>(h);
          if (a.ndim() != 1) throw std::invalid_argument("each ranked list must be a 1-D int64 array");
          check_array<std::int64_t>(a, "ranked list");
          ptrs.push_back(static_cast<const std::int64_t*>(a.data()));
          sizes.push_back(static_cast<std::size_t>(a.shape(0)));
          keep.push_back(a);
        }
        if (!(k >= 0) || !std::isfinite(k)) throw std::invalid_argument("k must be finite and >= 0");
        std::vector<std::int64_t> ids;
        std::vector<double> scores;
        {
          py::gil_scoped_release release;  // raw buffers, kept alive by `keep`
          rrf_fuse(ptrs.data(), sizes.data(), ptrs.size(), k, ids, scores);
        }
        return py::make_tuple(vector_to_numpy(std::move(ids)), vector_to_numpy(std::move(scores)));
      },
      py::arg("lists"), py::arg("k"));

  m.def(
      "jaccard_score",
      [](const py::array& ac, const py::array& at, const py::array& bc, const py::array& bt) {
        return pair_ratio(check_pair(ac, at, bc, bt)).value();
      },
      py::arg("a_control"), py::arg("a_text"), py::arg("b_control"), py::arg("b_text"));
  m.def(
      "jaccard_ratio",
      [](const py::array& ac, const py::array& at, const py::array& bc, const py::array& bt) {
        const Ratio r = pair_ratio(check_pair(ac, at, bc, bt));
        return py::make_tuple(r.num, r.den);
      },
      py::arg("a_control"), py::arg("a_text"), py::arg("b_control"), py::arg("b_text"));
  m.def(
      "jaccard_at_least",
      [](const py::array& ac, const py::array& at, const py::array& bc, const py::array& bt, std::uint64_t tau_num,
         std::uint64_t tau_den) {
        const Ratio tau = to_ratio(tau_num, tau_den);
        return ratio_at_least(pair_ratio(check_pair(ac, at, bc, bt)), tau);
      },
      py::arg("a_control"), py::arg("a_text"), py::arg("b_control"), py::arg("b_text"), py::arg("tau_num"),
      py::arg("tau_den"));

  py::class_<AtomStoreHolder>(m, "AtomStore")
      .def(py::init<>())
      .def("__len__",
           [](const AtomStoreHolder& h) {
             py::gil_scoped_release release;
             std::shared_lock<std::shared_mutex> lock(h.mu);
             return h.store.size();
           })
      .def(
          "add",
          [](AtomStoreHolder& h, std::uint32_t meta, const py::array& control, const py::array& text) {
            std::size_t nc = 0, nt = 0;
            const std::uint64_t* c = check_atoms(control, "control", nc);
            const std::uint64_t* t = check_atoms(text, "text", nt);
            py::gil_scoped_release release;  // raw buffers; the store copies them
            std::unique_lock<std::shared_mutex> lock(h.mu);
            return h.store.add(meta, c, nc, t, nt);
          },
          py::arg("meta"), py::arg("control"), py::arg("text"))
      .def(
          "find_exact",
          [](const AtomStoreHolder& h, std::uint32_t meta, const py::array& control, const py::array& text) {
            std::size_t nc = 0, nt = 0;
            const std::uint64_t* c = check_atoms(control, "control", nc);
            const std::uint64_t* t = check_atoms(text, "text", nt);
            py::gil_scoped_release release;  // raw buffers; readers share the lock
            std::shared_lock<std::shared_mutex> lock(h.mu);
            return h.store.find_exact(meta, c, nc, t, nt);
          },
          py::arg("meta"), py::arg("control"), py::arg("text"))
      .def(
          "verify",
          [](const AtomStoreHolder& h, const py::array& control, const py::array& text, const py::array& ids,
             std::uint64_t tau_num, std::uint64_t tau_den) {
            std::size_t nc = 0, nt = 0;
            const std::uint64_t* c = check_atom_set_array(control, "control", nc);
            const std::uint64_t* t = check_atom_set_array(text, "text", nt);
            if (ids.ndim() != 1) throw std::invalid_argument("ids must be a 1-D int64 array");
            check_array<std::int64_t>(ids, "ids");
            const Ratio tau = to_ratio(tau_num, tau_den);
            const auto k = static_cast<std::size_t>(ids.shape(0));
            const auto* id = static_cast<const std::int64_t*>(ids.data());
            py::array_t<double> scores(static_cast<py::ssize_t>(k));
            py::array_t<bool> pass(static_cast<py::ssize_t>(k));
            double* s = scores.mutable_data();
            auto* p = reinterpret_cast<std::uint8_t*>(pass.mutable_data());
            VerifyResult best;
            {
              py::gil_scoped_release release;  // raw buffers; readers share the lock
              std::shared_lock<std::shared_mutex> lock(h.mu);
              best = h.store.verify(c, nc, t, nt, id, k, tau, s, p);
            }
            return py::make_tuple(scores, pass, best.best, py::make_tuple(best.best_score.num, best.best_score.den));
          },
          py::arg("control"), py::arg("text"), py::arg("ids"), py::arg("tau_num"), py::arg("tau_den"))
      .def("meta",
           [](const AtomStoreHolder& h, std::int64_t id) {
             py::gil_scoped_release release;
             std::shared_lock<std::shared_mutex> lock(h.mu);
             if (id < 0 || static_cast<std::size_t>(id) >= h.store.size())
               throw std::out_of_range("no observation " + std::to_string(id));
             return h.store.meta(static_cast<std::size_t>(id));
           })
      .def("atoms",
           [](const AtomStoreHolder& h, std::int64_t id) {
             std::vector<std::uint64_t> c, t;
             {
               py::gil_scoped_release release;
               std::shared_lock<std::shared_mutex> lock(h.mu);
               if (id < 0 || static_cast<std::size_t>(id) >= h.store.size())
                 throw std::out_of_range("no observation " + std::to_string(id));
               h.store.atoms(static_cast<std::size_t>(id), c, t);
             }
             return py::make_tuple(vector_to_numpy(std::move(c)), vector_to_numpy(std::move(t)));
           })
      .def("columns",
           [](const AtomStoreHolder& h) {
             std::vector<std::uint32_t> meta;
             std::vector<std::uint64_t> co, cv, to, tv;
             {
               py::gil_scoped_release release;
               std::shared_lock<std::shared_mutex> lock(h.mu);
               h.store.columns(meta, co, cv, to, tv);
             }
             return py::make_tuple(vector_to_numpy(std::move(meta)), vector_to_numpy(std::move(co)),
                                   vector_to_numpy(std::move(cv)), vector_to_numpy(std::move(to)),
                                   vector_to_numpy(std::move(tv)));
           })
      .def("memory_bytes", [](const AtomStoreHolder& h) {
        py::gil_scoped_release release;
        std::shared_lock<std::shared_mutex> lock(h.mu);
        return h.store.memory_bytes();
      });

  py::class_<Bm25Holder>(m, "Bm25Index")
      .def(py::init<double, double>(), py::arg("k1") = 1.5, py::arg("b") = 0.75)
      .def_property_readonly("k1", [](const Bm25Holder& h) { return h.index.k1(); })
      .def_property_readonly("b", [](const Bm25Holder& h) { return h.index.b(); })
      .def("__len__",
           [](const Bm25Holder& h) {
             py::gil_scoped_release release;
             std::shared_lock<std::shared_mutex> lock(h.mu);
             return h.index.size();
           })
      .def_property_readonly("num_terms",
                             [](const Bm25Holder& h) {
                               py::gil_scoped_release release;
                               std::shared_lock<std::shared_mutex> lock(h.mu);
                               return h.index.num_terms();
                             })
      .def(
          "add",
          [](Bm25Holder& h, const py::array& atoms) {
            std::size_t n = 0;
            const std::uint64_t* a = check_atoms(atoms, "atoms", n);
            py::gil_scoped_release release;  // raw buffer; the index copies it
            std::unique_lock<std::shared_mutex> lock(h.mu);
            return h.index.add(a, n);
          },
          py::arg("atoms"))
      .def(
          "top_k",
          [](const Bm25Holder& h, const py::array& query, py::ssize_t k, bool exhaustive) {
            if (k < 0) throw std::invalid_argument("k must be >= 0, got " + std::to_string(k));
            std::size_t n = 0;
            const std::uint64_t* q = check_atoms(query, "query", n);
            std::vector<std::int64_t> ids;
            std::vector<double> scores;
            {
              py::gil_scoped_release release;  // raw buffer; readers share the lock
              std::shared_lock<std::shared_mutex> lock(h.mu);
              if (exhaustive) {
                h.index.top_k_exhaustive(q, n, static_cast<std::size_t>(k), ids, scores);
              } else {
                h.index.top_k(q, n, static_cast<std::size_t>(k), ids, scores);
              }
            }
            return py::make_tuple(vector_to_numpy(std::move(ids)), vector_to_numpy(std::move(scores)));
          },
          py::arg("query"), py::arg("k"), py::kw_only(), py::arg("exhaustive") = false)
      .def(
          "posting_floor",
          [](const Bm25Holder& h, const py::array& query, bool scatter) {
            std::size_t n = 0;
            const std::uint64_t* q = check_atoms(query, "query", n);
            std::pair<std::uint64_t, double> r;
            {
              py::gil_scoped_release release;  // raw buffer; readers share the lock
              std::shared_lock<std::shared_mutex> lock(h.mu);
              r = h.index.posting_floor(q, n, scatter);
            }
            return py::make_tuple(r.first, r.second);
          },
          py::arg("query"), py::kw_only(), py::arg("scatter") = true)
      .def("memory_bytes", [](const Bm25Holder& h) {
        py::gil_scoped_release release;
        std::shared_lock<std::shared_mutex> lock(h.mu);
        return h.index.memory_bytes();
      });

  m.def(
      "hybrid_insert",
      [](Bm25Holder& bm25, AtomStoreHolder& store, std::uint32_t meta, const py::array& control, const py::array& text,
         const py::array& dense, const py::array& rows, py::ssize_t top_k, double rrf_k, std::uint64_t tau_num,
         std::uint64_t tau_den) {
        std::size_t nc = 0, nt = 0;
        const std::uint64_t* c = check_atoms(control, "control", nc);
        const std::uint64_t* t = check_atoms(text, "text", nt);
        if (dense.ndim() != 1) throw std::invalid_argument("dense must be a 1-D int64 array");
        check_array<std::int64_t>(dense, "dense");
        if (rows.ndim() != 1 || !rows.dtype().equal(py::dtype::of<std::int32_t>()) ||
            !(rows.flags() & py::array::c_style)) {
          throw std::invalid_argument("rows must be a 1-D C-contiguous int32 array, got dtype " + dtype_name(rows));
        }
        if (top_k < 0) throw std::invalid_argument("top_k must be >= 0, got " + std::to_string(top_k));
        if (!(rrf_k >= 0) || !std::isfinite(rrf_k)) throw std::invalid_argument("rrf_k must be finite and >= 0");
        const Ratio tau = to_ratio(tau_num, tau_den);
        const auto* d = static_cast<const std::int64_t*>(dense.data());
        const auto* r = static_cast<const std::int32_t*>(rows.data());
        const auto nd = static_cast<std::size_t>(dense.shape(0));
        const auto nr = static_cast<std::size_t>(rows.shape(0));
        HybridInsertResult out;
        {
          py::gil_scoped_release release;  // raw buffers held by the caller; both indexes write-locked
          std::scoped_lock lock(bm25.mu, store.mu);
          out = hybrid_insert(bm25.index, store.store, meta, c, nc, t, nt, d, nd, r, nr,
                              static_cast<std::size_t>(top_k), rrf_k, tau);
        }
        return py::make_tuple(out.best, out.best_score.num, out.best_score.den, out.top_score, out.observation);
      },
      py::arg("bm25"), py::arg("store"), py::arg("meta"), py::arg("control"), py::arg("text"), py::arg("dense"),
      py::arg("rows"), py::arg("top_k"), py::arg("rrf_k"), py::arg("tau_num"), py::arg("tau_den"));
}

}  // namespace spatialobs::bind
