#include "surgeon/upper_bound.h"

#include <set>

#include <fmt/format.h>

#include "core/error.h"
#include "core/logger.h"
#include "core/names.h"
#include "surgeon/graph.h"
#include "surgeon/model_file.h"
#include "surgeon/types.h"

namespace parity::surgeon {

namespace {

// Which input of these ops sizes the output.
const std::map<std::string, std::vector<int>> kSizingInputs = {
    {"Range", {1}}, {"Pad", {1}}, {"Resize", {3}}, {"Tile", {1}}, {"Expand", {1}}};

std::optional<DimList> recorded_dims(const ::onnx::GraphProto& g, const std::string& name) {
  const ::onnx::TypeProto* t = find_type(g, name);
  return t ? dims_of(*t) : std::nullopt;
}

}  // namespace

std::vector<std::string> unbounded_dds_tensors(::onnx::GraphProto& graph) {
  toposort(graph);
  const GraphIndex index(graph);
  std::set<std::string> symbols;
  for (const auto& in : graph.input())
    if (auto dims = dims_of(in.type()))
      for (const Dim& d : *dims)
        if (d.is_symbolic()) symbols.insert(d.param);
  std::vector<std::string> found;
  for (int i = 0; i < graph.node_size(); ++i) {
    const auto& node = graph.node(i);
    // Only the node that first brings in a shape symbol (or whose output shape nobody could
    // tell) may make an unbounded size.
    bool check = false;
    for (const auto& out : node.output()) {
      const std::optional<DimList> dims = recorded_dims(graph, out);
      if (!dims) {
        check = true;
        continue;
      }
      for (const Dim& d : *dims)
        if (d.is_symbolic() && symbols.insert(d.param).second) check = true;
    }
    auto sizing = kSizingInputs.find(node.op_type());
    if (!check || sizing == kSizingInputs.end()) continue;
    for (int k : sizing->second) {
      if (k >= node.input_size() || node.input(k).empty()) continue;
      const std::string& in = node.input(k);
      const auto producer = index.producer(in);
      if (index.is_initializer(in) || !producer) continue;
      if (graph.node(*producer).op_type() == "Min") continue;  // bounded already
      if (std::find(found.begin(), found.end(), in) == found.end()) found.push_back(in);
    }
  }
  return found;
}

std::string unbounded_dds_str(const ::onnx::GraphProto& graph,
                              const std::vector<std::string>& names) {
  std::vector<std::string> items;
  for (const auto& name : names) {
    const ::onnx::TypeProto* t = find_type(graph, name);
    const auto dims = t ? dims_of(*t) : std::nullopt;
    const auto dtype = t ? dtype_of(*t) : std::nullopt;
    std::string shape = "None";
    if (dims) {
      std::vector<std::string> parts;
      for (const Dim& d : *dims)
        parts.push_back(d.is_fixed()      ? std::to_string(d.value)
                        : d.is_symbolic() ? "'" + d.param + "'"
                                          : "None");
      shape = fmt::format("[{}]", fmt::join(parts, ", "));
    }
    items.push_back(fmt::format("Variable ({}): (shape={}, dtype={})", name, shape,
                                dtype ? std::string(dtype_name(*dtype)) : "None"));
  }
  return fmt::format("[{}]", fmt::join(items, ", "));
}

namespace {

Tensor bound_value(DataType dtype, int64_t bound, size_t count, const std::string& tensor) {
  const Shape shape = count == 0 ? Shape{} : Shape{static_cast<int64_t>(count)};
  const size_t n = count == 0 ? 1 : count;
  switch (dtype) {
    case DataType::kInt64:
      return Tensor::from_vector<int64_t>(shape, std::vector<int64_t>(n, bound));
    case DataType::kInt32:
      return Tensor::from_vector<int32_t>(shape,
                                          std::vector<int32_t>(n, static_cast<int32_t>(bound)));
    case DataType::kFloat32:
      return Tensor::from_vector<float>(shape, std::vector<float>(n, static_cast<float>(bound)));
    case DataType::kFloat64:
      return Tensor::from_vector<double>(shape, std::vector<double>(n, static_cast<double>(bound)));
    default:
      fail(
          "failed to set an upper bound on tensor '{}': its dtype {} has no bound here; valid "
          "dtypes are int64, int32, float32, float64",
          tensor, dtype_name(dtype));
  }
}

}  // namespace

std::map<std::string, int64_t> set_upper_bounds(::onnx::GraphProto& graph,
                                                const std::map<std::string, int64_t>& bounds) {
  const std::vector<std::string> unbounded = unbounded_dds_tensors(graph);
  std::vector<std::string> targets = unbounded;
  {
    const GraphIndex index(graph);
    for (const auto& [name, bound] : bounds) {
      if (name.empty()) continue;
      if (!index.has_tensor(name))
        fail("failed to set an upper bound on tensor '{}': graph '{}' has no such tensor{}", name,
             graph.name(), did_you_mean(name, index.tensor_names()));
      if (std::find(unbounded.begin(), unbounded.end(), name) == unbounded.end()) {
        logger().warning(
            "Tensor '{}' given an upper bound does not have an unbounded data-dependent shape; "
            "bounding it anyway",
            name);
        targets.push_back(name);
      }
      if (!index.producer(name))
        fail(
            "failed to set an upper bound on tensor '{}': no node produces it (an input or an "
            "initializer), so there is nothing to bound",
            name);
    }
  }
  std::map<std::string, int64_t> applied;
  for (const auto& name : targets) {
    auto it = bounds.find(name);
    if (it == bounds.end()) it = bounds.find("");
    if (it == bounds.end()) continue;
    const ::onnx::TypeProto* type = find_type(graph, name);
    const auto dtype = type ? dtype_of(*type) : std::nullopt;
    const auto dims = type ? dims_of(*type) : std::nullopt;
    // As Polygraphy: a scalar bound, or one per dim for a tensor of known rank. In the
    // tensor's own dtype, so that Min is valid (Polygraphy's is always int64).
    const size_t count = dims ? dims->size() : 0;
    const std::string copy = name + "_copy", bound_name = name + "_upper_bound";
    for (auto& node : *graph.mutable_node())
      for (auto& out : *node.mutable_output())
        if (out == name) out = copy;
    for (auto& v : *graph.mutable_value_info())
      if (v.name() == name) v.set_name(copy);
    *graph.add_initializer() = tensor_proto(
        bound_name, bound_value(dtype.value_or(DataType::kInt64), it->second, count, name));
    auto* min = graph.add_node();
    min->set_op_type("Min");
    min->set_name(name + "_upper_bound_min");
    min->add_input(copy);
    min->add_input(bound_name);
    min->add_output(name);
    if (type) {
      auto* info = graph.add_value_info();
      info->set_name(name);
      *info->mutable_type() = *type;
    }
    applied[name] = it->second;
  }
  toposort(graph);  // the Min right after the node it bounds
  return applied;
}

}  // namespace parity::surgeon
