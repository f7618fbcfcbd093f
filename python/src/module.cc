// The extension module `parity._parity`. The pure-Python package (parity/*.py) gives it
// Polygraphy's names; everything that computes is the C++ library.
#include "core/error.h"
#include "py_util.h"

PYBIND11_MODULE(_parity, m) {
  namespace py = pybind11;
  using namespace parity::python;
  m.doc() = "Parity's C++ library: ONNX models on several backends, compared as Polygraphy does.";
  m.attr("__version__") = PARITY_VERSION;

  // parity::Error -> ParityException with the same message; usage errors are a subclass.
  // pybind11 tries the newest translator first, so the subclass is registered second.
  static py::exception<parity::Error> parity_exception(m, "ParityException");
  static py::exception<parity::UsageError> usage_error(m, "ParityUsageError",
                                                       parity_exception.ptr());
  py::register_exception_translator([](std::exception_ptr p) {
    try {
      if (p) std::rethrow_exception(p);
    } catch (const parity::UsageError& e) {
      usage_error(e.what());
    } catch (const parity::Error& e) {
      parity_exception(e.what());
    }
  });

  bind_arrays(m);
  bind_backend(m);
  bind_results(m);
  bind_comparator(m);
  bind_python_ops(m);
  bind_layerwise(m);
  bind_surgeon(m);
}
