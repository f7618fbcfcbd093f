// ONNX Runtime sessions (Polygraphy's SessionFromOnnx): a model given as a path, bytes or a
// loaded model, plus providers and session options, becomes a session that knows its inputs
// (with symbolic dims) and outputs.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "backend/onnxrt/library.h"
#include "core/loader.h"
#include "core/metadata.h"
#include "onnx/loaders.h"

namespace parity {

// ONNX Runtime's GraphOptimizationLevel values.
enum class GraphOptimizationLevel : int {
  kDisableAll = 0,
  kBasic = 1,
  kExtended = 2,
  kAll = 99,
};
// Parses "disable" (or "disable_all"), "basic", "extended", "all" (any case) or the numbers
// 0, 1, 2, 99; nullopt for anything else.
std::optional<GraphOptimizationLevel> graph_optimization_level_from_name(std::string_view name);

// Everything that decides how ONNX Runtime is loaded and how a session is made.
struct OrtOptions {
  // libonnxruntime to load (--ort-lib): a file or a folder; empty = search (library.h).
  std::string lib_path;
  // Execution providers in priority order (--providers), matched as in resolve_providers().
  std::vector<std::string> providers{"cpu"};
  // "key=value" options passed to every non-CPU provider (--provider-option).
  std::vector<std::string> provider_options;
  // Intra-op threads (--ort-threads); 0 lets ONNX Runtime choose.
  int intra_op_threads = 0;
  // ONNX Runtime's graph optimization level, one of GraphOptimizationLevel's numbers: 0, 1, 2
  // or 99 (--ort-optimization-level); anything else is a UsageError when the session is made.
  int graph_optimization_level = static_cast<int>(GraphOptimizationLevel::kAll);
  // Custom-op libraries to register (--ort-custom-op-lib): each exports RegisterCustomOps.
  std::vector<std::string> custom_op_libs;
  // When set, ONNX Runtime saves the model it optimized there (an .onnx path), as its session
  // option optimized_model_filepath does.
  std::string optimized_model_path;
  // ONNX Runtime's CPU memory arena (its default); off for the batch runners of layer-wise runs,
  // where the arena would keep what each batch allocated.
  bool cpu_mem_arena = true;
};

// A live ONNX Runtime session and what the runner needs to know about it.
class OrtSession {
 public:
  ~OrtSession();
  OrtSession(const OrtSession&) = delete;
  OrtSession& operator=(const OrtSession&) = delete;

  const OrtRuntime& runtime() const { return runtime_; }
  ort::Session* get() const { return session_; }
  // The providers the session was given, resolved to ONNX Runtime's names.
  const std::vector<std::string>& providers() const { return providers_; }
  // Inputs in the session's order; a dim with a dim_param is Dim::symbolic(name).
  const TensorMetadata& input_metadata() const { return inputs_; }
  // Outputs in the session's order, also as C strings for the run call.
  const std::vector<std::string>& output_names() const { return output_names_; }
  const char* const* output_name_pointers() const { return output_name_pointers_.data(); }

 private:
  friend class OrtSessionBuilder;
  explicit OrtSession(const OrtRuntime& runtime) : runtime_(runtime) {}
  void read_signature();

  const OrtRuntime& runtime_;
  ort::Session* session_ = nullptr;
  std::vector<void*> custom_op_handles_;  // closed after the session is released
  std::vector<std::string> providers_;
  TensorMetadata inputs_;
  std::vector<std::string> output_names_;
  std::vector<const char*> output_name_pointers_;
};

using OrtSessionPtr = std::shared_ptr<OrtSession>;

// A session for a loaded model. The model is serialized and handed over from memory; a model
// with external data is handed over as a file instead, so that ONNX Runtime resolves the data
// relative to its folder: the original file when the model is unchanged, otherwise a
// temporary copy written into the data folder and removed once the session exists (this also
// covers models whose weights exceed protobuf's 2 GB limit).
Loader<OrtSessionPtr> SessionFromOnnx(Loader<ModelPtr> model, OrtOptions options = {});
// A session for a model file, read by ONNX Runtime itself.
Loader<OrtSessionPtr> SessionFromOnnxPath(std::string path, OrtOptions options = {});
// A session for a serialized model.
Loader<OrtSessionPtr> SessionFromOnnxBytes(Loader<std::string> bytes, OrtOptions options = {});

}  // namespace parity
