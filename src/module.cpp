// The spatialobs._core extension: calls each concept's register_* function
// and maps C++ caller errors to the package's exception classes.
#include <pybind11/pybind11.h>

#include <stdexcept>

#include "common.hpp"

namespace py = pybind11;

#ifndef SPATIALOBS_VERSION
#define SPATIALOBS_VERSION "dev"
#endif

PYBIND11_MODULE(_core, m) {
  m.doc() = "spatialobs compiled core (geometry kernels, box index). Use the public modules instead.";
  m.attr("__version__") = SPATIALOBS_VERSION;

  // std::invalid_argument -> spatialobs.InvalidInputError (a ValueError) and
  // std::out_of_range -> spatialobs.OutOfRangeError (an IndexError), so that
  // callers catch one SpatialObsError base.
  py::object errors = py::module_::import("spatialobs._errors");
  static py::handle invalid = py::object(errors.attr("InvalidInputError")).release();
  static py::handle out_of_range = py::object(errors.attr("OutOfRangeError")).release();
  py::register_exception_translator([](std::exception_ptr p) {
    try {
      if (p) std::rethrow_exception(p);
    } catch (const std::invalid_argument& e) {
      PyErr_SetString(invalid.ptr(), e.what());
    } catch (const std::out_of_range& e) {
      PyErr_SetString(out_of_range.ptr(), e.what());
    }
  });

  spatialobs::bind::register_arrows(m);
  spatialobs::bind::register_box_index(m);
  spatialobs::bind::register_coverage(m);
  spatialobs::bind::register_elbow(m);
  spatialobs::bind::register_geometry(m);
  spatialobs::bind::register_placement(m);
  spatialobs::bind::register_screen(m);
  spatialobs::bind::register_text(m);
}
