#include "backend/onnxrt/library.h"

#include <dlfcn.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <mutex>

#include "core/error.h"
#include "core/logger.h"

#ifndef PARITY_ORT_INSTALL_DIR
#define PARITY_ORT_INSTALL_DIR ""
#endif
#ifndef PARITY_ORT_DIR
#define PARITY_ORT_DIR ""
#endif

namespace fs = std::filesystem;

namespace parity {

namespace {

constexpr const char* kSystemNames[] = {"libonnxruntime.so.1", "libonnxruntime.so"};

// The minor number of a "1.X.Y" version string, or -1 when it has another form.
int minor_version(const std::string& version) {
  int major = 0, minor = 0;
  if (std::sscanf(version.c_str(), "%d.%d", &major, &minor) != 2 || major != 1) return -1;
  return minor;
}

// Turns a user-given path (file or folder) into the file to load; `source` says who gave it.
std::string library_file(const std::string& path, const std::string& source) {
  std::error_code ec;
  if (!fs::exists(path, ec))
    fail("failed to load ONNX Runtime from '{}' (given by {}): the file does not exist; {}", path,
         source, kOrtInstallHint);
  if (fs::is_directory(path, ec)) {
    std::string file = ort_library_in_folder(path);
    if (file.empty())
      fail(
          "failed to load ONNX Runtime from the folder '{}' (given by {}): it holds no "
          "libonnxruntime.so.1, libonnxruntime.so or libonnxruntime.so.1.X.Y; {}",
          path, source, kOrtInstallHint);
    return file;
  }
  return path;
}

}  // namespace

std::string ort_library_in_folder(const std::string& folder) {
  std::error_code ec;
  for (const char* name : kSystemNames) {
    fs::path p = fs::path(folder) / name;
    if (fs::is_regular_file(p, ec)) return p.string();
  }
  // Versioned names (libonnxruntime.so.1.17.0): the highest, by name, if there are several.
  std::vector<std::string> versioned;
  for (const auto& entry : fs::directory_iterator(folder, ec)) {
    std::string name = entry.path().filename().string();
    if (name.starts_with("libonnxruntime.so.1.") && entry.is_regular_file(ec))
      versioned.push_back(entry.path().string());
  }
  if (versioned.empty()) return "";
  return *std::max_element(versioned.begin(), versioned.end());
}

std::vector<std::string> ort_library_folders() {
  std::vector<std::string> folders;
  for (const char* dir : {PARITY_ORT_INSTALL_DIR, PARITY_ORT_DIR})
    if (*dir) folders.emplace_back(dir);
  return folders;
}

OrtLibrary::OrtLibrary(void* handle, std::string requested_name)
    : handle_(handle), path_(std::move(requested_name)) {}

OrtLibrary::~OrtLibrary() {
  if (handle_) dlclose(handle_);
}

std::unique_ptr<OrtLibrary> OrtLibrary::open(const std::string& path) {
  // RTLD_LOCAL keeps ONNX Runtime's symbols away from anything else loaded in the process.
  void* handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!handle) {
    const char* why = dlerror();
    fail("failed to load ONNX Runtime from '{}': it is not a loadable shared library ({}); {}",
         path, why ? why : "unknown reason", kOrtInstallHint);
  }
  std::unique_ptr<OrtLibrary> lib(new OrtLibrary(handle, path));

  auto get_api_base = reinterpret_cast<ort::GetApiBaseFn>(dlsym(handle, "OrtGetApiBase"));
  if (!get_api_base)
    fail(
        "failed to load ONNX Runtime from '{}': the library has no OrtGetApiBase symbol, so "
        "it is not ONNX Runtime; {}",
        path, kOrtInstallHint);
  const ort::ApiBase* base = get_api_base();
  if (!base || !base->GetApi || !base->GetVersionString)
    fail("failed to load ONNX Runtime from '{}': OrtGetApiBase returned no API", path);

  lib->version_ = base->GetVersionString();
  // Checking the version first avoids the line GetApi prints on stderr when it says no.
  int minor = minor_version(lib->version_);
  if (minor >= 0 && minor < ort::kMinMinorVersion)
    fail(
        "failed to load ONNX Runtime from '{}' with version {}: Parity needs ONNX Runtime "
        "1.{} or newer; {}",
        path, lib->version_, ort::kMinMinorVersion, kOrtInstallHint);
  const void* table = base->GetApi(ort::kApiVersion);
  if (!table)
    fail(
        "failed to load ONNX Runtime from '{}' with version {}: it does not serve API "
        "version {}; Parity needs ONNX Runtime 1.{} or newer",
        path, lib->version_, ort::kApiVersion, ort::kMinMinorVersion);
  lib->api_ = ort::bind_api(table);

  // A library found by soname: report the file the loader actually picked.
  Dl_info info{};
  if (dladdr(reinterpret_cast<void*>(get_api_base), &info) && info.dli_fname)
    lib->path_ = info.dli_fname;
  return lib;
}

std::unique_ptr<OrtLibrary> OrtLibrary::discover(const std::string& explicit_path) {
  if (!explicit_path.empty()) return open(library_file(explicit_path, "--ort-lib"));
  const char* env = std::getenv("PARITY_ORT_LIB");
  if (env && *env) return open(library_file(env, "the environment variable PARITY_ORT_LIB"));

  std::vector<std::string> searched;
  for (const std::string& folder : ort_library_folders()) {
    std::string file = ort_library_in_folder(folder);
    if (!file.empty()) return open(file);
    searched.push_back(folder);
  }
  for (const char* name : kSystemNames) {
    if (void* handle = dlopen(name, RTLD_NOW | RTLD_LOCAL)) {
      // open() takes its own reference; this one only told us the name resolves.
      auto lib = open(name);
      dlclose(handle);
      return lib;
    }
    searched.push_back(fmt::format("{} on the system library path", name));
  }
  fail("failed to find ONNX Runtime (libonnxruntime.so.1) in {}: nothing there; {}",
       fmt::join(searched, ", "), kOrtInstallHint);
}

OrtRuntime::OrtRuntime(std::unique_ptr<OrtLibrary> library) : library_(std::move(library)) {
  const ort::Api& api = library_->api();
  // Parity reports ONNX Runtime's failures through the statuses it returns, so its own log
  // stays quiet unless the user asked Parity for verbose output.
  int level = ort::kLogFatal;
  if (logger().enabled(Severity::kSuperVerbose))
    level = ort::kLogVerbose;
  else if (logger().enabled(Severity::kExtraVerbose))
    level = ort::kLogInfo;
  else if (logger().enabled(Severity::kVerbose))
    level = ort::kLogWarning;
  ort::check(api, api.CreateEnv(level, "parity", &env_), "create its environment");
  ort::check(api, api.CreateCpuMemoryInfo(ort::kArenaAllocator, ort::kMemTypeDefault, &cpu_memory_),
             "describe host memory");
  ort::check(api, api.GetAllocatorWithDefaultOptions(&allocator_), "get its default allocator");
}

const OrtRuntime& OrtRuntime::get(const std::string& lib_path) {
  static std::mutex mutex;
  // Deliberately never destroyed: see the class comment.
  static OrtRuntime* runtime = nullptr;
  std::lock_guard lock(mutex);
  if (runtime) {
    if (!lib_path.empty()) {
      std::error_code ec;
      fs::path wanted = fs::weakly_canonical(library_file(lib_path, "--ort-lib"), ec);
      fs::path loaded = fs::weakly_canonical(runtime->library().path(), ec);
      if (wanted != loaded)
        fail(
            "failed to load ONNX Runtime from '{}': a process uses one ONNX Runtime library "
            "and '{}' is already loaded; give every runner the same --ort-lib",
            lib_path, runtime->library().path());
    }
    return *runtime;
  }
  // Must precede CreateEnv; an explicit user value (even "0") is respected.
  setenv("ORT_DISABLE_TELEMETRY", "1", 0);
  auto library = OrtLibrary::discover(lib_path);
  runtime = new OrtRuntime(std::move(library));
  logger().verbose("Loaded ONNX Runtime {} from {}", runtime->library().version(),
                   runtime->library().path());
  logger().extra_verbose("{}", runtime->library().build_info());
  return *runtime;
}

}  // namespace parity
