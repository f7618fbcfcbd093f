// GraphSurgeon's notions over the ONNX protobuf itself. The mutable graph of `parity surgeon` is
// the onnx::ModelProto, edited in place, so that everything a tool does not change (metadata,
// opset imports, functions, doc strings, value_info, fields this release does not know) is
// written back as it was read. This file indexes a graph (who produces and who reads each
// tensor, reads from inside If/Loop/Scan bodies included), removes what does not reach the
// outputs, sorts the nodes, and tells which tensors are constant.
#pragma once

#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include <onnx/onnx_pb.h>

namespace parity::surgeon {

// The values a subgraph (a node's body) reads from the graphs around it: names it uses that
// it neither defines (inputs, initializers, node outputs) nor gets from a deeper body.
std::set<std::string> outer_reads(const ::onnx::GraphProto& body);

// Producers and consumers of every tensor of one graph. Built once; rebuild after editing.
class GraphIndex {
 public:
  explicit GraphIndex(const ::onnx::GraphProto& graph);

  // What node `i` reads: its inputs (absent optional ones left out) and the values of this
  // graph (or an enclosing one) its bodies read.
  const std::vector<std::string>& reads(int node) const { return reads_[node]; }
  // The node that produces `name`, if a node of this graph does.
  std::optional<int> producer(const std::string& name) const;
  // The nodes that read `name` (directly or from inside a body), in node order.
  const std::vector<int>& consumers(const std::string& name) const;
  bool is_initializer(const std::string& name) const { return initializers_.count(name) > 0; }
  bool is_graph_input(const std::string& name) const { return inputs_.count(name) > 0; }
  // Every tensor name of the graph (inputs, initializers, node inputs and outputs), sorted.
  std::vector<std::string> tensor_names() const;
  bool has_tensor(const std::string& name) const { return names_.count(name) > 0; }

 private:
  std::vector<std::vector<std::string>> reads_;
  std::map<std::string, int> producer_;
  std::map<std::string, std::vector<int>> consumers_;
  std::set<std::string> initializers_, inputs_, names_;
};

// "'mul0' (Mul)": how messages name a node ("'Mul_2' (Mul)" when it has no name, as Parity's
// loader names it).
std::string node_label(const ::onnx::GraphProto& graph, int node);

// The type the graph records for `name` (input, output or value_info); nullptr if none.
const ::onnx::TypeProto* find_type(const ::onnx::GraphProto& graph, const std::string& name);
// The initializer called `name`; nullptr if none.
const ::onnx::TensorProto* find_initializer(const ::onnx::GraphProto& graph,
                                            const std::string& name);

struct CleanupOptions {
  bool remove_unused_graph_inputs = false;  // GraphSurgeon keeps them unless asked
};
// Removes the nodes whose outputs reach no graph output, then the initializers, value_info and
// (when asked) graph inputs nothing reads any more. Returns how many nodes were removed.
size_t cleanup(::onnx::GraphProto& graph, const CleanupOptions& options = {});

// Sorts the nodes topologically (stable: a node keeps its place unless it must move). Values not
// produced by a node of this graph (inputs, initializers, outer values) are available from the
// start. A cycle is an Error naming its nodes.
void toposort(::onnx::GraphProto& graph);

// The tensors of `graph` whose value is known without running the model: initializers and the
// outputs of Constant nodes (not their inputs: a graph input with an initializer is a default
// that the user may override, so it is not constant, as in GraphSurgeon).
std::set<std::string> constant_tensors(const ::onnx::GraphProto& graph);

}  // namespace parity::surgeon
