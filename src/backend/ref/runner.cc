#include "backend/ref/runner.h"

#include "backend/value_tensors.h"

#include <chrono>

namespace parity {

PluginRefRunner::PluginRefRunner(Loader<ModelPtr> model, std::string name)
    : Runner(std::move(name), "pluginref-runner"), model_loader_(std::move(model)) {}

PluginRefRunner::~PluginRefRunner() = default;

ref::Executor& PluginRefRunner::executor() {
  if (!executor_)
    fail("failed to get the executor of runner '{}': it exists only while the runner is "
         "active; call activate() first",
         name());
  return *executor_;
}

void PluginRefRunner::activate_impl() {
  if (!model_loader_)
    fail_usage("failed to activate runner '{}' without a model: pass a model loader such as "
               "OnnxFromPath(path)",
               name());
  model_ = model_loader_();
  if (!model_) fail_usage("failed to activate runner '{}': its model loader returned no model",
                          name());
  executor_ = std::make_unique<ref::Executor>(model_);
}

void PluginRefRunner::deactivate_impl() {
  executor_.reset();
  model_.reset();
}

TensorMetadata PluginRefRunner::input_metadata_impl() {
  TensorMetadata meta;
  for (const auto& in : model_->graph.inputs) {
    std::optional<DataType> dtype;
    std::optional<DimList> shape;
    if (in.type.kind == ir::ValueType::Kind::kTensor) {
      dtype = in.type.elem_type;
      shape = in.type.shape;
    }
    meta.add(in.name, dtype, shape);
  }
  return meta;
}

TensorMap PluginRefRunner::infer_impl(const TensorMap& feed) {
  auto start = std::chrono::steady_clock::now();
  std::vector<ref::NamedValue> inputs;
  inputs.reserve(feed.size());
  for (const auto& [name, tensor] : feed) inputs.push_back({name, Value(tensor)});
  std::vector<ref::NamedValue> values = executor_->run(inputs);
  set_inference_time(std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
                         .count());
  // Sequences and maps are spelled as tensors (backend/value_tensors.h).
  TensorMap outputs;
  for (const auto& [name, value] : values) add_value_tensors(outputs, name, value);
  return outputs;
}

}  // namespace parity
