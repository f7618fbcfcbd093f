// Finding and loading libonnxruntime at run time, so that Parity builds and runs without it.
//
// Search order (the first that names a library wins; a named library that fails to load is an
// error, never skipped):
//   1. an explicit path (--ort-lib, OrtOptions::lib_path): a file or a folder holding one;
//   2. the PARITY_ORT_LIB environment variable, read the same way;
//   3. the copy ./setup.sh installs (PARITY_ORT_INSTALL_DIR, <prefix>/lib/parity);
//   4. the build tree's copy (PARITY_ORT_DIR, the npm install under <repo>/deps);
//   5. the system library path: libonnxruntime.so.1, then libonnxruntime.so.
// In a folder, libonnxruntime.so.1, libonnxruntime.so and versioned libonnxruntime.so.1.X.Y
// are all accepted (the npm package of 1.17 ships only the versioned name).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "backend/onnxrt/ort_api.h"

namespace parity {

// How to get ONNX Runtime, appended to every "not found" message.
inline constexpr const char* kOrtInstallHint =
    "install it with ./setup.sh, or scripts/install-onnxruntime.sh 1.30.0 "
    "deps/onnxruntime-1.30.0, or give the path of libonnxruntime.so.1 with --ort-lib PATH or "
    "PARITY_ORT_LIB=PATH";

// A loaded libonnxruntime and its API table.
class OrtLibrary {
 public:
  // Loads the library at `path` (a file, or a folder holding one). Throws Error when it does
  // not exist, is not a shared library, is not ONNX Runtime, or is older than 1.17.
  static std::unique_ptr<OrtLibrary> open(const std::string& path);
  // Searches in the order above and loads the first library found; throws Error with
  // kOrtInstallHint when there is none.
  static std::unique_ptr<OrtLibrary> discover(const std::string& explicit_path = "");

  // Unloads the library: only safe when nothing created through it is still alive.
  ~OrtLibrary();
  OrtLibrary(const OrtLibrary&) = delete;
  OrtLibrary& operator=(const OrtLibrary&) = delete;

  const ort::Api& api() const { return api_; }
  const std::string& path() const { return path_; }        // the file that was loaded
  const std::string& version() const { return version_; }  // "1.30.0"
  std::string build_info() const { return api_.GetBuildInfoString(); }

 private:
  OrtLibrary(void* handle, std::string requested_name);

  void* handle_ = nullptr;
  ort::Api api_{};
  std::string path_;
  std::string version_;
};

// The folders searched after an explicit path and PARITY_ORT_LIB (steps 3 and 4), in order.
std::vector<std::string> ort_library_folders();
// The library file inside `folder` (libonnxruntime.so.1, .so, or .so.1.X.Y), or "" if none.
std::string ort_library_in_folder(const std::string& folder);

// The process-wide ONNX Runtime: one library and one environment, created on first use and
// kept until the process ends (ONNX Runtime values handed out as tensor buffers may outlive
// any session, so the library is never unloaded).
class OrtRuntime {
 public:
  // The first call loads the library (from `lib_path`, or by discovery when it is empty),
  // sets ORT_DISABLE_TELEMETRY=1 unless the user set it (otherwise ONNX Runtime 1.30 leaves
  // files in the temp folder and the home cache) and creates the environment. Later calls
  // return the same runtime; a `lib_path` naming another library is an error.
  static const OrtRuntime& get(const std::string& lib_path = "");

  const ort::Api& api() const { return library_->api(); }
  const OrtLibrary& library() const { return *library_; }
  ort::Env* env() const { return env_; }
  // Describes plain host memory, for tensors that borrow Parity's buffers.
  const ort::MemoryInfo* cpu_memory() const { return cpu_memory_; }
  // ONNX Runtime's process-wide default allocator (never released).
  ort::Allocator* allocator() const { return allocator_; }

 private:
  explicit OrtRuntime(std::unique_ptr<OrtLibrary> library);

  std::unique_ptr<OrtLibrary> library_;
  ort::Env* env_ = nullptr;
  ort::MemoryInfo* cpu_memory_ = nullptr;
  ort::Allocator* allocator_ = nullptr;
};

}  // namespace parity
