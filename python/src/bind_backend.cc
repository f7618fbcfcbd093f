// Models, loaders, runners and ONNX Runtime sessions. The Python classes with Polygraphy's
// names (parity/backend/*.py) are thin wrappers over these.
#include "backend/onnxrt/runner.h"
#include "backend/ref/plugin.h"
#include "backend/ref/runner.h"
#include "onnx/loaders.h"
#include "onnx/model_io.h"
#include "onnx/save_model.h"
#include "py_util.h"

namespace parity::python {

namespace {

onnx_io::LoadOptions load_options(const std::string& external_data_dir, bool ignore_external_data) {
  onnx_io::LoadOptions o;
  o.external_data_dir = external_data_dir;
  o.ignore_external_data = ignore_external_data;
  return o;
}

OrtOptions ort_options(std::vector<std::string> providers,
                       std::vector<std::string> provider_options, std::string lib_path,
                       int intra_op_threads, int graph_optimization_level,
                       std::vector<std::string> custom_op_libs) {
  OrtOptions o;
  o.providers = std::move(providers);
  o.provider_options = std::move(provider_options);
  o.lib_path = std::move(lib_path);
  o.intra_op_threads = intra_op_threads;
  o.graph_optimization_level = graph_optimization_level;
  o.custom_op_libs = std::move(custom_op_libs);
  return o;
}

std::vector<std::string> value_names(const std::vector<ir::ValueInfo>& values) {
  std::vector<std::string> names;
  for (const auto& v : values) names.push_back(v.name);
  return names;
}

// What a Python runner's get_input_metadata_impl() returns: a TensorMetadata, or any mapping
// of name -> (dtype, shape) or an object with .dtype and .shape (Polygraphy's MetadataTuple).
TensorMetadata metadata_from_object(py::handle obj, const std::string& runner) {
  if (py::isinstance<TensorMetadata>(obj)) return obj.cast<TensorMetadata>();
  if (!py::hasattr(obj, "items"))
    fail(
        "failed to read the input metadata of runner '{}': get_input_metadata_impl() returned "
        "{}; return a TensorMetadata (parity.common) or a dict of name -> (dtype, shape)",
        runner, std::string(py::str(py::type::of(obj).attr("__name__"))));
  TensorMetadata meta;
  for (py::handle item : obj.attr("items")()) {
    auto kv = item.cast<py::tuple>();
    py::object value = kv[1];
    py::object dtype = py::none(), shape = py::none();
    if (py::hasattr(value, "dtype") && py::hasattr(value, "shape")) {
      dtype = value.attr("dtype");
      shape = value.attr("shape");
    } else {
      auto pair = value.cast<py::sequence>();
      dtype = pair[0];
      shape = pair[1];
    }
    std::optional<DataType> t;
    if (!dtype.is_none()) t = dtype_from_object(dtype);
    std::optional<DimList> dims;
    if (!shape.is_none()) dims = dims_from_object(shape);
    meta.add(py::str(kv[0]), t, dims);
  }
  return meta;
}

// A runner written in Python: a subclass of parity.backend.base.BaseRunner that overrides
// Polygraphy's hooks (activate_impl, get_input_metadata_impl, infer_impl, deactivate_impl).
// The C++ runner contract calls them, so Comparator::run, feed checks and coercion treat it
// as any other runner. The Python object is held weakly: it owns this runner, not the reverse.
class PythonRunner : public Runner {
 public:
  PythonRunner(py::handle owner, std::string name, const std::string& prefix)
      : Runner(std::move(name), prefix), owner_(make_py_ref(py::weakref(owner))) {}

 protected:
  void activate_impl() override {
    py::gil_scoped_acquire gil;
    owner().attr("activate_impl")();
  }
  void deactivate_impl() override {
    py::gil_scoped_acquire gil;
    owner().attr("deactivate_impl")();
  }
  TensorMetadata input_metadata_impl() override {
    py::gil_scoped_acquire gil;
    return metadata_from_object(owner().attr("get_input_metadata_impl")(), name());
  }
  TensorMap infer_impl(const TensorMap& feed) override {
    py::gil_scoped_acquire gil;
    py::object self = owner();
    self.attr("inference_time") = py::none();
    py::object outputs = self.attr("infer_impl")(dict_from_tensors(feed));
    if (!py::hasattr(outputs, "items"))
      fail(
          "failed to run runner '{}': infer_impl() returned {}; return a dict of output name "
          "-> NumPy array",
          name(), std::string(py::str(py::type::of(outputs).attr("__name__"))));
    // Copied, because a runner may reuse its output buffers (Polygraphy copies them too when
    // more than one iteration is kept).
    py::object numpy_array = py::module_::import("numpy").attr("array");
    py::dict copies;
    for (py::handle item : outputs.attr("items")()) {
      auto kv = item.cast<py::tuple>();
      copies[kv[0]] = numpy_array(kv[1], py::arg("copy") = true);
    }
    TensorMap out = tensors_from_dict(copies, fmt::format("output of runner '{}'", name()));
    py::object seconds = self.attr("inference_time");
    if (!seconds.is_none()) set_inference_time(seconds.cast<double>());
    return out;
  }

 private:
  py::object owner() const {
    py::object self = (*owner_)();
    if (self.is_none())
      fail("failed to use Python runner '{}': its object was deleted while the runner was in use",
           name());
    return self;
  }
  PyRef owner_;
};

}  // namespace

void bind_backend(py::module_& m) {
  py::class_<ir::Model, ModelPtr>(m, "Model", "A loaded ONNX model (Parity's graph IR).")
      .def_property_readonly("path", [](const ir::Model& x) { return x.path; })
      .def_property_readonly("opsets", [](const ir::Model& x) { return x.opsets; })
      .def_property_readonly("input_names",
                             [](const ir::Model& x) { return value_names(x.graph.inputs); })
      .def_property_readonly("output_names",
                             [](const ir::Model& x) { return value_names(x.graph.outputs); })
      .def_property_readonly("num_nodes", [](const ir::Model& x) { return x.graph.nodes.size(); })
      .def("__repr__", [](const ir::Model& x) {
        return fmt::format("<parity.Model '{}' with {} nodes, inputs [{}], outputs [{}]>",
                           x.graph.name, x.graph.nodes.size(),
                           fmt::join(value_names(x.graph.inputs), ", "),
                           fmt::join(value_names(x.graph.outputs), ", "));
      });

  // The loaders' work, done at once (the Python loader classes call these from call_impl).
  m.def(
      "onnx_from_path",
      [](const std::string& path, const std::string& external_data_dir, bool ignore_external_data) {
        py::gil_scoped_release nogil;
        return OnnxFromPath(path, load_options(external_data_dir, ignore_external_data))();
      },
      py::arg("path"), py::arg("external_data_dir") = "", py::arg("ignore_external_data") = false);
  m.def(
      "onnx_from_bytes",
      [](const py::bytes& bytes, const std::string& external_data_dir, bool ignore_external_data) {
        // Parsed in place: a ModelProto's serialized bytes are not copied once more (the
        // argument keeps the bytes object alive while the GIL is released).
        char* data = nullptr;
        Py_ssize_t size = 0;
        if (PyBytes_AsStringAndSize(bytes.ptr(), &data, &size) != 0) throw py::error_already_set();
        std::string_view view(data, static_cast<size_t>(size));
        py::gil_scoped_release nogil;
        return onnx_io::load_model_from_bytes(
            view, load_options(external_data_dir, ignore_external_data), ".");
      },
      py::arg("bytes"), py::arg("external_data_dir") = "", py::arg("ignore_external_data") = false);
  m.def("bytes_from_onnx", [](const ModelPtr& model) {
    std::string bytes;
    {
      py::gil_scoped_release nogil;
      bytes = onnx_io::serialize_model(*model);
    }
    return py::bytes(bytes);
  });
  m.def(
      "modify_outputs",
      [](const ModelPtr& model, std::vector<std::string> outputs, bool mark_all,
         std::vector<std::string> exclude) {
        py::gil_scoped_release nogil;
        return onnx_io::modify_outputs(*model, outputs, mark_all, exclude);
      },
      py::arg("model"), py::arg("outputs"), py::arg("mark_all"), py::arg("exclude"));
  m.def(
      "infer_shapes_model",
      [](const ModelPtr& model, bool error_ok) {
        py::gil_scoped_release nogil;
        return InferShapes(Loader<ModelPtr>(model), onnx_io::LoadOptions{}, error_ok)();
      },
      py::arg("model"), py::arg("error_ok") = true);
  m.def(
      "save_onnx",
      [](const ModelPtr& model, const std::string& path, py::object external_data_path,
         long long size_threshold, bool all_tensors_to_one_file) {
        onnx_io::SaveOptions o;
        if (!external_data_path.is_none()) o.external_data_path = py::str(external_data_path);
        if (size_threshold >= 0) o.size_threshold = static_cast<size_t>(size_threshold);
        o.all_tensors_to_one_file = all_tensors_to_one_file;
        py::gil_scoped_release nogil;
        onnx_io::save_model(*model, path, o);
      },
      py::arg("model"), py::arg("path"), py::arg("external_data_path") = py::none(),
      py::arg("size_threshold") = -1, py::arg("all_tensors_to_one_file") = true);

  py::class_<Runner, std::shared_ptr<Runner>>(m, "Runner")
      .def_property_readonly("name", &Runner::name)
      .def_property_readonly("is_active", &Runner::is_active)
      .def("activate", &Runner::activate, py::call_guard<py::gil_scoped_release>())
      .def("deactivate", &Runner::deactivate, py::call_guard<py::gil_scoped_release>())
      .def("get_input_metadata", &Runner::input_metadata, py::call_guard<py::gil_scoped_release>())
      .def("last_inference_time", &Runner::last_inference_time)
      .def_property_readonly("inference_time", &Runner::inference_time)
      .def(
          "infer",
          [](Runner& self, py::handle feed, bool check_inputs) {
            TensorMap inputs = tensors_from_dict(feed, "input");
            TensorMap outputs;
            {
              py::gil_scoped_release nogil;
              outputs = self.infer(inputs, check_inputs);
            }
            return dict_from_tensors(outputs);
          },
          py::arg("feed_dict"), py::arg("check_inputs") = true);

  m.def(
      "make_python_runner",
      [](py::handle owner, const std::string& name,
         const std::string& prefix) -> std::shared_ptr<Runner> {
        return std::make_shared<PythonRunner>(owner, name, prefix);
      },
      py::arg("owner"), py::arg("name") = "", py::arg("prefix") = "Runner");

  m.def(
      "make_pluginref_runner",
      [](py::object graph, const std::string& name, int threads) -> std::shared_ptr<Runner> {
        auto runner = std::make_shared<PluginRefRunner>(
            loader_from_object<ModelPtr>(std::move(graph), "a parity.Model"), name);
        runner->set_threads(threads);
        return runner;
      },
      py::arg("graph"), py::arg("name") = "", py::arg("threads") = 0);

  py::class_<OrtSession, OrtSessionPtr>(m, "OrtSession", "A live ONNX Runtime session.")
      .def_property_readonly("providers", &OrtSession::providers)
      .def_property_readonly("output_names", &OrtSession::output_names)
      .def("get_inputs", &OrtSession::input_metadata);

  m.def(
      "session_from_onnx",
      [](py::object model, std::vector<std::string> providers,
         std::vector<std::string> provider_options, std::string lib_path, int intra_op_threads,
         int graph_optimization_level, std::vector<std::string> custom_op_libs) {
        OrtOptions options =
            ort_options(std::move(providers), std::move(provider_options), std::move(lib_path),
                        intra_op_threads, graph_optimization_level, std::move(custom_op_libs));
        Loader<OrtSessionPtr> session;
        if (py::isinstance<py::str>(model)) {
          session = SessionFromOnnxPath(model.cast<std::string>(), options);
        } else if (py::isinstance<py::bytes>(model)) {
          session = SessionFromOnnxBytes(Loader<std::string>(model.cast<std::string>()), options);
        } else {
          session = SessionFromOnnx(Loader<ModelPtr>(model.cast<ModelPtr>()), options);
        }
        py::gil_scoped_release nogil;
        return session();
      },
      py::arg("model"), py::arg("providers"), py::arg("provider_options"), py::arg("lib_path"),
      py::arg("intra_op_threads"), py::arg("graph_optimization_level"), py::arg("custom_op_libs"));

  m.def(
      "make_onnxrt_runner",
      [](py::object session, const std::string& name) -> std::shared_ptr<Runner> {
        return std::make_shared<OnnxrtRunner>(
            loader_from_object<OrtSessionPtr>(std::move(session), "a parity OrtSession"), name);
      },
      py::arg("sess"), py::arg("name") = "");

  m.def(
      "load_plugin",
      [](const std::string& path) {
        ref::PluginInfo info = ref::load_plugin(path);
        return info.ops;
      },
      py::arg("path"), "Loads a C++ op plugin (plugin_api.h) and returns the ops it registered.");
}

}  // namespace parity::python
