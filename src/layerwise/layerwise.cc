#include "layerwise/layerwise.h"

#include <algorithm>
#include <cmath>
#include <deque>

#include "core/logger.h"
#include "core/py_format.h"
#include "layerwise/channel_heat.h"
#include "layerwise/ulps.h"

namespace parity {

std::string_view node_status_name(NodeStatus s) {
  switch (s) {
    case NodeStatus::kPassed:
      return "passed";
    case NodeStatus::kDiverges:
      return "diverges";
    case NodeStatus::kInherited:
      return "inherited";
  }
  return "passed";
}

bool LayerwiseResult::passed() const {
  for (const auto& t : tensors)
    if (t.compared && !t.passed) return false;
  return true;
}

LayerwiseComparison::LayerwiseComparison(const ir::Graph& graph,
                                         const std::vector<std::string>& marked,
                                         LayerwiseOptions options, BatchFetcher fetch,
                                         NodeRunner rerun)
    : graph_(graph),
      options_(std::move(options)),
      fetch_(std::move(fetch)),
      rerun_(std::move(rerun)),
      marked_(marked.begin(), marked.end()) {
  PARITY_ENFORCE(fetch_ != nullptr, "layer-wise comparison needs a batch fetcher");
  if (options_.local_error && !rerun_)
    fail_usage(
        "failed to compute local errors without a node runner: pass a NodeRunner that "
        "runs one node on the reference backend");
  for (size_t i = 0; i < graph.nodes.size(); ++i) node_index_[&graph.nodes[i]] = i;
  for (const auto& in : graph.inputs) graph_inputs_.insert(in.name);
  result_.total_nodes = graph.nodes.size();
}

void LayerwiseComparison::on_node(const ir::Node& node, const std::vector<Value>& outputs) {
  if (!node_index_.count(&node)) return;  // a node of a control-flow body
  // Constants are the same on both sides and cannot be marked: local errors read them here.
  if (node.op_type == "Constant" && node.domain.empty()) {
    for (size_t j = 0; j < outputs.size() && j < node.outputs.size(); ++j)
      if (outputs[j].is_tensor()) constants_.set(node.outputs[j], outputs[j].tensor);
    return;
  }
  Held held{&node, {}};
  size_t held_bytes = 0;
  for (size_t j = 0; j < outputs.size() && j < node.outputs.size(); ++j) {
    const std::string& name = node.outputs[j];
    if (name.empty() || !outputs[j].is_tensor()) continue;
    sizes_[name] = outputs[j].tensor.nbytes();
    if (!marked_.count(name)) continue;
    held.outputs.emplace_back(name, outputs[j].tensor);
    held_bytes += outputs[j].tensor.nbytes();
  }
  if (held.outputs.empty()) return;

  // What this node needs from the other side: its outputs, and for local error its inputs
  // produced by earlier nodes (also without --local-error when a node runner is given: a node
  // whose inputs pass and outputs fail gets its local error, to tell rounding from divergence).
  std::vector<std::string> wanted;
  for (const auto& [name, t] : held.outputs) wanted.push_back(name);
  if (rerun_)
    for (const auto& in : node.inputs)
      if (!in.empty() && sizes_.count(in) && !graph_inputs_.count(in) && !constants_.contains(in))
        wanted.push_back(in);
  // The names not on order yet, and their bytes.
  std::vector<std::string> new_names;
  auto plan = [&] {
    new_names.clear();
    size_t bytes = 0;
    for (const auto& name : wanted)
      if (!to_fetch_.count(name) &&
          std::find(new_names.begin(), new_names.end(), name) == new_names.end()) {
        new_names.push_back(name);
        bytes += sizes_[name];
      }
    return bytes;
  };
  size_t fetch_bytes = plan();
  if (!held_.empty() &&
      held_bytes_ + fetch_bytes_ + held_bytes + fetch_bytes > options_.budget_bytes) {
    flush();
    fetch_bytes = plan();
  }
  for (const auto& name : new_names) to_fetch_.insert(name);
  held_bytes_ += held_bytes;
  fetch_bytes_ += fetch_bytes;
  held_.push_back(std::move(held));
  if (held_bytes_ + fetch_bytes_ >= options_.budget_bytes) flush();
}

void LayerwiseComparison::flush() {
  if (held_.empty()) return;
  // Fetch in the order the reference produced them (deterministic batches).
  std::vector<std::string> names;
  std::unordered_set<std::string> listed;
  auto add = [&](const std::string& n) {
    if (to_fetch_.count(n) && listed.insert(n).second) names.push_back(n);
  };
  for (const Held& h : held_) {
    for (const auto& in : h.node->inputs) add(in);
    for (const auto& [name, t] : h.outputs) add(name);
  }
  logger().verbose("Layer-wise | batch {}: fetching {} tensor(s), {}, from {}", result_.batches + 1,
                   names.size(), format_bytes(fetch_bytes_), options_.other_name);
  {
    const TensorMap other = fetch_(names);
    size_t other_bytes = 0;
    for (const auto& [name, t] : other) other_bytes += t.nbytes();
    result_.peak_batch_bytes = std::max(result_.peak_batch_bytes, held_bytes_ + other_bytes);
    for (const Held& h : held_) compare_held(h, other);
  }  // the other side's batch is released here, the held reference tensors just below
  ++result_.batches;
  held_.clear();
  to_fetch_.clear();
  held_bytes_ = fetch_bytes_ = 0;
}

void LayerwiseComparison::compare_held(const Held& held, const TensorMap& other) {
  const ir::Node& node = *held.node;
  NodeResult nr;
  nr.name = node.name;
  nr.op_type = node.op_type;
  nr.index = node_index_.at(&node);
  for (const auto& in : node.inputs)
    if (auto it = tensor_of_.find(in); it != tensor_of_.end()) nr.inputs.push_back(it->second);
  for (const auto& [name, ref] : held.outputs) {
    const Tensor* theirs = other.find(name);
    if (!theirs) {
      result_.missing.push_back(name);
      continue;
    }
    if (sink_) {
      sink_->tensor(true, name, ref);
      sink_->tensor(false, name, *theirs);
    }
    const Tensor& out0 = options_.other_is_first ? *theirs : ref;
    const Tensor& out1 = options_.other_is_first ? ref : *theirs;
    TensorErrorStats s = compare_tensors(name, out0, out1, options_.compare);
    if (options_.compare.with_profile && s.compared) add_channel_heatmaps(out0, out1, s.profile);
    if (s.compared && s.max_abs == 0 && s.nan_count == 0 && significand_bits(out0.dtype()) > 0 &&
        out0.dtype() == out1.dtype()) {
      s.max_ulps = 0;  // equal everywhere (±0 alike): no pass over the elements needed
    } else if (s.compared) {
      if (std::optional<UlpStats> u = ulp_stats(out0, out1)) {
        s.max_ulps = u->max_ulps;
        s.max_magnitude = u->max_magnitude;
      }
    }
    const std::string line = fmt::format("Comparing Output: '{}' (dtype={}, shape={}) | {} | {}",
                                         name, dtype_name(s.dtype0), shape_str(s.shape0),
                                         s.passed || !s.compared ? "PASSED" : "FAILED",
                                         format_error_summary(s, options_.compare.metric));
    if (s.passed || !s.compared)
      logger().info("{}", line);
    else
      logger().error("{}", line);
    nr.ratio = std::max(nr.ratio, std::isnan(s.ratio) ? INFINITY : s.ratio);
    if (s.compared && !s.passed) nr.status = NodeStatus::kDiverges;  // refined by analyse()
    tensor_of_[name] = result_.tensors.size();
    nr.outputs.push_back(result_.tensors.size());
    result_.tensors.push_back(std::move(s));
  }
  if (nr.outputs.empty()) return;
  // A candidate for the first divergence (outputs fail, inputs pass) always gets its local
  // error when it can: that is what tells a node's own error from rounding an inherited one.
  auto failing = [&](size_t t) {
    return result_.tensors[t].compared && !result_.tensors[t].passed;
  };
  const bool candidate = std::any_of(nr.outputs.begin(), nr.outputs.end(), failing) &&
                         std::none_of(nr.inputs.begin(), nr.inputs.end(), failing);
  if (options_.local_error || (candidate && rerun_)) local_error(held, other, nr);
  result_.nodes.push_back(std::move(nr));
}

void LayerwiseComparison::local_error(const Held& held, const TensorMap& other, NodeResult& nr) {
  const ir::Node& node = *held.node;
  for (const auto& a : node.attributes)
    if (a.type == ir::Attribute::Type::kGraph || a.type == ir::Attribute::Type::kGraphs) {
      nr.local_note = "the node has a subgraph";
      return;
    }
  TensorMap inputs;
  for (const auto& in : node.inputs) {
    if (in.empty() || graph_.initializers.count(in) || inputs.contains(in)) continue;
    const Tensor* value = graph_inputs_.count(in)   ? feed_.find(in)
                          : constants_.contains(in) ? constants_.find(in)
                                                    : other.find(in);
    if (!value) {
      nr.local_note = fmt::format("input '{}' is not available from {}", in,
                                  graph_inputs_.count(in) ? "the feed" : options_.other_name);
      return;
    }
    inputs.set(in, *value);
  }
  std::vector<Tensor> recomputed;
  try {
    recomputed = rerun_(node, inputs);
  } catch (const Error& e) {
    nr.local_note = e.what();
    return;
  }
  TensorCompareOptions o = options_.compare;
  o.with_profile = false;
  bool passed = true;
  double ratio = 0;
  bool any = false;
  for (size_t j = 0; j < node.outputs.size() && j < recomputed.size(); ++j) {
    const std::string& name = node.outputs[j];
    const Tensor* theirs = other.find(name);
    if (name.empty() || !theirs || !recomputed[j].defined() || !marked_.count(name)) continue;
    const TensorErrorStats s = options_.other_is_first
                                   ? compare_tensors(name, *theirs, recomputed[j], o)
                                   : compare_tensors(name, recomputed[j], *theirs, o);
    if (!s.compared) continue;
    if (std::optional<UlpStats> u = ulp_stats(*theirs, recomputed[j])) {
      if (!nr.local_max_ulps || u->max_ulps > *nr.local_max_ulps) {
        nr.local_max_ulps = u->max_ulps;
        nr.local_dtype = theirs->dtype();
      }
    }
    any = true;
    passed = passed && s.passed;
    ratio = std::max(ratio, std::isnan(s.ratio) ? INFINITY : s.ratio);
  }
  if (!any) {
    nr.local_note = "no comparable output";
    return;
  }
  nr.local_passed = passed;
  nr.local_ratio = ratio;
}

LayerwiseResult LayerwiseComparison::finish() {
  flush();
  analyse();
  return std::move(result_);
}

void LayerwiseComparison::analyse() {
  auto tensor_passed = [&](size_t t) {
    return !result_.tensors[t].compared || result_.tensors[t].passed;
  };
  for (size_t i = 0; i < result_.nodes.size(); ++i) {
    NodeResult& n = result_.nodes[i];
    const bool outputs_pass = std::all_of(n.outputs.begin(), n.outputs.end(), tensor_passed);
    const bool inputs_pass = std::all_of(n.inputs.begin(), n.inputs.end(), tensor_passed);
    // The local error, when there is one, decides: a node whose own error is within tolerance
    // only inherits, even when its inputs pass (it rounded their difference past the tolerance).
    if (outputs_pass)
      n.status = NodeStatus::kPassed;
    else if (n.local_passed)
      n.status = *n.local_passed ? NodeStatus::kInherited : NodeStatus::kDiverges;
    else
      n.status = inputs_pass ? NodeStatus::kDiverges : NodeStatus::kInherited;
    n.rounds_inherited = !outputs_pass && inputs_pass && n.local_passed.value_or(false);
    if (n.status == NodeStatus::kDiverges && !result_.first_divergence)
      result_.first_divergence = i;
  }

  for (size_t i = 0; i < result_.nodes.size(); ++i)
    if (result_.nodes[i].local_ratio) result_.top_local.push_back(i);
  std::stable_sort(result_.top_local.begin(), result_.top_local.end(), [&](size_t a, size_t b) {
    return *result_.nodes[a].local_ratio > *result_.nodes[b].local_ratio;
  });

  if (!result_.first_divergence) return;
  // The shortest chain of producers from a graph input to the first divergence.
  const size_t target = result_.nodes[*result_.first_divergence].index;
  std::unordered_map<std::string, size_t> producer;
  for (size_t i = 0; i < graph_.nodes.size(); ++i)
    for (const auto& out : graph_.nodes[i].outputs) producer[out] = i;
  std::unordered_map<size_t, size_t> next;  // node -> the node it feeds on the way to target
  std::deque<size_t> queue{target};
  next[target] = target;
  while (!queue.empty()) {
    const size_t n = queue.front();
    queue.pop_front();
    for (const auto& in : graph_.nodes[n].inputs) {
      if (graph_inputs_.count(in)) {
        result_.path.push_back(in);
        for (size_t k = n;; k = next[k]) {
          result_.path.push_back(graph_.nodes[k].name);
          if (k == target) break;
        }
        return;
      }
      auto p = producer.find(in);
      if (p == producer.end() || next.count(p->second)) continue;
      next[p->second] = n;
      queue.push_back(p->second);
    }
  }
}

}  // namespace parity
