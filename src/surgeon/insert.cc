#include "surgeon/insert.h"

#include <algorithm>
#include <set>

#include "core/error.h"
#include "core/names.h"
#include "surgeon/graph.h"

namespace parity::surgeon {

namespace {

constexpr const char* kSuffix = "_polygraphy_surgeon_insert_output";

// Renames the reads of `from` in `graph`'s nodes and in the bodies that see it (a body that
// defines its own `from` hides the outer one).
void rename_reads(::onnx::GraphProto& graph, const std::string& from, const std::string& to) {
  for (auto& node : *graph.mutable_node()) {
    for (auto& in : *node.mutable_input())
      if (in == from) in = to;
    for (auto& a : *node.mutable_attribute()) {
      auto rename_body = [&](::onnx::GraphProto& body) {
        for (const auto& in : body.input())
          if (in.name() == from) return;
        for (const auto& t : body.initializer())
          if (t.name() == from) return;
        rename_reads(body, from, to);
        for (auto& out : *body.mutable_output())
          if (out.name() == from) out.set_name(to);
      };
      if (a.has_g()) rename_body(*a.mutable_g());
      for (auto& g : *a.mutable_graphs()) rename_body(g);
    }
  }
}

void rename_output_of_producer(::onnx::GraphProto& graph, const std::string& from,
                               const std::string& to) {
  for (auto& node : *graph.mutable_node())
    for (auto& out : *node.mutable_output())
      if (out == from) out = to;
  for (auto& v : *graph.mutable_value_info())
    if (v.name() == from) v.set_name(to);
}

}  // namespace

void insert_node(::onnx::GraphProto& graph, const InsertOptions& options) {
  if (options.op.empty()) fail_usage("failed to insert a node: --op is required (an ONNX op)");
  if (options.outputs.empty())
    fail_usage("failed to insert a node of op '{}': it needs at least one output", options.op);
  {
    const GraphIndex index(graph);
    for (const auto* list : {&options.inputs, &options.outputs})
      for (const auto& name : *list)
        if (!index.has_tensor(name))
          fail("failed to insert a node of op '{}': tensor '{}' does not exist in graph '{}'{}",
               options.op, name, graph.name(), did_you_mean(name, index.tensor_names()));
  }
  std::set<std::string> graph_outputs;
  for (const auto& o : graph.output()) graph_outputs.insert(o.name());
  std::set<std::string> taken;
  for (const auto& name : GraphIndex(graph).tensor_names()) taken.insert(name);
  auto fresh = [&](std::string name) {
    while (taken.count(name)) name += "_";
    taken.insert(name);
    return name;
  };

  ::onnx::NodeProto node;
  node.set_op_type(options.op);
  node.set_name(options.name);
  for (const auto& a : options.attributes) *node.add_attribute() = a;
  std::vector<std::string> inputs = options.inputs;
  std::vector<std::string> outputs;
  for (const auto& name : options.outputs) {
    const bool also_input =
        std::find(options.inputs.begin(), options.inputs.end(), name) != options.inputs.end();
    if (also_input && graph_outputs.count(name)) {
      // The old value is renamed; the node writes the graph output under its own name, and
      // the old value's other readers read the node's output.
      const std::string old = fresh(name + kSuffix);
      rename_output_of_producer(graph, name, old);
      for (auto& in : inputs)
        if (in == name) in = old;
      for (auto& in : *graph.mutable_input())  // a graph input passed straight through
        if (in.name() == name) in.set_name(old);
      outputs.push_back(name);
    } else if (also_input) {
      // The node writes a new value, which the old value's readers read instead.
      const std::string made = fresh(name + kSuffix);
      rename_reads(graph, name, made);
      outputs.push_back(made);
    } else {
      // The old producer no longer writes it.
      rename_output_of_producer(graph, name, fresh(name + "_replaced_by_insert"));
      outputs.push_back(name);
    }
  }
  for (const auto& in : inputs) node.add_input(in);
  for (const auto& out : outputs) node.add_output(out);

  // After the last node that makes one of the inputs, so that a sorted graph stays sorted.
  const GraphIndex index(graph);
  int at = 0;
  for (const auto& in : inputs)
    if (auto p = index.producer(in)) at = std::max(at, *p + 1);
  ::google::protobuf::RepeatedPtrField<::onnx::NodeProto> nodes;
  for (int i = 0; i <= graph.node_size(); ++i) {
    if (i == at) *nodes.Add() = node;
    if (i < graph.node_size()) nodes.Add()->Swap(graph.mutable_node(i));
  }
  graph.mutable_node()->Swap(&nodes);
  cleanup(graph);
}

}  // namespace parity::surgeon
