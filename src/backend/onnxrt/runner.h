// OnnxrtRunner (Polygraphy's OnnxrtRunner): runs a model with ONNX Runtime, loaded at run time.
//
// The easy way in, as the CLI does it for `--onnxrt`:
//
//   OrtOptions options;                     // session.h: every field has a default
//   options.lib_path = "...";               // --ort-lib (empty: search, see library.h)
//   options.providers = {"cuda", "cpu"};    // --providers, priority order
//   options.provider_options = {"device_id=0"};          // --provider-option
//   options.intra_op_threads = 2;                        // --ort-threads
//   options.graph_optimization_level = 1;  // basic; see GraphOptimizationLevel
//   options.custom_op_libs = {"libmyops.so"};            // --ort-custom-op-lib
//   auto runner = make_onnxrt_runner(ModifyOutputs(OnnxFromPath(path), {}, true), options);
//
// make_onnxrt_runner loads ONNX Runtime at once, so a missing library is reported (with how to
// install it) before any runner works; the session itself is made by activate(). Errors are
// parity::Error: ONNX Runtime's own failures read "ONNX Runtime failed to <what>: <message>".
//
// Outputs come in the session's order. Non-string inputs are handed to ONNX Runtime without a
// copy, and non-string outputs borrow ONNX Runtime's buffers (a Tensor keeps its value alive).
// last_inference_time() covers ONNX Runtime's run call alone.
#pragma once

#include <memory>
#include <string>

#include "backend/onnxrt/session.h"
#include "backend/runner.h"

namespace parity {

class OnnxrtRunner : public Runner {
 public:
  // `session` is called by activate(); an empty name gets "onnxrt-runner-N<k>-<date>-<time>".
  explicit OnnxrtRunner(Loader<OrtSessionPtr> session, std::string name = "");
  ~OnnxrtRunner() override;

  // The session while active (null otherwise), to reach ONNX Runtime's own objects.
  const OrtSessionPtr& session() const { return session_; }

 protected:
  void activate_impl() override;
  void deactivate_impl() override;
  TensorMetadata input_metadata_impl() override;
  TensorMap infer_impl(const TensorMap& feed) override;

 private:
  Loader<OrtSessionPtr> loader_;
  OrtSessionPtr session_;
};

// An OnnxrtRunner for `model` built with `options` (SessionFromOnnx). Loads ONNX Runtime now;
// throws Error when it cannot be found or loaded.
std::unique_ptr<Runner> make_onnxrt_runner(Loader<ModelPtr> model, const OrtOptions& options,
                                           std::string name = "");

}  // namespace parity
