#include "surgeon/graph.h"

#include <algorithm>

#include <fmt/format.h>

#include "core/error.h"

namespace parity::surgeon {

namespace {

// The graphs held by a node's attributes (If branches, Loop and Scan bodies).
std::vector<const ::onnx::GraphProto*> bodies(const ::onnx::NodeProto& node) {
  std::vector<const ::onnx::GraphProto*> out;
  for (const auto& a : node.attribute()) {
    if (a.has_g()) out.push_back(&a.g());
    for (const auto& g : a.graphs()) out.push_back(&g);
  }
  return out;
}

}  // namespace

std::set<std::string> outer_reads(const ::onnx::GraphProto& body) {
  std::set<std::string> defined, reads;
  for (const auto& in : body.input()) defined.insert(in.name());
  for (const auto& t : body.initializer()) defined.insert(t.name());
  for (const auto& s : body.sparse_initializer()) defined.insert(s.values().name());
  for (const auto& node : body.node())
    for (const auto& out : node.output()) defined.insert(out);
  auto read = [&](const std::string& name) {
    if (!name.empty() && !defined.count(name)) reads.insert(name);
  };
  for (const auto& node : body.node()) {
    for (const auto& in : node.input()) read(in);
    for (const auto* inner : bodies(node))
      for (const auto& name : outer_reads(*inner)) read(name);
  }
  for (const auto& out : body.output()) read(out.name());
  return reads;
}

GraphIndex::GraphIndex(const ::onnx::GraphProto& graph) {
  for (const auto& in : graph.input()) {
    inputs_.insert(in.name());
    names_.insert(in.name());
  }
  for (const auto& t : graph.initializer()) {
    initializers_.insert(t.name());
    names_.insert(t.name());
  }
  for (const auto& s : graph.sparse_initializer()) {
    initializers_.insert(s.values().name());
    names_.insert(s.values().name());
  }
  reads_.resize(graph.node_size());
  for (int i = 0; i < graph.node_size(); ++i) {
    const auto& node = graph.node(i);
    std::vector<std::string>& reads = reads_[i];
    for (const auto& in : node.input())
      if (!in.empty() && std::find(reads.begin(), reads.end(), in) == reads.end())
        reads.push_back(in);
    for (const auto* body : bodies(node))
      for (const auto& name : outer_reads(*body))
        if (std::find(reads.begin(), reads.end(), name) == reads.end()) reads.push_back(name);
    for (const auto& name : reads) {
      consumers_[name].push_back(i);
      names_.insert(name);
    }
    for (const auto& out : node.output()) {
      if (out.empty()) continue;
      producer_.emplace(out, i);
      names_.insert(out);
    }
  }
}

std::optional<int> GraphIndex::producer(const std::string& name) const {
  auto it = producer_.find(name);
  if (it == producer_.end()) return std::nullopt;
  return it->second;
}

const std::vector<int>& GraphIndex::consumers(const std::string& name) const {
  static const std::vector<int> none;
  auto it = consumers_.find(name);
  return it == consumers_.end() ? none : it->second;
}

std::vector<std::string> GraphIndex::tensor_names() const {
  return std::vector<std::string>(names_.begin(), names_.end());
}

std::string node_label(const ::onnx::GraphProto& graph, int node) {
  const auto& n = graph.node(node);
  // An unnamed node is called what Parity's loader calls it: "<op_type>_<index>".
  if (n.name().empty()) return fmt::format("'{}_{}' ({})", n.op_type(), node, n.op_type());
  return fmt::format("'{}' ({})", n.name(), n.op_type());
}

const ::onnx::TypeProto* find_type(const ::onnx::GraphProto& graph, const std::string& name) {
  for (const auto& v : graph.input())
    if (v.name() == name && v.has_type()) return &v.type();
  for (const auto& v : graph.output())
    if (v.name() == name && v.has_type()) return &v.type();
  for (const auto& v : graph.value_info())
    if (v.name() == name && v.has_type()) return &v.type();
  return nullptr;
}

const ::onnx::TensorProto* find_initializer(const ::onnx::GraphProto& graph,
                                            const std::string& name) {
  for (const auto& t : graph.initializer())
    if (t.name() == name) return &t;
  return nullptr;
}

size_t cleanup(::onnx::GraphProto& graph, const CleanupOptions& options) {
  const GraphIndex index(graph);
  std::vector<bool> keep(graph.node_size(), false);
  std::set<std::string> used;
  std::vector<std::string> pending;
  for (const auto& out : graph.output()) pending.push_back(out.name());
  while (!pending.empty()) {
    const std::string name = pending.back();
    pending.pop_back();
    if (!used.insert(name).second) continue;
    if (auto p = index.producer(name); p && !keep[*p]) {
      keep[*p] = true;
      for (const auto& read : index.reads(*p)) pending.push_back(read);
    }
  }
  // The names still defined or read once the dead nodes are gone.
  std::set<std::string> live = used;
  ::google::protobuf::RepeatedPtrField<::onnx::NodeProto> nodes;
  size_t removed = 0;
  for (int i = 0; i < graph.node_size(); ++i) {
    if (!keep[i]) {
      ++removed;
      continue;
    }
    for (const auto& out : graph.node(i).output()) live.insert(out);
    nodes.Add()->Swap(graph.mutable_node(i));
  }
  graph.mutable_node()->Swap(&nodes);

  auto* inits = graph.mutable_initializer();
  inits->erase(std::remove_if(inits->begin(), inits->end(),
                              [&](const ::onnx::TensorProto& t) { return !used.count(t.name()); }),
               inits->end());
  auto* sparse = graph.mutable_sparse_initializer();
  sparse->erase(std::remove_if(sparse->begin(), sparse->end(),
                               [&](const ::onnx::SparseTensorProto& t) {
                                 return !used.count(t.values().name());
                               }),
                sparse->end());
  if (options.remove_unused_graph_inputs) {
    auto* inputs = graph.mutable_input();
    inputs->erase(
        std::remove_if(inputs->begin(), inputs->end(),
                       [&](const ::onnx::ValueInfoProto& v) { return !used.count(v.name()); }),
        inputs->end());
  }
  auto* info = graph.mutable_value_info();
  info->erase(
      std::remove_if(info->begin(), info->end(),
                     [&](const ::onnx::ValueInfoProto& v) { return !live.count(v.name()); }),
      info->end());
  return removed;
}

void toposort(::onnx::GraphProto& graph) {
  const GraphIndex index(graph);
  const int n = graph.node_size();
  // A node waits for the nodes of this graph that produce what it reads.
  std::vector<int> waiting(n, 0);
  std::vector<std::vector<int>> dependents(n);
  for (int i = 0; i < n; ++i) {
    std::set<int> producers;
    for (const auto& name : index.reads(i))
      if (auto p = index.producer(name)) producers.insert(*p);  // itself: a cycle of one
    for (int p : producers) {
      dependents[p].push_back(i);
      ++waiting[i];
    }
  }
  // Always take the ready node that comes first in the file, so that a sorted graph is
  // unchanged.
  std::set<int> ready;
  for (int i = 0; i < n; ++i)
    if (waiting[i] == 0) ready.insert(i);
  std::vector<int> order;
  while (!ready.empty()) {
    const int i = *ready.begin();
    ready.erase(ready.begin());
    order.push_back(i);
    for (int d : dependents[i])
      if (--waiting[d] == 0) ready.insert(d);
  }
  if (static_cast<int>(order.size()) != n) {
    // Every node left waits for another node left, so walking back from any of them through
    // waiting producers must come round: that loop is the cycle to name.
    std::vector<std::vector<int>> producers(n);
    for (int p = 0; p < n; ++p)
      for (int d : dependents[p]) producers[d].push_back(p);
    int at = 0;
    while (waiting[at] == 0) ++at;
    std::vector<int> path;
    std::map<int, size_t> position;
    while (!position.count(at)) {
      position[at] = path.size();
      path.push_back(at);
      for (int p : producers[at])
        if (waiting[p] > 0) {
          at = p;
          break;
        }
    }
    // In the order values flow, starting from the node that comes first in the file.
    std::vector<int> loop(path.rbegin(), path.rend() - static_cast<long>(position[at]));
    std::rotate(loop.begin(), std::min_element(loop.begin(), loop.end()), loop.end());
    std::vector<std::string> cycle;
    for (int i : loop) cycle.push_back(node_label(graph, i));
    fail(
        "failed to sort graph '{}' topologically: nodes [{}] form a cycle (each reads what the "
        "one before it makes); an ONNX graph must be acyclic",
        graph.name(), fmt::join(cycle, " -> "));
  }
  ::google::protobuf::RepeatedPtrField<::onnx::NodeProto> sorted;
  for (int i : order) sorted.Add()->Swap(graph.mutable_node(i));
  graph.mutable_node()->Swap(&sorted);
}

std::set<std::string> constant_tensors(const ::onnx::GraphProto& graph) {
  std::set<std::string> inputs;
  for (const auto& in : graph.input()) inputs.insert(in.name());
  std::set<std::string> out;
  for (const auto& t : graph.initializer())
    if (!inputs.count(t.name())) out.insert(t.name());
  for (const auto& node : graph.node())
    if (node.op_type() == "Constant" && (node.domain().empty() || node.domain() == "ai.onnx"))
      for (const auto& o : node.output()) out.insert(o);
  return out;
}

}  // namespace parity::surgeon
