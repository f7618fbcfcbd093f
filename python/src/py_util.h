// Shared pieces of the `parity` Python module (`parity._parity`): holding Python objects from
// C++ code that may run without the GIL, and NumPy <-> Tensor conversions without copies.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include "comparator/compare.h"
#include "comparator/data_loader.h"
#include "comparator/struct.h"
#include "core/loader.h"
#include "core/metadata.h"
#include "core/tensor.h"
#include "onnx/loaders.h"

// Iteration lists are bound as a list-like type with reference semantics, so that
// `results["runner"][0]["y"] = ...` changes the results themselves.
PYBIND11_MAKE_OPAQUE(std::vector<parity::IterationResult>)

namespace parity::python {

namespace py = pybind11;

// A Python object owned from C++. Copies share one reference (no Python refcounting, so they
// may be copied without the GIL); the last copy releases it under the GIL. After the
// interpreter has shut down (static destructors at exit) the reference is left alone.
using PyRef = std::shared_ptr<py::object>;
PyRef make_py_ref(py::object obj);

// The NumPy dtype of a Parity element type; Error for types NumPy lacks (bfloat16, float8,
// int4).
py::dtype numpy_dtype(DataType t);
// The element type of a NumPy dtype; nullopt when Parity has no such type.
std::optional<DataType> dtype_from_numpy(const py::dtype& d);
// A dtype given as np.float32, "float32", np.dtype(...) or a Parity type name.
DataType dtype_from_object(py::handle obj);

// A tensor viewing the array's memory when it is C-contiguous, aligned and in native byte
// order (the array is kept alive), else a contiguous copy. Strings are copied. `what` names
// the value in error messages ("input 'x'").
Tensor tensor_from_array(py::handle obj, const std::string& what);
// A read-only array viewing the tensor's buffer (the tensor is kept alive); strings become an
// object array of str.
py::array array_from_tensor(const Tensor& t);

py::dict dict_from_tensors(const TensorMap& tensors);
TensorMap tensors_from_dict(py::handle feed, const std::string& what);

// Shapes as Polygraphy shows them: fixed dims as int, symbolic ones as their name, unknown
// ones as None.
py::list dims_to_list(const DimList& dims);
DimList dims_from_object(py::handle shape);

// A loader for C++ code from a Python value: the value itself when it is a T already, else a
// callable (a Python loader) invoked, under the GIL, each time the loader is called.
template <typename T>
Loader<T> loader_from_object(py::object obj, const char* what) {
  if (py::isinstance<typename T::element_type>(obj)) return Loader<T>(obj.cast<T>());
  if (!PyCallable_Check(obj.ptr()))
    throw py::type_error(std::string("expected ") + what + " or a loader that returns one, got " +
                         std::string(py::str(py::type::of(obj).attr("__name__"))));
  PyRef fn = make_py_ref(std::move(obj));
  return Loader<T>([fn, what]() -> T {
    py::gil_scoped_acquire gil;
    py::object value = (*fn)();
    if (!py::isinstance<typename T::element_type>(value))
      throw py::type_error(std::string("the loader returned ") +
                           std::string(py::str(py::type::of(value).attr("__name__"))) +
                           ", expected " + what);
    return value.cast<T>();
  });
}

// A per-output value from Python: a number (the default for every output), a dict
// {output: value} ("" for the default), or None (`fallback`).
template <typename T>
PerOutput<T> per_output(py::handle value, T fallback, T (*convert)(py::handle)) {
  PerOutput<T> out;
  if (value.is_none()) {
    out.values[""] = fallback;
  } else if (py::isinstance<py::dict>(value)) {
    for (auto [k, v] : value.cast<py::dict>())
      out.values[py::str(k).cast<std::string>()] = convert(v);
  } else {
    out.values[""] = convert(value);
  }
  return out;
}

double to_double(py::handle h);
int64_t to_int(py::handle h);
ErrorStat to_error_stat(py::handle h);

// The feeds of a data loader given from Python: None (the default DataLoader), a DataLoader
// (borrowed: *borrowed is set and nullptr returned), or any iterable of feed dicts.
std::unique_ptr<FeedSource> feeds_from_object(py::object data_loader, FeedSource** borrowed);

// Bindings, one function per topic (module.cc calls them in order).
void bind_arrays(py::module_& m);
void bind_backend(py::module_& m);
void bind_results(py::module_& m);
void bind_comparator(py::module_& m);
void bind_python_ops(py::module_& m);
void bind_layerwise(py::module_& m);
void bind_surgeon(py::module_& m);

}  // namespace parity::python
