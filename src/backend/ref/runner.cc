#include "backend/ref/runner.h"

#include "backend/value_tensors.h"

#include <chrono>

#include "core/logger.h"
#include "core/thread_pool.h"

namespace parity {

PluginRefRunner::PluginRefRunner(Loader<ModelPtr> model, std::string name)
    : Runner(std::move(name), "pluginref-runner"), model_loader_(std::move(model)) {}

PluginRefRunner::~PluginRefRunner() = default;

ref::Executor& PluginRefRunner::executor() {
  if (!executor_)
    fail(
        "failed to get the executor of runner '{}': it exists only while the runner is "
        "active; call activate() first",
        name());
  return *executor_;
}

void PluginRefRunner::activate_impl() {
  if (!model_loader_)
    fail_usage(
        "failed to activate runner '{}' without a model: pass a model loader such as "
        "OnnxFromPath(path)",
        name());
  model_ = model_loader_();
  if (!model_)
    fail_usage("failed to activate runner '{}': its model loader returned no model", name());
  executor_ = std::make_unique<ref::Executor>(model_);
  logger().verbose("Reference backend: {} thread(s)", threads_ > 0 ? threads_ : num_threads());
}

void PluginRefRunner::deactivate_impl() {
  executor_.reset();
  model_.reset();
}

TensorMetadata PluginRefRunner::input_metadata_impl() { return model_input_metadata(*model_); }

void PluginRefRunner::set_threads(int threads) {
  if (threads < 0)
    fail_usage(
        "runner '{}' got {} reference threads; the count must be 0 (the CPUs of the "
        "process's affinity mask) or positive",
        name(), threads);
  threads_ = threads;
}

TensorMap PluginRefRunner::infer_impl(const TensorMap& feed) {
  // The pool is process-wide: set it only when it differs (setting restarts the workers).
  if (threads_ > 0 && num_threads() != threads_) set_num_threads(threads_);
  auto start = std::chrono::steady_clock::now();
  std::vector<ref::NamedValue> inputs;
  inputs.reserve(feed.size());
  // Sequence and map inputs come as their derived tensors (backend/value_tensors.h).
  std::vector<std::string> names;
  for (const auto& in : model_->graph.inputs) names.push_back(in.name);
  TensorMap tensors;
  for (auto& [name, value] : value_inputs(feed, names, tensors))
    inputs.push_back({name, std::move(value)});
  for (const auto& [name, tensor] : tensors) inputs.push_back({name, Value(tensor)});
  std::vector<ref::NamedValue> values = executor_->run(inputs);
  set_inference_time(
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
  // Sequences and maps are spelled as tensors (backend/value_tensors.h).
  TensorMap outputs;
  for (const auto& [name, value] : values) add_value_tensors(outputs, name, value);
  return outputs;
}

}  // namespace parity
