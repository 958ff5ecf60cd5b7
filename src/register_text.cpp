// Binding of the text kernel: a font built once from its metric table, and
// measurements that take Python strings (read as code points, no copy into
// UTF-8). Characters the table does not hold are resolved once per font by a
// Python callable (the oracle twin's own lookup), then kept on the C++ side.
#include <Python.h>

#include <cmath>
#include <string>
#include <utility>
#include <vector>

#include "common.hpp"
#include "spatialobs/text.hpp"

namespace spatialobs::bind {

namespace text_binding {

// The code points of a str, appended to out.
void read_code_points(const py::str& text, std::vector<std::uint32_t>& out) {
  PyObject* s = text.ptr();
#if PY_VERSION_HEX < 0x030C0000
  if (PyUnicode_READY(s) != 0) throw py::error_already_set();
#endif
  const Py_ssize_t n = PyUnicode_GET_LENGTH(s);
  const int kind = PyUnicode_KIND(s);
  const void* data = PyUnicode_DATA(s);
  const std::size_t base = out.size();
  out.resize(base + static_cast<std::size_t>(n));
  std::uint32_t* dst = out.data() + base;
  if (kind == PyUnicode_1BYTE_KIND) {
    const auto* p = static_cast<const Py_UCS1*>(data);
    for (Py_ssize_t i = 0; i < n; ++i) dst[i] = p[i];
  } else if (kind == PyUnicode_2BYTE_KIND) {
    const auto* p = static_cast<const Py_UCS2*>(data);
    for (Py_ssize_t i = 0; i < n; ++i) dst[i] = p[i];
  } else {
    const auto* p = static_cast<const Py_UCS4*>(data);
    for (Py_ssize_t i = 0; i < n; ++i) dst[i] = p[i];
  }
}

std::vector<std::uint32_t> chars_of(const py::handle& s, const char* what) {
  if (!PyUnicode_Check(s.ptr())) {
    throw std::invalid_argument(std::string(what) + " must be a str, got " +
                                py::str(py::type::handle_of(s).attr("__name__")).cast<std::string>());
  }
  std::vector<std::uint32_t> out;
  read_code_points(py::reinterpret_borrow<py::str>(s), out);
  return out;
}

double to_double(const py::handle& v, const char* what) {
  if (!PyFloat_Check(v.ptr()) && !PyLong_Check(v.ptr())) {
    throw std::invalid_argument(std::string(what) + " must be a number, got " +
                                py::str(py::type::handle_of(v).attr("__name__")).cast<std::string>());
  }
  return v.cast<double>();
}

// A Python int or float as a double (raw API: called once per number of a font's table).
double number(PyObject* v, const char* what) {
  if (PyLong_CheckExact(v)) {
    const double d = PyLong_AsDouble(v);
    if (d == -1.0 && PyErr_Occurred()) throw py::error_already_set();
    return d;
  }
  if (PyFloat_CheckExact(v)) return PyFloat_AS_DOUBLE(v);
  return to_double(v, what);
}

class PyTextFont {
 public:
  PyTextFont(const py::list& runs, double upm, const py::list& left, const py::list& right, const py::list& m,
             bool has_kern, py::object resolver, bool compensated_sum)
      : font_(upm, has_kern, compensated_sum), resolver_(std::move(resolver)) {
    if (!std::isfinite(upm) || upm <= 0.0) {
      throw std::invalid_argument("upm must be a positive finite number, got " + std::to_string(upm));
    }
    if (!PyCallable_Check(resolver_.ptr())) throw std::invalid_argument("resolver must be callable");
    std::vector<double> widths;
    for (const py::handle run : runs) {
      if (!py::isinstance<py::list>(run) && !py::isinstance<py::tuple>(run)) {
        throw std::invalid_argument("each advance run must be [first code point, [advance, ...]]");
      }
      py::sequence pair = py::reinterpret_borrow<py::sequence>(run);
      if (pair.size() != 2) throw std::invalid_argument("each advance run must be [first code point, [advance, ...]]");
      const double first = to_double(pair[0], "a run's first code point");
      py::sequence ws = pair[1].cast<py::sequence>();
      if (first < 0 || first != std::floor(first) || first + static_cast<double>(ws.size()) > 0x110000) {
        throw std::invalid_argument("a run's code points must lie in [0, 0x110000), got first " +
                                    std::to_string(first) + " with " + std::to_string(ws.size()) + " advances");
      }
      widths.clear();
      for (const py::handle w : ws) widths.push_back(number(w.ptr(), "an advance"));
      font_.add_advances(static_cast<std::uint32_t>(first), widths.data(), widths.size());
    }
    std::vector<std::vector<std::uint32_t>> lc, rc;
    for (const py::handle s : left) lc.push_back(chars_of(s, "a left kerning class"));
    for (const py::handle s : right) rc.push_back(chars_of(s, "a right kerning class"));
    std::vector<std::vector<std::pair<std::int64_t, double>>> rows;
    rows.reserve(m.size());
    for (const py::handle row : m) {
      // raw list access: the draw font's table holds ~77,000 numbers
      py::object fast = py::reinterpret_steal<py::object>(PySequence_Fast(row.ptr(), "a kerning row must be a list"));
      if (!fast) PyErr_Clear();
      if (!fast) throw std::invalid_argument("a kerning row must be a list of [right class, value, ...]");
      const Py_ssize_t k = PySequence_Fast_GET_SIZE(fast.ptr());
      PyObject** items = PySequence_Fast_ITEMS(fast.ptr());
      if (k % 2) {
        throw std::invalid_argument("a kerning row must hold [right class, value, ...] pairs, got " +
                                    std::to_string(k) + " numbers");
      }
      std::vector<std::pair<std::int64_t, double>> out;
      out.reserve(static_cast<std::size_t>(k / 2));
      for (Py_ssize_t j = 0; j < k; j += 2) {
        const double c = number(items[j], "a kerning class");
        const std::int64_t ci = (c >= 0 && c == std::floor(c) && c < 9.0e15) ? static_cast<std::int64_t>(c) : -1;
        out.emplace_back(ci, number(items[j + 1], "a kerning value"));
      }
      rows.push_back(std::move(out));
    }
    font_.set_kerning(lc, rc, std::move(rows));
  }

  double line_em(const py::str& text) {
    buf_.clear();
    read_code_points(text, buf_);
    ensure();
    return font_.line_em(buf_.data(), buf_.size());
  }

  py::list line_ems(const py::list& texts) {
    py::list out(texts.size());
    std::size_t i = 0;
    for (const py::handle t : texts) {
      buf_ = chars_of(t, "each text");
      ensure();
      out[i++] = py::float_(font_.line_em(buf_.data(), buf_.size()));
    }
    return out;
  }

  double kern(std::uint32_t a, std::uint32_t b) { return font_.kern(a, b); }

  py::list layout(const py::str& text, double font_size, const py::object& max_width, bool break_words, int rule,
                  double slack, bool split_unkerned) {
    if (rule != 0 && rule != 1) throw std::invalid_argument("rule must be 0 (tldraw) or 1 (Excalidraw), got " +
                                                            std::to_string(rule));
    const bool wrap = !max_width.is_none();
    const double mw = wrap ? to_double(max_width, "max_width") : 0.0;
    buf_.clear();
    read_code_points(text, buf_);
    ensure();
    lines_.clear();
    font_.layout(buf_.data(), buf_.size(), font_size, wrap, mw, break_words, static_cast<TextBreakRule>(rule), slack,
                 split_unkerned, lines_);
    py::list out(lines_.size());
    for (std::size_t i = 0; i < lines_.size(); ++i) {
      PyObject* sub = PyUnicode_Substring(text.ptr(), static_cast<Py_ssize_t>(lines_[i].start),
                                          static_cast<Py_ssize_t>(lines_[i].end));
      if (!sub) throw py::error_already_set();
      out[i] = py::make_tuple(py::reinterpret_steal<py::str>(sub), lines_[i].width);
    }
    return out;
  }

  py::object measure(const py::str& text, double font_size, const py::object& max_width, bool break_words) {
    const bool wrap = !max_width.is_none();
    const double mw = wrap ? to_double(max_width, "max_width") : 0.0;
    buf_.clear();
    read_code_points(text, buf_);
    ensure();
    const TextMeasure r = font_.measure(buf_.data(), buf_.size(), font_size, wrap, mw, break_words);
    if (std::isnan(r.natural)) return py::none();
    return py::make_tuple(r.natural, r.paragraphs, r.lines, r.widest);
  }

 private:
  // Asks the resolver for the characters of buf_ the font does not know yet.
  void ensure() {
    missing_.clear();
    font_.unknown(buf_.data(), buf_.size(), missing_);
    if (missing_.empty()) return;
    py::list cps(missing_.size());
    for (std::size_t i = 0; i < missing_.size(); ++i) cps[i] = py::int_(missing_[i]);
    py::object got = resolver_(cps);
    if (!py::isinstance<py::tuple>(got) || py::len(got) != 2) {
      throw std::invalid_argument("the resolver must return (advances, flags), one of each per code point");
    }
    py::sequence advs = got.cast<py::tuple>()[0].cast<py::sequence>();
    py::sequence flags = got.cast<py::tuple>()[1].cast<py::sequence>();
    if (advs.size() != missing_.size() || flags.size() != missing_.size()) {
      throw std::invalid_argument("the resolver returned " + std::to_string(advs.size()) + " advances and " +
                                  std::to_string(flags.size()) + " flags for " + std::to_string(missing_.size()) +
                                  " code points");
    }
    for (std::size_t i = 0; i < missing_.size(); ++i) {
      const double a = to_double(advs[i], "an advance");
      if (std::isnan(a)) throw std::invalid_argument("the resolver returned a NaN advance");
      font_.set_char(missing_[i], a, static_cast<std::uint8_t>(flags[i].cast<int>() & 3));
    }
  }

  TextFont font_;
  py::object resolver_;
  std::vector<std::uint32_t> buf_, missing_;
  std::vector<TextLine> lines_;
};

}  // namespace text_binding

void register_text(py::module_& m) {
  using text_binding::PyTextFont;
  py::class_<PyTextFont>(m, "TextFont",
                         "A font's advances and kerning for text measurement (canvas.document.textmeasure's kernel).")
      .def(py::init<const py::list&, double, const py::list&, const py::list&, const py::list&, bool, py::object,
                    bool>(),
           py::arg("runs"), py::arg("upm"), py::arg("left"), py::arg("right"), py::arg("m"), py::arg("has_kern"),
           py::arg("resolver"), py::arg("compensated_sum") = false)
      .def("line_em", &PyTextFont::line_em, py::arg("text"))
      .def("line_ems", &PyTextFont::line_ems, py::arg("texts"))
      .def("kern", &PyTextFont::kern, py::arg("a"), py::arg("b"))
      .def("layout", &PyTextFont::layout, py::arg("text"), py::arg("font_size"), py::arg("max_width"),
           py::arg("break_words"), py::arg("rule"), py::arg("slack"), py::arg("split_unkerned"))
      .def("measure", &PyTextFont::measure, py::arg("text"), py::arg("font_size"), py::arg("max_width"),
           py::arg("break_words"));
  m.def("text_excalidraw_brackets", []() {
    auto to_str = [](const std::vector<std::uint32_t>& v) {
      std::u32string s(v.begin(), v.end());
      return py::reinterpret_steal<py::str>(
          PyUnicode_FromKindAndData(PyUnicode_4BYTE_KIND, s.data(), static_cast<Py_ssize_t>(s.size())));
    };
    return py::make_tuple(to_str(TextFont::excalidraw_opening()), to_str(TextFont::excalidraw_closing()));
  });
}

}  // namespace spatialobs::bind
