// The extension module `parity._parity`. The pure-Python package (parity/*.py) gives it
// Polygraphy's names; everything that computes is the C++ library.
#include "backend/subprocess_runner.h"
#include "core/error.h"
#include "py_util.h"

namespace {

// CPython's fork protocol around SubprocessRunner's fork() (use_subprocess=True): the forking
// thread, which runs C++ with the GIL released, takes the GIL and the interpreter's fork locks
// first, so that the child's copy of the interpreter is consistent and its GIL free once the
// child releases it; without this, another Python thread holding the GIL at the moment of the
// fork left the child waiting for it forever.
thread_local PyGILState_STATE fork_gil_state;
void before_fork() {
  fork_gil_state = PyGILState_Ensure();
  PyOS_BeforeFork();
}
void after_fork_in_parent() {
  PyOS_AfterFork_Parent();
  PyGILState_Release(fork_gil_state);
}
void after_fork_in_child() {
  PyOS_AfterFork_Child();
  PyGILState_Release(fork_gil_state);
}

}  // namespace

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

  parity::set_fork_hooks({before_fork, after_fork_in_parent, after_fork_in_child});

  bind_arrays(m);
  bind_backend(m);
  bind_results(m);
  bind_comparator(m);
  bind_python_ops(m);
  bind_layerwise(m);
  bind_dataset(m);
  bind_surgeon(m);
}
