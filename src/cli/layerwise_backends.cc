#include "cli/layerwise_backends.h"

#include <fstream>
#include <iterator>

#include "backend/onnxrt/runner.h"
#include "backend/ref/executor.h"
#include "core/logger.h"

namespace parity::cli {

BatchFetcher onnxrt_batches(ModelPtr model, OrtOptions options, std::string runner_name,
                            const TensorMap& feed) {
  auto batches = std::make_shared<int>(0);
  return [model, options, runner_name, &feed, batches](const std::vector<std::string>& names) {
    // One session per batch: its "Creating session" line is shown for the first one only
    // (and for all with -v).
    const Severity shown = logger().severity();
    struct Restore {
      Severity severity;
      ~Restore() { logger().set_severity(severity); }
    } restore{shown};
    if ((*batches)++ > 0 && shown == Severity::kInfo) logger().set_severity(Severity::kWarning);
    std::unique_ptr<Runner> runner =
        make_onnxrt_runner(ModifyOutputs(Loader<ModelPtr>(model), names, false), options,
                           runner_name);
    RunnerActivation active(*runner);
    TensorMap outputs = runner->infer(feed);
    return outputs;
  };
}

BatchFetcher reference_batches(ModelPtr model, const TensorMap& feed) {
  return [model, &feed](const std::vector<std::string>& names) {
    ref::Executor executor(model);
    TensorMap all = executor.run(feed, names);
    TensorMap batch;
    for (const auto& name : names)
      if (const Tensor* t = all.find(name)) batch.set(name, *t);
    return batch;
  };
}

BatchFetcher saved_batches(const TensorMap& saved) {
  return [&saved](const std::vector<std::string>& names) {
    TensorMap batch;
    for (const auto& name : names)
      if (const Tensor* t = saved.find(name)) batch.set(name, *t);
    return batch;
  };
}

NodeRunner single_node_runner(ModelPtr model) {
  return [model](const ir::Node& node, const TensorMap& inputs) {
    const ir::Graph& graph = model->graph;
    auto one = std::make_shared<ir::Model>();
    one->ir_version = model->ir_version;
    one->opsets = model->opsets;
    one->external_data_dir = model->external_data_dir;
    ir::Graph& g = one->graph;
    g.name = "local_error_" + node.name;
    g.nodes.push_back(node);
    auto type_of = [&](const std::string& name) {
      const ir::ValueType* t = graph.find_type(name);
      return t ? *t : ir::ValueType{};
    };
    for (const auto& in : node.inputs) {
      if (in.empty()) continue;
      if (auto c = graph.initializers.find(in); c != graph.initializers.end()) {
        g.initializers[in] = c->second;
      } else if (!std::any_of(g.inputs.begin(), g.inputs.end(),
                              [&](const ir::ValueInfo& v) { return v.name == in; })) {
        g.inputs.push_back({in, type_of(in)});
      }
      if (const ir::ValueType* t = graph.find_type(in)) g.value_info[in] = *t;
    }
    for (const auto& out : node.outputs) {
      if (out.empty()) continue;
      g.outputs.push_back({out, type_of(out)});
      if (const ir::ValueType* t = graph.find_type(out)) g.value_info[out] = *t;
    }
    ref::Executor executor(one);
    const TensorMap outputs = executor.run(inputs);
    std::vector<Tensor> result;
    for (const auto& out : node.outputs) {
      const Tensor* t = out.empty() ? nullptr : outputs.find(out);
      result.push_back(t ? *t : Tensor());
    }
    return result;
  };
}

std::string process_command_line() {
  std::ifstream in("/proc/self/cmdline", std::ios::binary);
  std::string raw((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::string line;
  for (char c : raw) line += c == '\0' ? ' ' : c;
  while (!line.empty() && line.back() == ' ') line.pop_back();
  return line;
}

}  // namespace parity::cli
