#include "surgeon_test_util.h"

#include <fmt/format.h>

#include "backend/registry.h"
#include "onnx/model_io.h"
#include "support/onnx_text.h"

namespace parity::testing {

::onnx::ModelProto named_model(const std::string& onnx_text) {
  ::onnx::ModelProto model = model_proto_from_text(onnx_text);
  auto* graph = model.mutable_graph();
  for (int i = 0; i < graph->node_size(); ++i) {
    auto* node = graph->mutable_node(i);
    if (node->name().empty()) node->set_name(fmt::format("{}_{}", node->op_type(), i));
  }
  return model;
}

std::vector<std::string> node_names(const ::onnx::ModelProto& model) {
  std::vector<std::string> names;
  for (const auto& n : model.graph().node()) names.push_back(n.name());
  return names;
}

TensorMap run_model(const ::onnx::ModelProto& model, const TensorMap& feed,
                    const std::string& backend, const std::vector<std::string>& names) {
  auto proto = std::make_shared<::onnx::ModelProto>(model);
  auto ir = onnx_io::model_from_proto(proto, {}, ".");
  const ConfiguredBackend configured = BackendRegistry::global().configure(backend, {});
  if (names.empty()) {
    // The graph outputs, through a runner as `parity run` gets them.
    std::unique_ptr<Runner> runner = configured.make_runner(Loader<ModelPtr>(ModelPtr(ir)));
    RunnerActivation active(*runner);
    return runner->infer(feed);
  }
  return configured.fetch_tensors(ir, feed, names);
}

}  // namespace parity::testing
