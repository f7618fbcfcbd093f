#include "onnx/model_check.h"

#include <set>
#include <string>

#include <onnx/onnx_pb.h>

#include "core/error.h"
#include "core/logger.h"

namespace parity::onnx_io {

namespace {

// Graph input and output names are single assignments, in bodies as at the top.
void check_graph_signature(const ::onnx::GraphProto& graph, bool top_level) {
  const std::string which = top_level ? "the graph" : fmt::format("subgraph '{}'", graph.name());
  // ONNX's checker requires every value_info of a graph's signature to be named; an unnamed
  // one could be neither fed nor compared.
  for (const auto* list : {&graph.input(), &graph.output()})
    for (int i = 0; i < list->size(); ++i)
      if ((*list)[i].name().empty())
        fail(
            "failed to load the model: {} has an unnamed {} (number {}); every graph input and "
            "output must have a name",
            which, list == &graph.input() ? "input" : "output", i + 1);
  std::set<std::string> seen;
  for (const auto& in : graph.input())
    if (!seen.insert(in.name()).second)
      fail(
          "failed to load the model: {} lists input '{}' twice; ONNX graphs are in single "
          "static assignment form, so every input name must be unique",
          which, in.name());
  seen.clear();
  for (const auto& out : graph.output())
    if (!seen.insert(out.name()).second)
      fail(
          "failed to load the model: {} lists output '{}' twice; every output name must be "
          "unique (outputs are compared by name)",
          which, out.name());
  if (top_level && graph.output_size() == 0)
    fail(
        "failed to load the model: the graph '{}' has no outputs; a model must declare at "
        "least one output to be run and compared",
        graph.name());
  for (const auto& node : graph.node())
    for (const auto& attr : node.attribute()) {
      if (attr.has_g()) check_graph_signature(attr.g(), false);
      for (const auto& g : attr.graphs()) check_graph_signature(g, false);
    }
}

}  // namespace

void check_model_proto(const ::onnx::ModelProto& model) {
  const long ir = static_cast<long>(model.ir_version());
  if (ir <= 0)
    fail(
        "failed to load the model with ir_version {}: the IR version must be set to 1 or more "
        "(ONNX's checker refuses a model without one); valid versions are 1 to {}",
        ir, kNewestIrVersion);
  if (ir > kNewestIrVersion)
    fail(
        "failed to load the model with ir_version {}: it is newer than the newest IR version "
        "Parity (and ONNX Runtime) know, {}; valid versions are 1 to {}",
        ir, kNewestIrVersion, kNewestIrVersion);
  if (ir >= 3 && model.opset_import_size() == 0)
    fail(
        "failed to load the model with ir_version {}: it imports no opset; from IR version 3 "
        "a model must name the opset of every domain it uses",
        ir);
  std::set<std::string> domains;
  for (const auto& op : model.opset_import()) {
    const std::string domain =
        op.domain().empty() || op.domain() == "ai.onnx" ? "ai.onnx" : op.domain();
    if (!domains.insert(domain).second)
      fail(
          "failed to load the model: opset_import lists domain '{}' twice; each domain may be "
          "imported once",
          domain);
    if (op.version() < 1)
      fail("failed to load the model with opset {} of domain '{}': opset versions start at 1",
           op.version(), domain);
    if (domain == "ai.onnx" && op.version() > kNewestOnnxOpset)
      logger().warning(
          "The model imports opset {} of domain 'ai.onnx', newer than the newest "
          "released opset Parity knows ({}); the newest kernels are used, which "
          "may not match that opset's definitions",
          op.version(), kNewestOnnxOpset);
  }
  check_graph_signature(model.graph(), true);
}

}  // namespace parity::onnx_io
