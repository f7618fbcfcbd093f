#include "surgeon/extract.h"

#include <algorithm>
#include <set>

#include <fmt/format.h>

#include "core/error.h"
#include "core/names.h"
#include "surgeon/graph.h"
#include "surgeon/types.h"

namespace parity::surgeon {

namespace {

std::string names_str(const std::vector<TensorSpec>& specs) {
  std::vector<std::string> quoted;
  for (const auto& s : specs) quoted.push_back("'" + s.name + "'");
  return fmt::format("[{}]", fmt::join(quoted, ", "));
}

// The type an input or output of the subgraph gets: what the user gave, completed by what the
// model records.
::onnx::TypeProto resolve_type(const ::onnx::GraphProto& graph, const TensorSpec& spec,
                               bool is_input, const std::string& what) {
  std::optional<DataType> dtype = spec.dtype;
  std::optional<DimList> shape = spec.shape;
  if (const ::onnx::TypeProto* known = find_type(graph, spec.name)) {
    if (!known->has_tensor_type()) {
      if (dtype || shape)
        fail(
            "failed to extract a subgraph: {} '{}' is not a tensor (its type is {}), so it "
            "cannot be given a dtype or shape; leave them 'auto'",
            what, spec.name, type_str(*known));
      return *known;
    }
    if (!dtype && known->tensor_type().elem_type() != 0)
      dtype = static_cast<DataType>(known->tensor_type().elem_type());
    if (!shape) shape = dims_of(*known);
  } else if (const ::onnx::TensorProto* init = find_initializer(graph, spec.name)) {
    if (!dtype) dtype = static_cast<DataType>(init->data_type());
    if (!shape && is_input)
      shape = dims_from_shape(Shape(init->dims().begin(), init->dims().end()));
  }
  if (!dtype)
    fail(
        "failed to extract a subgraph: the data type of {} '{}' is not given and the model "
        "does not record it; give it ('{}:<dtype>' for an output, '{}:<shape>:<dtype>' for an "
        "input) or let shape inference find it ('auto')",
        what, spec.name, spec.name, spec.name);
  return tensor_type(*dtype, shape);
}

// Every name must be a tensor of the graph, given once.
void check_names(const ::onnx::GraphProto& graph, const GraphIndex& index,
                 const ExtractOptions& options) {
  const std::vector<std::string> names = index.tensor_names();
  auto check = [&](const std::vector<TensorSpec>& specs, const char* what) {
    std::set<std::string> seen;
    for (const auto& s : specs) {
      if (!index.has_tensor(s.name))
        fail("failed to extract a subgraph: {} '{}' is no tensor of graph '{}'{}", what, s.name,
             graph.name(), did_you_mean(s.name, names));
      if (!seen.insert(s.name).second)
        fail("failed to extract a subgraph: {} '{}' is given twice; each name may appear once",
             what, s.name);
    }
  };
  check(options.inputs, "input");
  check(options.outputs, "output");
}

}  // namespace

void extract_subgraph(::onnx::GraphProto& graph, const ExtractOptions& options) {
  const GraphIndex index(graph);
  std::vector<TensorSpec> inputs = options.inputs, outputs = options.outputs;
  if (inputs.empty())
    for (const auto& in : graph.input())
      if (!index.is_initializer(in.name())) inputs.push_back({in.name(), {}, {}});
  if (outputs.empty())
    for (const auto& out : graph.output()) outputs.push_back({out.name(), {}, {}});
  if (outputs.empty())
    fail("failed to extract a subgraph of '{}': it has no outputs", graph.name());

  check_names(graph, index, {inputs, outputs});
  std::set<std::string> input_set;
  for (const auto& s : inputs) input_set.insert(s.name);

  // Walk back from the outputs to the inputs; whatever else the walk meets that no node makes
  // and no initializer holds leaks in from outside the subgraph.
  struct Need {
    std::string name;
    int reader;  // the node that reads it; -1 for an output itself
    std::string output;
  };
  std::vector<Need> pending;
  for (const auto& s : outputs) pending.push_back({s.name, -1, s.name});
  std::set<std::string> visited;
  while (!pending.empty()) {
    const Need need = pending.back();
    pending.pop_back();
    if (!visited.insert(need.name).second || input_set.count(need.name) ||
        index.is_initializer(need.name))
      continue;
    if (auto p = index.producer(need.name)) {
      for (const auto& read : index.reads(*p)) pending.push_back({read, *p, need.output});
      continue;
    }
    const std::string origin = index.is_graph_input(need.name)
                                   ? "is an input of the model"
                                   : "is produced by no node of the graph";
    const std::string where = need.reader < 0
                                  ? fmt::format("is asked for as output '{}'", need.output)
                                  : fmt::format("is read by node {} on the way to output '{}'",
                                                node_label(graph, need.reader), need.output);
    fail(
        "failed to extract the subgraph with inputs {} and outputs {}: tensor '{}' {} and {}, "
        "but is not among the inputs; the inputs must separate the outputs from the model's "
        "inputs, so add '{}' (or a tensor between it and the output) to the inputs",
        names_str(inputs), names_str(outputs), need.name, origin, where, need.name);
  }

  // Every type before the graph changes.
  std::vector<::onnx::ValueInfoProto> new_inputs, new_outputs;
  for (const auto& s : inputs) {
    ::onnx::ValueInfoProto v;
    v.set_name(s.name);
    *v.mutable_type() = resolve_type(graph, s, true, "input");
    new_inputs.push_back(std::move(v));
  }
  for (const auto& s : outputs) {
    ::onnx::ValueInfoProto v;
    v.set_name(s.name);
    *v.mutable_type() = resolve_type(graph, s, false, "output");
    new_outputs.push_back(std::move(v));
  }
  // Initializers that are also graph inputs (overridable defaults) stay inputs when kept.
  for (const auto& in : graph.input())
    if (index.is_initializer(in.name()) && visited.count(in.name()) && !input_set.count(in.name()))
      new_inputs.push_back(in);

  // An input that a node made is cut off from it: the node (if still needed for another
  // output) writes that value under a name of its own, so the graph stays single-assignment.
  for (auto& node : *graph.mutable_node())
    for (auto& out : *node.mutable_output())
      if (input_set.count(out)) {
        std::string fresh = out + "_before_extract";
        while (index.has_tensor(fresh)) fresh += "_";
        out = fresh;
      }
  auto* inits = graph.mutable_initializer();
  inits->erase(
      std::remove_if(inits->begin(), inits->end(),
                     [&](const ::onnx::TensorProto& t) { return input_set.count(t.name()) > 0; }),
      inits->end());
  graph.clear_input();
  for (auto& v : new_inputs) *graph.add_input() = std::move(v);
  graph.clear_output();
  for (auto& v : new_outputs) *graph.add_output() = std::move(v);
  // value_info describes intermediate values only.
  std::set<std::string> io;
  for (const auto& v : graph.input()) io.insert(v.name());
  for (const auto& v : graph.output()) io.insert(v.name());
  auto* info = graph.mutable_value_info();
  info->erase(std::remove_if(info->begin(), info->end(),
                             [&](const ::onnx::ValueInfoProto& v) { return io.count(v.name()); }),
              info->end());
  cleanup(graph);
}

TensorMetadata missing_metadata(const ::onnx::GraphProto& graph, const ExtractOptions& options) {
  check_names(graph, GraphIndex(graph), options);
  TensorMetadata missing;
  auto recorded = [&](const std::string& name) {
    std::pair<std::optional<DataType>, std::optional<DimList>> known;
    if (const ::onnx::TypeProto* t = find_type(graph, name)) {
      known = {dtype_of(*t), dims_of(*t)};
    } else if (const ::onnx::TensorProto* init = find_initializer(graph, name)) {
      known = {static_cast<DataType>(init->data_type()),
               dims_from_shape(Shape(init->dims().begin(), init->dims().end()))};
    }
    return known;
  };
  for (const auto& s : options.inputs) {
    auto [dtype, shape] = recorded(s.name);
    dtype = s.dtype ? s.dtype : dtype;
    shape = s.shape ? s.shape : shape;
    if (!dtype || !shape) missing.add(s.name, dtype, shape);
  }
  for (const auto& s : options.outputs) {
    auto [dtype, shape] = recorded(s.name);
    dtype = s.dtype ? s.dtype : dtype;
    if (!dtype) missing.add(s.name, dtype, shape);
  }
  return missing;
}

void extract_subgraph(::onnx::ModelProto& model, const ExtractOptions& options) {
  extract_subgraph(*model.mutable_graph(), options);
}

}  // namespace parity::surgeon

namespace parity::surgeon {

void modify_outputs(::onnx::GraphProto& graph, const std::vector<std::string>& outputs,
                    bool mark_all, const std::vector<std::string>& exclude) {
  const GraphIndex index(graph);
  for (const auto* list : {&outputs, &exclude})
    for (const auto& name : *list)
      if (!index.has_tensor(name))
        fail("failed to mark outputs: tensor '{}' does not exist in graph '{}'{}", name,
             graph.name(), did_you_mean(name, index.tensor_names()));
  std::vector<std::string> names;
  auto add = [&](const std::string& n) {
    if (!n.empty() && std::find(names.begin(), names.end(), n) == names.end()) names.push_back(n);
  };
  if (mark_all) {
    for (const auto& node : graph.node())
      if (node.op_type() != "Constant")
        for (const auto& o : node.output()) add(o);
  } else {
    for (const auto& n : outputs) add(n);
  }
  if (mark_all || !outputs.empty()) {
    std::vector<::onnx::ValueInfoProto> marked;
    for (const auto& n : names) {
      ::onnx::ValueInfoProto v;
      v.set_name(n);
      if (const ::onnx::TypeProto* t = find_type(graph, n)) *v.mutable_type() = *t;
      marked.push_back(std::move(v));
    }
    graph.clear_output();
    for (auto& v : marked) *graph.add_output() = std::move(v);
  }
  auto* out = graph.mutable_output();
  out->erase(std::remove_if(out->begin(), out->end(),
                            [&](const ::onnx::ValueInfoProto& v) {
                              return std::find(exclude.begin(), exclude.end(), v.name()) !=
                                     exclude.end();
                            }),
             out->end());
}

}  // namespace parity::surgeon
