// NumPy arrays <-> Parity tensors. Numeric arrays are shared both ways: a tensor made from an
// array views the array's memory and keeps it alive; an array made from a tensor views the
// tensor's buffer and keeps the tensor alive through a capsule.
#include <Python.h>

#include "py_util.h"

#include "backend/value_tensors.h"

namespace parity::python {

PyRef make_py_ref(py::object obj) {
  return PyRef(new py::object(std::move(obj)), [](py::object* p) {
    if (!Py_IsInitialized()) {
      // The interpreter is gone (a static destructor at exit): the object went with it.
      (void)p->release();
      delete p;
      return;
    }
    py::gil_scoped_acquire gil;
    delete p;
  });
}

py::dtype numpy_dtype(DataType t) {
  switch (t) {
    case DataType::kFloat32:
      return py::dtype("float32");
    case DataType::kFloat64:
      return py::dtype("float64");
    case DataType::kFloat16:
      return py::dtype("float16");
    case DataType::kInt8:
      return py::dtype("int8");
    case DataType::kInt16:
      return py::dtype("int16");
    case DataType::kInt32:
      return py::dtype("int32");
    case DataType::kInt64:
      return py::dtype("int64");
    case DataType::kUInt8:
      return py::dtype("uint8");
    case DataType::kUInt16:
      return py::dtype("uint16");
    case DataType::kUInt32:
      return py::dtype("uint32");
    case DataType::kUInt64:
      return py::dtype("uint64");
    case DataType::kBool:
      return py::dtype("bool");
    case DataType::kComplex64:
      return py::dtype("complex64");
    case DataType::kComplex128:
      return py::dtype("complex128");
    case DataType::kString:
      return py::dtype("O");
    default:
      fail(
          "failed to convert element type {} to a NumPy dtype: NumPy has no such type; "
          "supported are float16/32/64, int8-64, uint8-64, bool, complex and string",
          dtype_name(t));
  }
}

std::optional<DataType> dtype_from_numpy(const py::dtype& d) {
  const char kind = d.kind();
  const ssize_t size = d.itemsize();
  switch (kind) {
    case 'f':
      if (size == 2) return DataType::kFloat16;
      if (size == 4) return DataType::kFloat32;
      if (size == 8) return DataType::kFloat64;
      return std::nullopt;
    case 'i':
      if (size == 1) return DataType::kInt8;
      if (size == 2) return DataType::kInt16;
      if (size == 4) return DataType::kInt32;
      if (size == 8) return DataType::kInt64;
      return std::nullopt;
    case 'u':
      if (size == 1) return DataType::kUInt8;
      if (size == 2) return DataType::kUInt16;
      if (size == 4) return DataType::kUInt32;
      if (size == 8) return DataType::kUInt64;
      return std::nullopt;
    case 'b':
      return DataType::kBool;
    case 'c':
      if (size == 8) return DataType::kComplex64;
      if (size == 16) return DataType::kComplex128;
      return std::nullopt;
    case 'U':
    case 'S':
    case 'O':
      return DataType::kString;
    default:
      return std::nullopt;
  }
}

DataType dtype_from_object(py::handle obj) {
  // parity.datatype.DataType.FLOAT32 and the like carry their Parity name.
  if (py::hasattr(obj, "_parity_dtype_name")) {
    const std::string name = obj.attr("_parity_dtype_name").cast<std::string>();
    if (auto t = dtype_from_name(name)) return *t;
  }
  if (py::isinstance<py::str>(obj)) {
    const std::string name = obj.cast<std::string>();
    if (auto t = dtype_from_name(name)) return *t;
  }
  py::dtype d = py::dtype::from_args(py::reinterpret_borrow<py::object>(obj));
  if (auto t = dtype_from_numpy(d)) return *t;
  fail(
      "failed to use dtype '{}': Parity has no such element type; use a NumPy numeric, bool "
      "or string dtype",
      std::string(py::str(obj)));
}

namespace {

Tensor strings_from_array(const py::array& arr, const Shape& shape, const std::string& what) {
  Tensor t(DataType::kString, shape);
  std::string* out = t.data<std::string>();
  py::object flat = arr.attr("ravel")();
  ssize_t i = 0;
  for (py::handle item : flat) {
    if (py::isinstance<py::bytes>(item))
      out[i] = item.cast<std::string>();
    else if (py::isinstance<py::str>(item))
      out[i] = item.cast<std::string>();
    else
      fail(
          "failed to convert {} to a string tensor with element {}: an object array must hold "
          "str or bytes",
          what, std::string(py::repr(item)));
    ++i;
  }
  return t;
}

}  // namespace

Tensor tensor_from_array(py::handle obj, const std::string& what) {
  py::array arr = py::array::ensure(obj);
  if (!arr) {
    PyErr_Clear();
    fail("failed to convert {} with value of type {} to a NumPy array", what,
         std::string(py::str(py::type::of(obj).attr("__name__"))));
  }
  std::optional<DataType> dtype = dtype_from_numpy(arr.dtype());
  if (!dtype)
    fail(
        "failed to convert {} with dtype {}: Parity has no such element type; use a numeric, "
        "bool or string array",
        what, std::string(py::str(arr.dtype())));
  Shape shape(arr.shape(), arr.shape() + arr.ndim());
  if (*dtype == DataType::kString) return strings_from_array(arr, shape, what);
  const bool native = arr.dtype().attr("isnative").cast<bool>();
  const int flags = py::detail::array_proxy(arr.ptr())->flags;
  const bool usable = native && (flags & py::detail::npy_api::NPY_ARRAY_C_CONTIGUOUS_) &&
                      (flags & py::detail::npy_api::NPY_ARRAY_ALIGNED_);
  if (!usable) {
    // One copy into a contiguous, aligned, native-order array; then shared like any other.
    py::object native_dtype = arr.dtype().attr("newbyteorder")("=");
    arr = py::module_::import("numpy").attr("ascontiguousarray")(arr, native_dtype);
  }
  void* data = const_cast<void*>(arr.data());
  return Tensor::borrow(*dtype, std::move(shape), data, make_py_ref(arr));
}

py::array array_from_tensor(const Tensor& t) {
  std::vector<ssize_t> shape(t.shape().begin(), t.shape().end());
  if (t.dtype() == DataType::kString) {
    py::list items;
    const std::string* s = t.data<std::string>();
    for (int64_t i = 0; i < t.numel(); ++i) {
      PyObject* u =
          PyUnicode_DecodeUTF8(s[i].data(), static_cast<ssize_t>(s[i].size()), "surrogateescape");
      if (!u) throw py::error_already_set();
      items.append(py::reinterpret_steal<py::str>(u));
    }
    py::array arr = py::module_::import("numpy").attr("array")(items, py::dtype("O"));
    return arr.attr("reshape")(shape);
  }
  py::dtype dtype = numpy_dtype(t.dtype());
  if (t.numel() == 0 || !t.raw_data()) return py::array(dtype, shape);
  auto* holder = new Tensor(t);
  py::capsule keep(holder, [](void* p) { delete static_cast<Tensor*>(p); });
  py::array arr(dtype, shape, {}, t.raw_data(), keep);
  // Read-only: the buffer may be shared with the model's constants or other outputs.
  py::detail::array_proxy(arr.ptr())->flags &= ~py::detail::npy_api::NPY_ARRAY_WRITEABLE_;
  return arr;
}

py::dict dict_from_tensors(const TensorMap& tensors) {
  py::dict d;
  for (const auto& [name, t] : tensors) d[py::str(name)] = array_from_tensor(t);
  return d;
}

namespace {

// A Python dict fed as an ONNX map: int or str keys, values that NumPy makes one 1-D array of.
MapValue map_from_dict(py::handle d, const std::string& what) {
  py::list keys, values;
  for (py::handle item : d.attr("items")()) {
    auto pair = item.cast<py::tuple>();
    keys.append(pair[0]);
    values.append(pair[1]);
  }
  py::module_ np = py::module_::import("numpy");
  const int64_t n = static_cast<int64_t>(py::len(keys));
  Tensor k;
  if (n > 0 && py::isinstance<py::str>(keys[0])) {
    k = Tensor(DataType::kString, {n});
    for (int64_t i = 0; i < n; ++i) {
      if (!py::isinstance<py::str>(keys[i]))
        fail("failed to read {}: its keys mix str and other types; map keys are int or str", what);
      k.data<std::string>()[i] = keys[i].cast<std::string>();
    }
  } else {
    k = tensor_from_array(np.attr("asarray")(keys, "int64"), what + "'s keys");
  }
  Tensor v = tensor_from_array(np.attr("asarray")(values), what + "'s values");
  if (v.rank() != 1)
    fail("failed to read {}: its values make an array of shape {}; map values are scalars", what,
         shape_str(v.shape()));
  return sorted_map_from_entries(k, v);
}

}  // namespace

TensorMap tensors_from_dict(py::handle feed, const std::string& what) {
  if (!py::isinstance<py::dict>(feed) && !py::hasattr(feed, "items"))
    fail("failed to read {} of type {}: expected a dict of name -> array", what,
         std::string(py::str(py::type::of(feed).attr("__name__"))));
  TensorMap tensors;
  for (py::handle item : feed.attr("items")()) {
    auto pair = item.cast<py::tuple>();
    const std::string name = py::str(pair[0]);
    const std::string item_what = fmt::format("{} '{}'", what, name);
    py::handle value = pair[1];
    // A list (of arrays, or of dicts) is a sequence and a dict a map, as ONNX Runtime's Python
    // binding takes them; they travel as derived tensors (backend/value_tensors.h).
    if (py::isinstance<py::dict>(value)) {
      add_value_tensors(tensors, name, Value::make_map(map_from_dict(value, item_what)));
    } else if (py::isinstance<py::list>(value) || py::isinstance<py::tuple>(value)) {
      std::vector<Tensor> items;
      std::vector<MapValue> maps;
      size_t k = 0;
      for (py::handle v : value) {
        const std::string w = fmt::format("item {} of {}", k++, item_what);
        if (py::isinstance<py::dict>(v))
          maps.push_back(map_from_dict(v, w));
        else
          items.push_back(tensor_from_array(v, w));
      }
      if (!maps.empty() && !items.empty())
        fail("failed to read {}: the list mixes dicts and arrays", item_what);
      if (!maps.empty()) {
        const DataType key = maps.front().keys.dtype(), val = maps.front().values.dtype();
        add_value_tensors(tensors, name, Value::make_map_sequence(std::move(maps), key, val));
      } else {
        const DataType elem = items.empty() ? DataType::kFloat32 : items.front().dtype();
        add_value_tensors(tensors, name, Value::make_sequence(std::move(items), elem));
      }
    } else {
      tensors.set(name, tensor_from_array(value, item_what));
    }
  }
  return tensors;
}

py::list dims_to_list(const DimList& dims) {
  py::list out;
  for (const Dim& d : dims) {
    if (d.is_fixed())
      out.append(d.value);
    else if (d.is_symbolic())
      out.append(d.param);
    else
      out.append(py::none());
  }
  return out;
}

DimList dims_from_object(py::handle shape) {
  DimList dims;
  for (py::handle d : shape) {
    if (d.is_none())
      dims.push_back(Dim::unknown());
    else if (py::isinstance<py::str>(d))
      dims.push_back(Dim::symbolic(d.cast<std::string>()));
    else {
      const int64_t v = d.cast<int64_t>();
      dims.push_back(v < 0 ? Dim::unknown() : Dim::fixed(v));
    }
  }
  return dims;
}

void bind_arrays(py::module_& m) {
  py::class_<TensorMeta>(m, "MetadataTuple")
      .def_readonly("name", &TensorMeta::name)
      .def_property_readonly("dtype",
                             [](const TensorMeta& t) -> py::object {
                               if (!t.dtype) return py::none();
                               if (*t.dtype == DataType::kString) return py::dtype("O");
                               try {
                                 return numpy_dtype(*t.dtype);
                               } catch (const Error&) {
                                 return py::str(std::string(dtype_name(*t.dtype)));
                               }
                             })
      .def_property_readonly("shape",
                             [](const TensorMeta& t) -> py::object {
                               if (!t.shape) return py::none();
                               return dims_to_list(*t.shape);
                             })
      .def("__repr__", [](const TensorMeta& t) {
        TensorMetadata one;
        one.add(t.name, t.dtype, t.shape);
        return one.str();
      });

  py::class_<TensorMetadata>(m, "TensorMetadata")
      .def(py::init<>())
      .def(
          "add",
          [](TensorMetadata& self, const std::string& name, py::object dtype,
             py::object shape) -> TensorMetadata& {
            std::optional<DataType> t;
            if (!dtype.is_none()) t = dtype_from_object(dtype);
            std::optional<DimList> dims;
            if (!shape.is_none()) dims = dims_from_object(shape);
            return self.add(name, t, dims);
          },
          py::arg("name"), py::arg("dtype") = py::none(), py::arg("shape") = py::none(),
          py::return_value_policy::reference_internal)
      .def("__len__", &TensorMetadata::size)
      .def("__contains__",
           [](const TensorMetadata& self, const std::string& n) { return self.find(n) != nullptr; })
      .def("__getitem__",
           [](const TensorMetadata& self, const std::string& n) {
             const TensorMeta* t = self.find(n);
             if (!t) throw py::key_error(n);
             return *t;
           })
      .def("keys", &TensorMetadata::names)
      .def("__iter__", [](const TensorMetadata& self) { return py::iter(py::cast(self.names())); })
      .def("values",
           [](const TensorMetadata& self) {
             return std::vector<TensorMeta>(self.begin(), self.end());
           })
      .def("items",
           [](const TensorMetadata& self) {
             py::list out;
             for (const auto& t : self) out.append(py::make_tuple(t.name, t));
             return out;
           })
      .def("__str__", &TensorMetadata::str)
      .def("__repr__", &TensorMetadata::str);
}

}  // namespace parity::python
