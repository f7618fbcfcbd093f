#include "backend/onnxrt/session.h"

#include <dlfcn.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <set>

#include <onnx/onnx_pb.h>

#include "backend/onnxrt/providers.h"
#include "backend/onnxrt/tensors.h"
#include "core/error.h"
#include "core/logger.h"
#include "onnx/external_data.h"

namespace fs = std::filesystem;

namespace parity {

namespace {

template <typename T>
using Releasing = std::unique_ptr<T, void (*)(T*)>;

std::string python_list(const std::vector<std::string>& names) {
  std::vector<std::string> quoted;
  for (const auto& n : names) quoted.push_back(fmt::format("'{}'", n));
  return fmt::format("[{}]", fmt::join(quoted, ", "));
}

bool tensor_is_external(const ::onnx::TensorProto& t) {
  return t.data_location() == ::onnx::TensorProto::EXTERNAL;
}

// True when any tensor of the graph or its subgraphs keeps its bytes in an external file.
bool has_external_data(const ::onnx::GraphProto& graph) {
  for (const auto& t : graph.initializer())
    if (tensor_is_external(t)) return true;
  for (const auto& node : graph.node()) {
    for (const auto& attr : node.attribute()) {
      if (attr.has_t() && tensor_is_external(attr.t())) return true;
      for (const auto& t : attr.tensors())
        if (tensor_is_external(t)) return true;
      if (attr.has_g() && has_external_data(attr.g())) return true;
      for (const auto& g : attr.graphs())
        if (has_external_data(g)) return true;
    }
  }
  return false;
}

bool file_equals(const std::string& path, const std::string& bytes) {
  std::error_code ec;
  if (fs::file_size(path, ec) != bytes.size() || ec) return false;
  std::ifstream in(path, std::ios::binary);
  std::string content((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  return content == bytes;
}

// A copy of the model's protobuf that ONNX Runtime can load from memory although the model
// keeps data in external files: the graph's own initializers with external data are handed
// over as values over the bytes Parity mapped (AddExternalInitializers); the other external
// tensors (in subgraphs, node attributes, sparse initializers), which that call cannot
// replace, have their bytes copied into the protobuf. Nothing is written to disk: a temporary
// model beside the data would be left behind by a crash or Ctrl-C, and a read-only folder
// could not hold one.
struct InMemoryModel {
  ::onnx::ModelProto proto;
  std::vector<std::string> names;  // the graph's initializers with external data ...
  std::vector<Tensor> tensors;     // ... and their bytes
};

InMemoryModel in_memory_model(const ir::Model& model, const std::string& data_dir) {
  InMemoryModel m;
  m.proto = *model.proto;
  onnx_io::ExternalDataStore store(data_dir);
  auto load = [&](const ::onnx::TensorProto& t) {
    Shape shape(t.dims().begin(), t.dims().end());
    return store.load(t, static_cast<DataType>(t.data_type()), shape);
  };
  std::set<const ::onnx::TensorProto*> handed_over;
  for (const auto& t : m.proto.graph().initializer()) {
    if (!onnx_io::is_external(t)) continue;
    auto loaded = model.graph.initializers.find(t.name());  // already mapped when loading
    m.names.push_back(t.name());
    m.tensors.push_back(loaded != model.graph.initializers.end() ? loaded->second : load(t));
    handed_over.insert(&t);
  }
  onnx_io::visit_tensors(*m.proto.mutable_graph(), [&](::onnx::TensorProto& t) {
    if (!onnx_io::is_external(t) || handed_over.count(&t)) return;
    const Tensor bytes = load(t);
    t.set_raw_data(bytes.raw_data(), bytes.nbytes());
    t.clear_external_data();
    t.set_data_location(::onnx::TensorProto::DEFAULT);
  });
  return m;
}

bool same_folder(const std::string& a, const std::string& b) {
  std::error_code ec;
  return fs::equivalent(a.empty() ? "." : a, b.empty() ? "." : b, ec);
}

}  // namespace

std::optional<GraphOptimizationLevel> graph_optimization_level_from_name(std::string_view name) {
  std::string s(name);
  std::transform(s.begin(), s.end(), s.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  if (s == "disable" || s == "disable_all" || s == "0") return GraphOptimizationLevel::kDisableAll;
  if (s == "basic" || s == "1") return GraphOptimizationLevel::kBasic;
  if (s == "extended" || s == "2") return GraphOptimizationLevel::kExtended;
  if (s == "all" || s == "99") return GraphOptimizationLevel::kAll;
  return std::nullopt;
}

// Makes sessions: options first (checked before anything is loaded), then the session.
class OrtSessionBuilder {
 public:
  explicit OrtSessionBuilder(const OrtOptions& options)
      : options_(options), runtime_(OrtRuntime::get(options.lib_path)) {}

  OrtSessionPtr from_path(const std::string& path) {
    return build([&](const ort::SessionOptions* so, ort::Session** out) {
      return api().CreateSession(runtime_.env(), path.c_str(), so, out);
    });
  }

  OrtSessionPtr from_bytes(const std::string& bytes) {
    return build([&](const ort::SessionOptions* so, ort::Session** out) {
      return api().CreateSessionFromArray(runtime_.env(), bytes.data(), bytes.size(), so, out);
    });
  }

  OrtSessionPtr from_model(const ModelPtr& model) {
    std::string bytes = onnx_io::serialize_model(*model);
    if (!model->proto || !has_external_data(model->proto->graph())) return from_bytes(bytes);
    // The weights stay in their files; only the small graph protobuf was serialized.
    const std::string model_folder = fs::path(model->path).parent_path().string();
    // ONNX Runtime reads the data beside the model file: the file itself serves only when that
    // is where the data is (no --external-data-dir elsewhere) and nothing was changed.
    const bool data_beside_model =
        model->external_data_dir.empty() || same_folder(model->external_data_dir, model_folder);
    if (!model->path.empty() && data_beside_model && file_equals(model->path, bytes))
      return from_path(model->path);
    const std::string data_dir =
        model->external_data_dir.empty() ? model_folder : model->external_data_dir;
    InMemoryModel m = in_memory_model(*model, data_dir.empty() ? "." : data_dir);
    std::string in_memory_bytes;
    if (!m.proto.SerializeToString(&in_memory_bytes))
      fail(
          "failed to serialize model '{}' for ONNX Runtime: its tensors outside the graph's "
          "initializers exceed protobuf's 2 GB limit; keep large weights as initializers",
          model->graph.name);
    return build(
        [&](const ort::SessionOptions* so, ort::Session** out) {
          return api().CreateSessionFromArray(runtime_.env(), in_memory_bytes.data(),
                                              in_memory_bytes.size(), so, out);
        },
        [&](ort::SessionOptions* so, OrtSession& session) {
          hand_over_initializers(so, session, m);
          session.external_tensors_ = m.tensors;  // the values borrow their bytes
        });
  }

 private:
  const ort::Api& api() const { return runtime_.api(); }

  // The initializers of `m` as values over their bytes, kept by the session until it is
  // released.
  void hand_over_initializers(ort::SessionOptions* so, OrtSession& session,
                              const InMemoryModel& m) {
    std::vector<const char*> names;
    for (size_t i = 0; i < m.names.size(); ++i) {
      const Tensor& t = m.tensors[i];
      ort::Value* value = nullptr;
      // ONNX Runtime does not write to initializers; the const_cast only satisfies the C API.
      static char empty_buffer[8];
      void* data = t.nbytes() ? const_cast<void*>(t.raw_data()) : empty_buffer;
      const Shape& shape = t.shape();
      ort::check(api(),
                 api().CreateTensorWithDataAsOrtValue(runtime_.cpu_memory(), data, t.nbytes(),
                                                      shape.data(), shape.size(),
                                                      static_cast<int>(t.dtype()), &value),
                 fmt::format("wrap the initializer '{}'", m.names[i]));
      session.external_values_.push_back(value);
      names.push_back(m.names[i].c_str());
    }
    if (names.empty()) return;
    ort::check(api(),
               api().AddExternalInitializers(so, names.data(), session.external_values_.data(),
                                             names.size()),
               "hand the model's external initializers over");
  }

  // `prepare(options, session)` runs last before the session is created.
  template <typename Create, typename Prepare = void (*)(ort::SessionOptions*, OrtSession&)>
  OrtSessionPtr build(
      Create create, Prepare prepare = [](ort::SessionOptions*, OrtSession&) {}) {
    // ONNX Runtime starts every pool thread when the session is made; tens of thousands of
    // threads exhaust the process's stack space and it crashes.
    constexpr int kMaxIntraOpThreads = 1024;
    if (options_.intra_op_threads < 0 || options_.intra_op_threads > kMaxIntraOpThreads)
      fail_usage(
          "failed to set the ONNX Runtime intra-op thread count with {}: it must be 0 "
          "(ONNX Runtime chooses) or a count from 1 to {}",
          options_.intra_op_threads, kMaxIntraOpThreads);
    int level = options_.graph_optimization_level;
    if (level != 0 && level != 1 && level != 2 && level != 99)
      fail_usage(
          "failed to set the ONNX Runtime graph optimization level with {}: it is not a "
          "level; valid levels are 0 (disable), 1 (basic), 2 (extended), 99 (all)",
          level);
    std::vector<std::string> providers =
        resolve_providers(options_.providers, available_providers(runtime_));
    std::vector<ProviderOption> provider_options =
        parse_provider_options(options_.provider_options);

    // Declared before the options so that, on failure, the options are released before the
    // session closes the custom-op libraries they point into.
    std::shared_ptr<OrtSession> session(new OrtSession(runtime_));
    ort::SessionOptions* raw_options = nullptr;
    ort::check(api(), api().CreateSessionOptions(&raw_options), "create session options");
    Releasing<ort::SessionOptions> so(raw_options, api().ReleaseSessionOptions);
    int severity = logger().enabled(Severity::kVerbose) ? ort::kLogWarning : ort::kLogFatal;
    ort::check(api(), api().SetSessionLogSeverityLevel(so.get(), severity),
               "set the session log level");
    ort::check(api(), api().SetSessionGraphOptimizationLevel(so.get(), level),
               "set the graph optimization level");
    if (!options_.optimized_model_path.empty())
      ort::check(api(),
                 api().SetOptimizedModelFilePath(so.get(), options_.optimized_model_path.c_str()),
                 fmt::format("set the optimized model path '{}'", options_.optimized_model_path));
    if (!options_.cpu_mem_arena)
      ort::check(api(), api().DisableCpuMemArena(so.get()), "turn the CPU memory arena off");
    if (options_.intra_op_threads > 0)
      ort::check(api(), api().SetIntraOpNumThreads(so.get(), options_.intra_op_threads),
                 "set the intra-op thread count");

    for (const std::string& library : options_.custom_op_libs) {
      void* handle = nullptr;
      ort::Status* status = api().RegisterCustomOpsLibrary(so.get(), library.c_str(), &handle);
      if (handle) session->custom_op_handles_.push_back(handle);
      ort::check(api(), status, fmt::format("register the custom-op library '{}'", library));
    }
    append_providers(runtime_, so.get(), providers, provider_options);

    prepare(so.get(), *session);
    logger().start("Creating ONNX-Runtime Inference Session with providers: {}",
                   python_list(providers));
    ort::check(api(), create(so.get(), &session->session_), "create the inference session");
    session->providers_ = std::move(providers);
    session->read_signature();
    return session;
  }

  const OrtOptions& options_;
  const OrtRuntime& runtime_;
};

OrtSession::~OrtSession() {
  if (session_) runtime_.api().ReleaseSession(session_);
  for (ort::Value* value : external_values_) runtime_.api().ReleaseValue(value);
  // ONNX Runtime leaves unloading custom-op libraries to the caller, once the session is gone.
  for (void* handle : custom_op_handles_) dlclose(handle);
}

namespace {

// The element type and shape ONNX Runtime declares for a tensor.
TensorMeta tensor_meta_of(const ort::Api& api, const ort::TensorTypeAndShapeInfo* tensor) {
  int element_type = 0;
  size_t rank = 0;
  ort::check(api, api.GetTensorElementType(tensor, &element_type), "read an input type");
  ort::check(api, api.GetDimensionsCount(tensor, &rank), "read an input shape");
  std::vector<int64_t> dims(rank);
  std::vector<const char*> params(rank, nullptr);
  if (rank > 0) {
    ort::check(api, api.GetDimensions(tensor, dims.data(), rank), "read an input shape");
    ort::check(api, api.GetSymbolicDimensions(tensor, params.data(), rank), "read an input shape");
  }
  DimList shape;
  for (size_t d = 0; d < rank; ++d) {
    if (dims[d] >= 0)
      shape.push_back(Dim::fixed(dims[d]));
    else if (params[d] && *params[d])
      shape.push_back(Dim::symbolic(params[d]));
    else
      shape.push_back(Dim::unknown());
  }
  return TensorMeta{{}, dtype_from_ort(element_type), std::move(shape), std::nullopt};
}

// A map's key and value types (a value that is not a tensor stays unknown).
ValueMeta map_meta_of(const ort::Api& api, const ort::MapTypeInfo* map, ValueMeta::Kind kind,
                      const std::string& name) {
  ValueMeta m;
  m.kind = kind;
  int key_type = 0;
  ort::check(api, api.GetMapKeyType(map, &key_type), "read the key type of input " + name);
  m.key_type = dtype_from_ort(key_type);
  ort::TypeInfo* raw_value = nullptr;
  ort::check(api, api.GetMapValueType(map, &raw_value), "read the value type of input " + name);
  Releasing<ort::TypeInfo> value(raw_value, api.ReleaseTypeInfo);
  const ort::TensorTypeAndShapeInfo* tensor = nullptr;
  ort::check(api, api.CastTypeInfoToTensorInfo(value.get(), &tensor),
             "read the value type of input " + name);
  if (tensor) m.elem_type = tensor_meta_of(api, tensor).dtype;
  return m;
}

// What a sequence or map input holds; nullopt for a type the data loader cannot generate.
std::optional<ValueMeta> value_meta_of(const ort::Api& api, const ort::TypeInfo* info,
                                       const std::string& name) {
  const ort::MapTypeInfo* map = nullptr;
  ort::check(api, api.CastTypeInfoToMapTypeInfo(info, &map), "read the type of input " + name);
  if (map) return map_meta_of(api, map, ValueMeta::Kind::kMap, name);
  const ort::SequenceTypeInfo* sequence = nullptr;
  ort::check(api, api.CastTypeInfoToSequenceTypeInfo(info, &sequence),
             "read the type of input " + name);
  if (!sequence) return std::nullopt;
  ort::TypeInfo* raw_elem = nullptr;
  ort::check(api, api.GetSequenceElementType(sequence, &raw_elem),
             "read the element type of input " + name);
  Releasing<ort::TypeInfo> elem(raw_elem, api.ReleaseTypeInfo);
  const ort::TensorTypeAndShapeInfo* tensor = nullptr;
  ort::check(api, api.CastTypeInfoToTensorInfo(elem.get(), &tensor),
             "read the element type of input " + name);
  if (tensor) {
    TensorMeta t = tensor_meta_of(api, tensor);
    ValueMeta m;
    m.elem_type = t.dtype;
    m.elem_shape = std::move(t.shape);
    return m;
  }
  ort::check(api, api.CastTypeInfoToMapTypeInfo(elem.get(), &map),
             "read the element type of input " + name);
  if (map) return map_meta_of(api, map, ValueMeta::Kind::kMapSequence, name);
  return std::nullopt;
}

}  // namespace

void OrtSession::read_signature() {
  const ort::Api& api = runtime_.api();
  ort::Allocator* allocator = runtime_.allocator();
  auto name_of = [&](auto get_name, size_t i) {
    char* raw = nullptr;
    ort::check(api, get_name(session_, i, allocator, &raw), "read the session's tensor names");
    std::string name = raw;
    ort::check(api, api.AllocatorFree(allocator, raw), "free a tensor name");
    return name;
  };

  size_t input_count = 0, output_count = 0;
  ort::check(api, api.SessionGetInputCount(session_, &input_count), "count the session's inputs");
  ort::check(api, api.SessionGetOutputCount(session_, &output_count),
             "count the session's outputs");

  for (size_t i = 0; i < input_count; ++i) {
    std::string name = name_of(api.SessionGetInputName, i);
    ort::TypeInfo* raw_info = nullptr;
    ort::check(api, api.SessionGetInputTypeInfo(session_, i, &raw_info),
               "read the type of input " + name);
    Releasing<ort::TypeInfo> info(raw_info, api.ReleaseTypeInfo);
    const ort::TensorTypeAndShapeInfo* tensor = nullptr;
    ort::check(api, api.CastTypeInfoToTensorInfo(info.get(), &tensor),
               "read the type of input " + name);
    if (!tensor) {  // a sequence or map input: described for the data loader
      if (std::optional<ValueMeta> value = value_meta_of(api, info.get(), name))
        inputs_.add_value(name, std::move(*value));
      else
        inputs_.add(name, std::nullopt, std::nullopt);
      continue;
    }
    TensorMeta meta = tensor_meta_of(api, tensor);
    inputs_.add(name, meta.dtype, std::move(meta.shape));
  }

  for (size_t i = 0; i < output_count; ++i)
    output_names_.push_back(name_of(api.SessionGetOutputName, i));
  for (const std::string& name : output_names_) output_name_pointers_.push_back(name.c_str());
}

Loader<OrtSessionPtr> SessionFromOnnx(Loader<ModelPtr> model, OrtOptions options) {
  return Loader<OrtSessionPtr>([model, options]() -> OrtSessionPtr {
    return OrtSessionBuilder(options).from_model(model());
  });
}

Loader<OrtSessionPtr> SessionFromOnnxPath(std::string path, OrtOptions options) {
  return Loader<OrtSessionPtr>([path, options]() -> OrtSessionPtr {
    std::error_code ec;
    if (!fs::is_regular_file(path, ec))
      fail(
          "failed to create an ONNX Runtime session from '{}': the file does not exist; check "
          "the path",
          path);
    return OrtSessionBuilder(options).from_path(path);
  });
}

Loader<OrtSessionPtr> SessionFromOnnxBytes(Loader<std::string> bytes, OrtOptions options) {
  return Loader<OrtSessionPtr>([bytes, options]() -> OrtSessionPtr {
    return OrtSessionBuilder(options).from_bytes(bytes());
  });
}

}  // namespace parity
