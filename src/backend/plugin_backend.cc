// Backends served by plugin libraries (plugin_api.h, parity_register_backends): each becomes a
// registry entry whose runners call the library's create/infer/destroy. C++ never crosses the
// interface: every callback catches what it could throw and reports a status and a message.
#include <dlfcn.h>

#include <algorithm>
#include <cctype>
#include <cstring>
#include <memory>

#include "backend/plugin_api.h"
#include "backend/plugins.h"
#include "backend/registry.h"
#include "core/activity.h"
#include "core/logger.h"
#include "core/py_format.h"
#include "onnx/model_io.h"

// The opaque handle of plugin_api.h: one create() or infer() call.
struct ParityBackendCall {
  parity::TensorMap* outputs = nullptr;  // during infer()
  std::string error;
};

namespace parity {

namespace {

// A registered backend: the library's definition with its strings copied.
struct PluginBackendDef {
  ParityBackendDef def{};
  std::string name, flag, help, path;
};

std::string call_failure(const std::string& what, const PluginBackendDef& b, int status,
                         const ParityBackendCall& call) {
  return fmt::format(
      "failed to {} with backend '{}' of plugin library '{}': it returned status "
      "{}: {}",
      what, b.name, b.path, status, call.error.empty() ? "it gave no message" : call.error);
}

class PluginBackendRunner : public Runner {
 public:
  PluginBackendRunner(std::shared_ptr<const PluginBackendDef> backend, Loader<ModelPtr> model,
                      std::vector<std::string> options, std::string name)
      : Runner(std::move(name), backend->name + "-runner"),
        backend_(std::move(backend)),
        loader_(std::move(model)),
        options_(std::move(options)) {}
  ~PluginBackendRunner() override { release(); }

 protected:
  void activate_impl() override {
    model_ = loader_();
    const std::string bytes = onnx_io::serialize_model(*model_);
    std::vector<const char*> options;
    for (const auto& o : options_) options.push_back(o.c_str());
    ParityBackendCall call;
    int status = PARITY_ERROR;
    try {
      status = backend_->def.create(backend_->def.user_data, bytes.data(), bytes.size(),
                                    model_->external_data_dir.c_str(), options.data(),
                                    options.size(), &state_, &call);
    } catch (...) {
      call.error = "it threw a C++ exception";
    }
    if (activity_watched()) note_activity("");
    if (status != PARITY_OK) {
      state_ = nullptr;
      fail("{}", call_failure("create a runner", *backend_, status, call));
    }
  }
  void deactivate_impl() override {
    release();
    model_.reset();
  }
  TensorMetadata input_metadata_impl() override { return model_input_metadata(*model_); }
  TensorMap infer_impl(const TensorMap& feed) override {
    std::vector<ParityNamedTensor> inputs;
    std::vector<Shape> shapes;
    shapes.reserve(feed.size());
    for (const auto& [name, t] : feed) {
      if (t.dtype() == DataType::kString)
        fail("failed to run backend '{}' on input '{}': plugin backends take no string tensors",
             backend_->name, name);
      shapes.push_back(t.shape());
      ParityNamedTensor n{};
      n.name = name.c_str();
      n.tensor.dtype = static_cast<int32_t>(t.dtype());
      n.tensor.rank = static_cast<int32_t>(t.shape().size());
      n.tensor.shape = shapes.back().data();
      n.tensor.data = t.raw_data();
      inputs.push_back(n);
    }
    TensorMap produced;
    ParityBackendCall call;
    call.outputs = &produced;
    int status = PARITY_ERROR;
    if (activity_watched())
      note_activity(fmt::format("inference in backend '{}' of plugin library {}", backend_->name,
                                backend_->path));
    try {
      status = backend_->def.infer(state_, inputs.data(), inputs.size(), &call);
    } catch (...) {
      call.error = "it threw a C++ exception";
    }
    if (status != PARITY_OK) fail("{}", call_failure("run inference", *backend_, status, call));
    // In the model's output order; every output must be there.
    TensorMap outputs;
    for (const auto& out : model_->graph.outputs) {
      const Tensor* t = produced.find(out.name);
      if (!t)
        fail("failed to run inference with backend '{}': it did not set output '{}'; it set [{}]",
             backend_->name, out.name, fmt::join(produced.names(), ", "));
      outputs.set(out.name, *t);
    }
    return outputs;
  }

 private:
  void release() {
    if (state_ && backend_->def.destroy) backend_->def.destroy(state_);
    state_ = nullptr;
  }

  std::shared_ptr<const PluginBackendDef> backend_;
  Loader<ModelPtr> loader_;
  std::vector<std::string> options_;
  ModelPtr model_;
  void* state_ = nullptr;
};

int api_set_output(ParityBackendCall* call, const char* name, const ParityTensor* tensor) {
  try {
    if (!call->outputs) {
      call->error = "set_output was called outside infer()";
      return PARITY_ERROR;
    }
    if (!name || !tensor || !dtype_is_valid(tensor->dtype) || tensor->dtype == 0 ||
        tensor->dtype == static_cast<int32_t>(DataType::kString) || tensor->rank < 0 ||
        (tensor->rank > 0 && !tensor->shape)) {
      call->error = fmt::format(
          "set_output got output '{}' without a name, a valid element type "
          "(ONNX numbers except 0 and 8) or a shape",
          name ? name : "");
      return PARITY_ERROR;
    }
    Shape shape(tensor->shape, tensor->shape + tensor->rank);
    for (int64_t d : shape)
      if (d < 0) {
        call->error = fmt::format(
            "set_output got output '{}' with shape {}: sizes cannot be "
            "negative",
            name, shape_str(shape));
        return PARITY_ERROR;
      }
    Tensor t(static_cast<DataType>(tensor->dtype), std::move(shape));
    if (t.nbytes() > 0) {
      if (!tensor->data) {
        call->error = fmt::format("set_output got output '{}' without data", name);
        return PARITY_ERROR;
      }
      std::memcpy(t.raw_data(), tensor->data, t.nbytes());
    }
    call->outputs->set(name, std::move(t));
    return PARITY_OK;
  } catch (const std::exception& e) {
    call->error = e.what();
    return PARITY_ERROR;
  }
}

void api_call_error(ParityBackendCall* call, const char* message) {
  if (call) call->error = message ? message : "";
}

bool valid_name(const std::string& s, bool allow_dash_prefix) {
  if (s.empty()) return false;
  for (char c : s)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '-' && c != '_') return false;
  return allow_dash_prefix || s[0] != '-';
}

// What one load collects before its backends go into the registry (all or nothing).
struct BackendLoad {
  std::string path;
  std::vector<std::shared_ptr<PluginBackendDef>> backends;
  std::string error;
  bool open = true;
};

int api_register_backend(void* host, const ParityBackendDef* def) {
  auto* load = static_cast<BackendLoad*>(host);
  if (!load->open) return PARITY_ERROR;
  try {
    if (!def || !def->name || !def->flag || !def->create || !def->infer) {
      load->error =
          "register_backend was given a definition without name, flag, create() or "
          "infer()";
      return PARITY_ERROR;
    }
    auto b = std::make_shared<PluginBackendDef>();
    b->def = *def;
    b->name = def->name;
    b->flag = def->flag;
    b->help = def->help ? def->help : "";
    b->path = load->path;
    if (!valid_name(b->name, false) || b->flag.rfind("--", 0) != 0 ||
        !valid_name(b->flag.substr(2), false)) {
      load->error = fmt::format(
          "backend '{}' with flag '{}': a name is letters, digits, '-' and "
          "'_'; a flag is '--' followed by them",
          b->name, b->flag);
      return PARITY_ERROR;
    }
    load->backends.push_back(std::move(b));
    return PARITY_OK;
  } catch (const std::exception& e) {
    load->error = e.what();
    return PARITY_ERROR;
  }
}

Backend registry_entry(std::shared_ptr<const PluginBackendDef> b) {
  Backend entry;
  entry.name = b->name;
  entry.flags = b->flag;
  entry.help = b->help.empty() ? fmt::format("Run inference with backend {}", b->name) : b->help;
  entry.group = fmt::format("{} Runner (plugin {})", b->name, b->path);
  const std::string option = b->name + "-option";
  entry.options = {{"--" + option, BackendOption::Kind::kList,
                    fmt::format("key=value options passed to backend {}", b->name)}};
  entry.configure = [option](const BackendOptionValues& v) { return std::any(v.list(option, {})); };
  entry.make_runner = [b](Loader<ModelPtr> model, const std::any& config,
                          const std::string& name) -> std::unique_ptr<Runner> {
    return std::make_unique<PluginBackendRunner>(
        b, std::move(model), std::any_cast<const std::vector<std::string>&>(config), name);
  };
  entry.script = [b](const std::any& config) {
    std::string keyword = b->name + "_option";
    std::replace(keyword.begin(), keyword.end(), '-', '_');
    return RunnerScript{
        {"from parity.backend.registry import make_runner"},
        fmt::format("make_runner({}, model, {}={})", py_str(b->name), keyword,
                    py_list(std::any_cast<const std::vector<std::string>&>(config)))};
  };
  return entry;
}

}  // namespace

std::vector<std::string> register_plugin_backends(void* library, const std::string& path) {
  auto version_fn =
      reinterpret_cast<ParityBackendVersionFn>(dlsym(library, PARITY_BACKEND_VERSION_SYMBOL));
  if (!version_fn)
    fail(
        "failed to load the backends of plugin library '{}' without the function '{}': a "
        "library states the backend interface version it was built for with "
        "PARITY_BACKEND_DEFINE_VERSION() from plugin_api.h",
        path, PARITY_BACKEND_VERSION_SYMBOL);
  const uint32_t version = version_fn();
  if (version != PARITY_BACKEND_API_VERSION)
    fail(
        "failed to load the backends of plugin library '{}' with backend interface version {}: "
        "this Parity implements version {}; rebuild the library against this Parity's "
        "plugin_api.h",
        path, version, PARITY_BACKEND_API_VERSION);
  auto entry =
      reinterpret_cast<ParityRegisterBackendsFn>(dlsym(library, PARITY_BACKEND_ENTRY_POINT));
  // The table lives as long as the process: the library may keep it.
  auto* load = new BackendLoad{path, {}, {}, true};
  auto* api = new ParityBackendApi{PARITY_BACKEND_API_VERSION, load, api_register_backend,
                                   api_set_output, api_call_error};
  int status = PARITY_ERROR;
  try {
    status = entry(api);
  } catch (...) {
    load->error = "it threw a C++ exception";
  }
  load->open = false;
  if (status != PARITY_OK)
    fail("failed to load plugin library '{}': its {} returned status {}: {}", path,
         PARITY_BACKEND_ENTRY_POINT, status,
         load->error.empty() ? "it gave no message" : load->error);
  std::vector<std::string> names;
  for (const auto& b : load->backends) {
    BackendRegistry::global().add(registry_entry(b));
    names.push_back(b->name);
  }
  logger().verbose("Loaded plugin library {} with backends: [{}]", path, fmt::join(names, ", "));
  return names;
}

}  // namespace parity
