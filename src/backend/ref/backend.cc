// The reference backend in the backend registry: `--pluginref` (alias `--ref`), runners that
// stream every node's values to layer-wise comparison, and intermediate tensors read off the
// interpreter without changing the model.
#include "backend/plugins.h"
#include "backend/ref/executor.h"
#include "backend/ref/plugin.h"
#include "backend/ref/registry.h"
#include "backend/ref/runner.h"
#include "backend/registry.h"

#include <fmt/format.h>

namespace parity {

std::optional<bool> PluginRefRunner::supports(const ir::Node& node, int64_t opset) const {
  return ref::Registry::global().find(node.domain, node.op_type,
                                      opset > 0 ? opset : ref::kOpsetMax) != nullptr;
}

namespace {

Backend reference_backend() {
  Backend b;
  b.name = "pluginref";
  b.flags = "--pluginref,--ref";
  b.help = "Run inference on the reference backend";
  b.group = "Reference Runner";
  b.rank = 0;
  b.options = {{"--ref-threads", BackendOption::Kind::kValue,
                "Reference backend threads (0 = the CPUs of the process's affinity mask)", "0"}};
  // The config is the thread count.
  b.configure = [](const BackendOptionValues& v) {
    return std::any(static_cast<int>(v.integer("ref-threads", 0, 0, 1 << 16)));
  };
  b.make_runner = [](Loader<ModelPtr> model, const std::any& config, const std::string& name) {
    auto runner = std::make_unique<PluginRefRunner>(std::move(model), name);
    runner->set_threads(std::any_cast<int>(config));
    return std::unique_ptr<Runner>(std::move(runner));
  };
  b.script = [](const std::any& config) {
    const int threads = std::any_cast<int>(config);
    return RunnerScript{{"from parity.backend.pluginref import PluginRefRunner"},
                        threads > 0 ? fmt::format("PluginRefRunner(model, threads={})", threads)
                                    : "PluginRefRunner(model)"};
  };
  // The interpreter keeps the asked-for tensors as extra outputs: no model copy per batch.
  b.fetch_tensors = [](const ModelPtr& model, const std::any&, const TensorMap& feed,
                       const std::vector<std::string>& names) {
    ref::Executor executor(model);
    TensorMap all = executor.run(feed, names);
    TensorMap batch;
    for (const auto& name : names)
      if (const Tensor* t = all.find(name)) batch.set(name, *t);
    return batch;
  };
  b.run_observed = [](Runner& runner, const TensorMap& feed, const NodeObserver& observer) {
    ref::Executor& executor = dynamic_cast<PluginRefRunner&>(runner).executor();
    executor.set_observer(observer);
    struct Reset {
      ref::Executor& e;
      ~Reset() { e.set_observer(nullptr); }
    } reset{executor};
    return runner.infer(feed);
  };
  return b;
}

}  // namespace

PARITY_REGISTER_BACKEND(reference_backend());

// Op plugins (parity_register_ops) add reference kernels.
static const bool op_plugins_served = [] {
  set_op_plugin_loader([](const std::string& path) { return ref::load_plugin(path).ops; });
  return true;
}();

}  // namespace parity
