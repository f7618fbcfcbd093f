#include "backend/ref/runner.h"

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

TensorMetadata PluginRefRunner::input_metadata_impl() { return model_input_metadata(*model_); }

TensorMap PluginRefRunner::infer_impl(const TensorMap& feed) {
  auto start = std::chrono::steady_clock::now();
  TensorMap outputs = executor_->run(feed);
  set_inference_time(std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
                         .count());
  return outputs;
}

}  // namespace parity
