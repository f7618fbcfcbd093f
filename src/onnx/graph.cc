#include "onnx/graph.h"

#include <algorithm>
#include <deque>
#include <set>
#include <unordered_map>
#include <unordered_set>

#include <fmt/format.h>

#include "core/error.h"

namespace parity::ir {

std::string ValueType::str() const {
  switch (kind) {
    case Kind::kTensor:
      return fmt::format("tensor({}, {})", elem_type ? dtype_name(*elem_type) : "?",
                         shape ? dims_str(*shape) : "?");
    case Kind::kSequence:
      return fmt::format("seq({})", inner ? inner->str() : "?");
    case Kind::kOptional:
      return fmt::format("optional({})", inner ? inner->str() : "?");
    case Kind::kMap:
      return fmt::format("map({}, {})", elem_type ? dtype_name(*elem_type) : "?",
                         inner ? inner->str() : "?");
    default:
      return "unknown";
  }
}

std::string_view attribute_type_name(Attribute::Type t) {
  switch (t) {
    case Attribute::Type::kFloat:
      return "float";
    case Attribute::Type::kInt:
      return "int";
    case Attribute::Type::kString:
      return "string";
    case Attribute::Type::kTensor:
      return "tensor";
    case Attribute::Type::kGraph:
      return "graph";
    case Attribute::Type::kFloats:
      return "floats";
    case Attribute::Type::kInts:
      return "ints";
    case Attribute::Type::kStrings:
      return "strings";
    case Attribute::Type::kTensors:
      return "tensors";
    case Attribute::Type::kGraphs:
      return "graphs";
    case Attribute::Type::kTypeProto:
      return "type_proto";
    case Attribute::Type::kTypeProtos:
      return "type_protos";
    default:
      return "undefined";
  }
}

const Attribute* Node::attribute(std::string_view n) const {
  for (const auto& a : attributes)
    if (a.name == n) return &a;
  return nullptr;
}

const ValueType* Graph::find_type(const std::string& n) const {
  for (const auto& v : inputs)
    if (v.name == n) return &v.type;
  for (const auto& v : outputs)
    if (v.name == n && v.type.kind != ValueType::Kind::kUnknown) return &v.type;
  if (auto it = value_info.find(n); it != value_info.end()) return &it->second;
  return nullptr;
}

int64_t Model::opset(const std::string& domain) const {
  std::string d = domain == "ai.onnx" ? "" : domain;
  if (auto it = opsets.find(d); it != opsets.end()) return it->second;
  return 0;
}

namespace {

// Names a graph can read without a node producing them: its inputs, initializers, and
// (for a subgraph) everything visible in the enclosing graphs.
bool visible_from_outside(const Graph& g, const std::string& n,
                          const std::unordered_set<std::string>& own) {
  if (own.count(n)) return true;
  for (const Graph* p = g.parent; p; p = p->parent) {
    for (const auto& v : p->inputs)
      if (v.name == n) return true;
    if (p->initializers.count(n)) return true;
    for (const auto& node : p->nodes)
      for (const auto& o : node.outputs)
        if (o == n) return true;
  }
  return false;
}

// Values a node reads, including those its subgraphs read from this graph's scope.
void collect_reads(const Node& node, std::vector<std::string>& out) {
  for (const auto& i : node.inputs)
    if (!i.empty()) out.push_back(i);
  for (const auto& a : node.attributes) {
    std::vector<std::shared_ptr<Graph>> gs = a.graphs;
    if (a.g) gs.push_back(a.g);
    for (const auto& g : gs) {
      std::unordered_set<std::string> local;
      for (const auto& v : g->inputs) local.insert(v.name);
      for (const auto& [k, t] : g->initializers) local.insert(k);
      for (const auto& n : g->nodes)
        for (const auto& o : n.outputs) local.insert(o);
      for (const auto& n : g->nodes) {
        std::vector<std::string> inner;
        collect_reads(n, inner);
        for (auto& r : inner)
          if (!local.count(r)) out.push_back(r);
      }
      for (const auto& o : g->outputs)
        if (!local.count(o.name)) out.push_back(o.name);
    }
  }
}

// Names the nodes of one cycle among the nodes Kahn's algorithm could not sort. Every such
// node waits on at least one other unsorted node, so walking back along those dependencies
// must revisit a node; the walk from that node on is a cycle. Downstream nodes that merely
// wait on the cycle are left out.
std::string describe_cycle(const Graph& graph, const std::vector<std::set<size_t>>& deps,
                           const std::vector<size_t>& pending) {
  size_t start = 0;
  while (pending[start] == 0) ++start;
  std::vector<size_t> path;
  std::unordered_map<size_t, size_t> position;
  size_t cur = start;
  while (!position.count(cur)) {
    position[cur] = path.size();
    path.push_back(cur);
    for (size_t d : deps[cur])
      if (pending[d] > 0) {
        cur = d;
        break;
      }
  }
  // path[position[cur]..] walks against the data flow; reverse it and start at the node
  // that comes first in the file so the message is stable.
  std::vector<size_t> cycle(path.begin() + static_cast<std::ptrdiff_t>(position[cur]), path.end());
  std::reverse(cycle.begin(), cycle.end());
  std::rotate(cycle.begin(), std::min_element(cycle.begin(), cycle.end()), cycle.end());
  std::vector<std::string> names;
  for (size_t i : cycle) names.push_back(fmt::format("'{}'", graph.nodes[i].name));
  names.push_back(names.front());
  return fmt::format("{}", fmt::join(names, " -> "));
}

}  // namespace

void toposort(Graph& graph) {
  const size_t n = graph.nodes.size();
  std::unordered_set<std::string> available;
  for (const auto& v : graph.inputs) available.insert(v.name);
  for (const auto& [k, t] : graph.initializers) available.insert(k);

  std::unordered_map<std::string, size_t> producer;
  for (size_t i = 0; i < n; ++i)
    for (const auto& o : graph.nodes[i].outputs) {
      if (o.empty()) continue;
      auto [it, inserted] = producer.emplace(o, i);
      if (!inserted)
        fail(
            "failed to load node '{}' ({}) with output '{}': node '{}' already produces that "
            "tensor; every tensor of an ONNX graph has exactly one producer",
            graph.nodes[i].name, graph.nodes[i].op_type, o, graph.nodes[it->second].name);
    }

  std::vector<std::vector<size_t>> consumers(n);
  std::vector<std::set<size_t>> deps(n);
  std::vector<size_t> pending(n, 0);
  for (size_t i = 0; i < n; ++i) {
    std::vector<std::string> reads;
    collect_reads(graph.nodes[i], reads);
    for (const auto& r : reads) {
      if (auto it = producer.find(r); it != producer.end()) {
        deps[i].insert(it->second);
      } else if (!visible_from_outside(graph, r, available)) {
        const Node& node = graph.nodes[i];
        fail(
            "failed to load node '{}' ({}) with input '{}': no node, graph input or "
            "initializer produces that tensor",
            node.name, node.op_type, r);
      }
    }
    for (size_t d : deps[i]) {  // a node reading its own output is a cycle of one
      consumers[d].push_back(i);
      ++pending[i];
    }
  }
  for (const auto& o : graph.outputs)
    if (!producer.count(o.name) && !visible_from_outside(graph, o.name, available))
      fail(
          "failed to load output '{}' of graph '{}': no node, graph input or initializer "
          "produces that tensor",
          o.name, graph.name);

  // Kahn's algorithm, always taking the earliest ready node in file order (stable).
  std::set<size_t> ready;
  for (size_t i = 0; i < n; ++i)
    if (pending[i] == 0) ready.insert(i);
  std::vector<size_t> order;
  order.reserve(n);
  while (!ready.empty()) {
    size_t i = *ready.begin();
    ready.erase(ready.begin());
    order.push_back(i);
    for (size_t c : consumers[i])
      if (--pending[c] == 0) ready.insert(c);
  }
  if (order.size() != n)
    fail(
        "failed to sort the nodes of graph '{}': the graph has a cycle {}; an ONNX graph must "
        "be acyclic",
        graph.name, describe_cycle(graph, deps, pending));
  std::vector<Node> sorted;
  sorted.reserve(n);
  for (size_t i : order) sorted.push_back(std::move(graph.nodes[i]));
  graph.nodes = std::move(sorted);
}

}  // namespace parity::ir
