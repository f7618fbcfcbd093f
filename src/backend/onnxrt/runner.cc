#include "backend/onnxrt/runner.h"

#include <chrono>

#include "backend/onnxrt/tensors.h"
#include "backend/onnxrt/values.h"
#include "backend/value_tensors.h"
#include "core/error.h"

namespace parity {

OnnxrtRunner::OnnxrtRunner(Loader<OrtSessionPtr> session, std::string name)
    : Runner(std::move(name), "onnxrt-runner"), loader_(std::move(session)) {}

OnnxrtRunner::~OnnxrtRunner() = default;

void OnnxrtRunner::activate_impl() { session_ = loader_(); }

void OnnxrtRunner::deactivate_impl() { session_.reset(); }

TensorMetadata OnnxrtRunner::input_metadata_impl() { return session_->input_metadata(); }

TensorMap OnnxrtRunner::infer_impl(const TensorMap& feed) {
  const OrtSession& session = *session_;
  const OrtRuntime& runtime = session.runtime();
  const ort::Api& api = runtime.api();

  // Sequence and map inputs come as their derived tensors (backend/value_tensors.h) and are
  // built with CreateValue; those ONNX Runtime values point into `values`' tensors.
  TensorMap tensors;
  const std::vector<std::pair<std::string, Value>> values =
      value_inputs(feed, session.input_metadata().names(), tensors);
  const size_t input_count = values.size() + tensors.size();
  std::vector<const char*> input_names;
  std::vector<OrtValuePtr> inputs;  // keeps the values alive until after the run
  std::vector<const ort::Value*> input_values;
  input_names.reserve(input_count);
  inputs.reserve(input_count);
  input_values.reserve(input_count);
  for (const auto& [name, value] : values) {
    input_names.push_back(name.c_str());
    inputs.push_back(value_to_ort(runtime, value, name));
    input_values.push_back(inputs.back().get());
  }
  for (const auto& [name, tensor] : tensors) {
    input_names.push_back(name.c_str());
    inputs.push_back(to_ort_value(runtime, tensor, name));
    input_values.push_back(inputs.back().get());
  }

  const std::vector<std::string>& output_names = session.output_names();
  const size_t output_count = output_names.size();
  std::vector<ort::Value*> outputs(output_count, nullptr);  // null: ONNX Runtime allocates

  auto start = std::chrono::steady_clock::now();
  ort::Status* status =
      api.Run(session.get(), nullptr, input_names.data(), input_values.data(), input_count,
              session.output_name_pointers(), output_count, outputs.data());
  auto end = std::chrono::steady_clock::now();

  // Own the outputs before anything can throw, so none leaks.
  std::vector<OrtValuePtr> owned;
  owned.reserve(output_count);
  for (ort::Value* v : outputs) owned.emplace_back(v, OrtValueRelease{api.ReleaseValue});
  ort::check(api, status, "run the model");
  set_inference_time(std::chrono::duration<double>(end - start).count());

  TensorMap results;
  // Sequences and maps are spelled as tensors (backend/value_tensors.h).
  for (size_t i = 0; i < output_count; ++i)
    add_value_tensors(results, output_names[i],
                      value_from_ort(runtime, std::move(owned[i]), output_names[i]));
  return results;
}

std::unique_ptr<Runner> make_onnxrt_runner(Loader<ModelPtr> model, const OrtOptions& options,
                                           std::string name) {
  OrtRuntime::get(options.lib_path);
  return std::make_unique<OnnxrtRunner>(SessionFromOnnx(std::move(model), options),
                                        std::move(name));
}

}  // namespace parity
