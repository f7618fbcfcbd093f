// Python reference kernels: `@parity.register("MyOp", domain="my.domain")` on
// `fn(attrs, *inputs) -> list of arrays` (the contract of Polygraphy's pluginref `register`).
//
// The reference backend runs kernels on the thread that runs the model (worker threads only
// exist inside a kernel's parallel_for), so a Python kernel takes the GIL around its call and
// nowhere else. Inputs are read-only NumPy views of the executor's buffers; outputs are
// shared with the returned arrays, which stay alive as long as the executor holds them.
#include "backend/ref/registry.h"
#include "py_util.h"

namespace parity::python {

namespace {

std::string python_name(const py::object& fn) {
  if (py::hasattr(fn, "__qualname__")) return py::str(fn.attr("__qualname__"));
  return py::str(fn);
}

py::object text(const std::string& s) {
  PyObject* u = PyUnicode_DecodeUTF8(s.data(), static_cast<ssize_t>(s.size()), nullptr);
  if (u) return py::reinterpret_steal<py::object>(u);
  PyErr_Clear();
  return py::bytes(s);  // not UTF-8: the raw bytes
}

// The node's attributes as Polygraphy's onnx-graphsurgeon gives them: int, float, str, lists
// of those, arrays for tensors.
py::dict attributes_of(const ref::OpContext& ctx) {
  using Type = ir::Attribute::Type;
  py::dict attrs;
  for (const ir::Attribute& a : ctx.node().attributes) {
    py::object v;
    switch (a.type) {
      case Type::kFloat:
        v = py::float_(a.f);
        break;
      case Type::kInt:
        v = py::int_(a.i);
        break;
      case Type::kString:
        v = text(a.s);
        break;
      case Type::kTensor:
        v = array_from_tensor(a.t);
        break;
      case Type::kFloats:
        v = py::cast(a.floats);
        break;
      case Type::kInts:
        v = py::cast(a.ints);
        break;
      case Type::kStrings: {
        py::list l;
        for (const auto& s : a.strings) l.append(text(s));
        v = l;
        break;
      }
      case Type::kTensors: {
        py::list l;
        for (const auto& t : a.tensors) l.append(array_from_tensor(t));
        v = l;
        break;
      }
      case Type::kTypeProto:
      case Type::kTypeProtos: {
        py::list l;
        for (const auto& t : a.type_protos) l.append(t.str());
        v = a.type == Type::kTypeProto && l.size() == 1 ? py::object(l[0]) : py::object(l);
        break;
      }
      default:
        ctx.fail(
            "attribute '{}' is of type {}; Python reference implementations take number, "
            "string, tensor and type attributes",
            a.name, ir::attribute_type_name(a.type));
    }
    attrs[py::str(a.name)] = v;
  }
  return attrs;
}

class PythonKernel : public ref::Kernel {
 public:
  PythonKernel(const ref::OpContext& ctx, PyRef fn, std::string op_type)
      : fn_(std::move(fn)), op_type_(std::move(op_type)) {
    py::gil_scoped_acquire gil;
    attrs_ = make_py_ref(attributes_of(ctx));
    name_ = python_name(*fn_);
    for (size_t i = 0; i < ctx.num_outputs(); ++i) {
      const ir::ValueType* t = ctx.output_type(i);
      declared_.push_back(t && t->kind == ir::ValueType::Kind::kTensor ? t->elem_type
                                                                       : std::nullopt);
    }
  }

  ref::Outputs run(const ref::Inputs& inputs, ref::RunContext& ctx) override {
    py::gil_scoped_acquire gil;
    py::tuple args(inputs.size() + 1);
    args[0] = *attrs_;
    for (size_t i = 0; i < inputs.size(); ++i) args[i + 1] = to_python(inputs[i]);
    py::object result;
    try {
      result = (*fn_)(*args);
    } catch (py::error_already_set& e) {
      ctx.fail("the Python reference implementation {} of {} raised {}", name_, op_type_, e.what());
    }
    const auto& names = ctx.node().outputs;
    if (!py::isinstance<py::list>(result) && !py::isinstance<py::tuple>(result))
      ctx.fail(
          "the Python reference implementation {} of {} returned {}; it must return a list "
          "with one array per node output ({})",
          name_, op_type_, std::string(py::str(py::type::of(result).attr("__name__"))),
          names.size());
    auto seq = result.cast<py::sequence>();
    if (seq.size() != names.size())
      ctx.fail(
          "{} reference implementation returned the wrong number of outputs.\nNote: "
          "Expected {} but received {}",
          op_type_, names.size(), seq.size());
    ref::Outputs outputs(names.size());
    for (size_t i = 0; i < names.size(); ++i) {
      py::handle item = seq[i];
      if (item.is_none()) {
        if (!names[i].empty())
          ctx.fail(
              "the Python reference implementation {} of {} returned None for output {} "
              "('{}'); only unused optional outputs may be None",
              name_, op_type_, i, names[i]);
        continue;
      }
      Tensor t = tensor_from_array(item, fmt::format("output {} ('{}')", i, names[i]));
      if (declared_[i] && *declared_[i] != t.dtype())
        ctx.fail(
            "the Python reference implementation {} of {} returned output {} ('{}') with "
            "dtype {}, but the model declares {}; convert it, e.g. with .astype(np.{})",
            name_, op_type_, i, names[i], dtype_name(t.dtype()), dtype_name(*declared_[i]),
            dtype_name(*declared_[i]));
      outputs[i] = Value(std::move(t));
    }
    return outputs;
  }

 private:
  static py::object to_python(const Value& v) {
    if (v.is_none()) return py::none();  // an empty optional input, as in Polygraphy
    if (v.is_tensor()) return array_from_tensor(v.tensor);
    py::list items;
    for (const auto& t : v.sequence) items.append(array_from_tensor(t));
    return items;
  }

  PyRef fn_;
  std::string op_type_;
  std::string name_;
  PyRef attrs_;
  std::vector<std::optional<DataType>> declared_;  // output types the model states
};

}  // namespace

void bind_python_ops(py::module_& m) {
  m.def(
      "register_op",
      [](const std::string& op_type, const std::string& domain, int64_t since_version,
         std::optional<int64_t> until_version, py::object fn) {
        if (!PyCallable_Check(fn.ptr()))
          fail_usage(
              "failed to register op '{}' with {}: the reference implementation must be "
              "callable as fn(attrs, *inputs)",
              op_type, std::string(py::repr(fn)));
        const int64_t until = until_version.value_or(ref::kOpsetMax);
        if (since_version < 1 || since_version > until)
          fail_usage(
              "failed to register op '{}' with opsets [{}, {}]: since_version must be at "
              "least 1 and not above until_version",
              op_type, since_version, until);
        PyRef ref_fn = make_py_ref(std::move(fn));
        ref::Registry::global().add(ref::KernelEntry{
            domain, op_type, since_version, until,
            [ref_fn, op_type](const ref::OpContext& ctx) -> std::unique_ptr<ref::Kernel> {
              return std::make_unique<PythonKernel>(ctx, ref_fn, op_type);
            },
            "a Python op"});
      },
      py::arg("op_type"), py::arg("domain"), py::arg("since_version"), py::arg("until_version"),
      py::arg("fn"));

  m.def("registered_ops",
        [](const std::string& domain) { return ref::Registry::global().op_types(domain); });
}

}  // namespace parity::python
