#include "backend/onnxrt/session.h"

#include <dlfcn.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cctype>
#include <cerrno>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>

#include <onnx/onnx_pb.h>

#include "backend/onnxrt/providers.h"
#include "backend/onnxrt/tensors.h"
#include "core/error.h"
#include "core/logger.h"

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

// A model file written beside the external data it refers to, removed on destruction. (ONNX
// Runtime resolves external data against the model's folder, following symlinks, and refuses
// data outside it, so a private folder with links to the data does not serve.)
class TempModelFile {
 public:
  TempModelFile(const std::string& folder, const std::string& bytes) {
    static std::atomic<int> counter{0};
    path_ = (fs::path(folder.empty() ? "." : folder) /
             fmt::format(".parity-onnxrt-{}-{}.onnx", getpid(), counter++))
                .string();
    std::ofstream out(path_, std::ios::binary | std::ios::trunc);
    out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
    out.close();
    if (!out) {
      std::error_code ec;
      fs::remove(path_, ec);
      fail(
          "failed to write the modified model to '{}': ONNX Runtime must read it from the "
          "folder of its external data, which must therefore be writable",
          path_);
    }
  }
  ~TempModelFile() {
    std::error_code ec;
    fs::remove(path_, ec);
  }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

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

  OrtSessionPtr from_model(const ir::Model& model) {
    std::string bytes = onnx_io::serialize_model(model);
    if (!model.proto || !has_external_data(model.proto->graph())) return from_bytes(bytes);
    // The weights stay in their files; only the small graph protobuf was serialized.
    const std::string model_folder = fs::path(model.path).parent_path().string();
    // ONNX Runtime reads the data beside the model file: the file itself serves only when that
    // is where the data is (no --external-data-dir elsewhere) and nothing was changed.
    const bool data_beside_model =
        model.external_data_dir.empty() || same_folder(model.external_data_dir, model_folder);
    if (!model.path.empty() && data_beside_model && file_equals(model.path, bytes))
      return from_path(model.path);
    std::string folder = model.external_data_dir.empty() ? model_folder : model.external_data_dir;
    TempModelFile file(folder, bytes);
    return from_path(file.path());
  }

 private:
  const ort::Api& api() const { return runtime_.api(); }

  template <typename Create>
  OrtSessionPtr build(Create create) {
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
  // ONNX Runtime leaves unloading custom-op libraries to the caller, once the session is gone.
  for (void* handle : custom_op_handles_) dlclose(handle);
}

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
    if (!tensor) {  // a sequence or map input: nothing Parity can describe
      inputs_.add(name, std::nullopt, std::nullopt);
      continue;
    }
    int element_type = 0;
    size_t rank = 0;
    ort::check(api, api.GetTensorElementType(tensor, &element_type), "read an input type");
    ort::check(api, api.GetDimensionsCount(tensor, &rank), "read an input shape");
    std::vector<int64_t> dims(rank);
    std::vector<const char*> params(rank, nullptr);
    if (rank > 0) {
      ort::check(api, api.GetDimensions(tensor, dims.data(), rank), "read an input shape");
      ort::check(api, api.GetSymbolicDimensions(tensor, params.data(), rank),
                 "read an input shape");
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
    inputs_.add(name, dtype_from_ort(element_type), std::move(shape));
  }

  for (size_t i = 0; i < output_count; ++i)
    output_names_.push_back(name_of(api.SessionGetOutputName, i));
  for (const std::string& name : output_names_) output_name_pointers_.push_back(name.c_str());
}

Loader<OrtSessionPtr> SessionFromOnnx(Loader<ModelPtr> model, OrtOptions options) {
  return Loader<OrtSessionPtr>([model, options]() -> OrtSessionPtr {
    ModelPtr m = model();
    return OrtSessionBuilder(options).from_model(*m);
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
