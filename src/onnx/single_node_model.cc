#include "onnx/single_node_model.h"

#include <algorithm>

namespace parity::onnx_io {

std::shared_ptr<ir::Model> single_node_model(const ir::Model& model, const ir::Node& node) {
  const ir::Graph& graph = model.graph;
  auto one = std::make_shared<ir::Model>();
  one->ir_version = model.ir_version;
  one->opsets = model.opsets;
  one->external_data_dir = model.external_data_dir;
  ir::Graph& g = one->graph;
  g.name = "single_node_" + node.name;
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
  return one;
}

}  // namespace parity::onnx_io
