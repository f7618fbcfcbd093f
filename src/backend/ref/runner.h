// PluginRefRunner: the reference backend behind the Runner contract (Polygraphy's
// `pluginref` runner, with every op of the registry instead of three).
//
//   PluginRefRunner runner(OnnxFromPath("model.onnx"));
//   RunnerActivation active(runner);
//   TensorMap outputs = runner.infer(feed);
#pragma once

#include <memory>
#include <string>

#include "backend/ref/executor.h"
#include "backend/runner.h"
#include "core/loader.h"
#include "onnx/loaders.h"

namespace parity {

class PluginRefRunner : public Runner {
 public:
  // An empty name gets the default "pluginref-runner-N<k>-<date>-<time>".
  explicit PluginRefRunner(Loader<ModelPtr> model, std::string name = "");
  ~PluginRefRunner() override;

  // The executor built by activate(), for what the Runner interface does not offer (an
  // observer, extra outputs). Throws Error when the runner is not active.
  ref::Executor& executor();
  // Whether the registry has a kernel for the node's op at `opset` (backend/ref/backend.cc).
  std::optional<bool> supports(const ir::Node& node, int64_t opset) const override;

  // The reference pool's thread count for this runner's inferences (--ref-threads, the
  // Python runner's `threads`); 0, the default, leaves the pool as it is (by default the
  // CPUs of the process's affinity mask). Throws UsageError for a negative count.
  void set_threads(int threads);

 protected:
  void activate_impl() override;
  void deactivate_impl() override;
  TensorMetadata input_metadata_impl() override;
  TensorMap infer_impl(const TensorMap& feed) override;

 private:
  Loader<ModelPtr> model_loader_;
  ModelPtr model_;
  std::unique_ptr<ref::Executor> executor_;
  int threads_ = 0;
};

}  // namespace parity
