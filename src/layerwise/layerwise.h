// Layer-wise comparison in bounded memory: every marked tensor of two backends is compared and
// released, the first divergence is found, and (optionally) each node's error is split into
// what it adds and what it inherits.
//
// The reference side streams: its interpreter calls on_node() after every node with the values
// the node produced (Executor's observer). The other side is fetched in batches through a
// BatchFetcher that computes the model with only that batch's tensors marked (one ONNX Runtime
// run per batch, or a look-up into saved results). A batch is gathered while the reference runs:
// reference tensors are held until their batch's held bytes plus the bytes to fetch reach half
// the budget; then the batch is fetched, compared, and both sides are released. So the extra
// memory is at most the budget (plus one tensor when a single tensor exceeds it), whatever the
// number of marked tensors, with a single reference run.
//
//   LayerwiseComparison lw(model.graph, marked, options, fetch, rerun);
//   executor.set_observer(
//       [&](const ir::Node& n, const std::vector<Value>& v) { lw.on_node(n, v); });
//   executor.run(feed);
//   LayerwiseResult result = lw.finish();
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "comparator/tensor_error.h"
#include "core/tensor.h"
#include "core/value.h"
#include "onnx/graph.h"

namespace parity {

struct LayerwiseOptions {
  TensorCompareOptions compare;
  // Bytes the held reference tensors and the fetched batch may take together.
  size_t budget_bytes = size_t{1} << 30;
  // Re-run each node on the reference with the other backend's inputs (needs a NodeRunner).
  bool local_error = false;
  // True when the other backend is the first runner: it is out0, the reference is out1 (the
  // denominator of the relative error), as Polygraphy orders a comparison.
  bool other_is_first = false;
  std::string reference_name = "reference", other_name = "other";
};

// Receives the tensors of a layer-wise run as they are compared, before they are released: what
// --save-outputs writes every tensor of a model with, without holding them.
class LayerwiseSink {
 public:
  virtual ~LayerwiseSink() = default;
  // The names of the two sides' runners, once, before the first iteration.
  virtual void runners(const std::string& /*reference*/, const std::string& /*other*/) {}
  virtual void begin_iteration(size_t /*iteration*/) {}
  // `reference`: the streaming side's value; else the other side's.
  virtual void tensor(bool reference, const std::string& name, const Tensor& value) = 0;
  virtual void end_iteration(size_t /*iteration*/) {}
};

// Computes the model on the other backend with exactly `names` marked; returns their values.
using BatchFetcher = std::function<TensorMap(const std::vector<std::string>& names)>;
// Runs one node on the reference backend with these input values (by name; constants are the
// runner's business). Returns one tensor per node output ("" outputs get an undefined tensor).
using NodeRunner =
    std::function<std::vector<Tensor>(const ir::Node& node, const TensorMap& inputs)>;

enum class NodeStatus {
  kPassed,     // every compared output passed
  kDiverges,   // fails and adds error of its own (local error fails, or all inputs pass)
  kInherited,  // fails only because its inputs already differ (its local error passes)
};
std::string_view node_status_name(NodeStatus s);

struct NodeResult {
  std::string name, op_type;
  size_t index = 0;             // position among the graph's nodes (topological)
  std::vector<size_t> outputs;  // indices into LayerwiseResult::tensors
  std::vector<size_t> inputs;   // compared inputs: indices into LayerwiseResult::tensors
  NodeStatus status = NodeStatus::kPassed;
  double ratio = 0;  // the worst output's error against its threshold
  // --local-error: the node's outputs recomputed by the reference from the other backend's
  // inputs, compared with the other backend's outputs (what the node itself adds).
  std::optional<double> local_ratio;
  std::optional<bool> local_passed;
  // The local error in ulps of the outputs' floating type (the largest over outputs), and
  // that type: how far the other backend's result is from the reference's, which is correctly
  // rounded (computed in double, rounded once), for the same inputs.
  std::optional<double> local_max_ulps;
  DataType local_dtype = DataType::kUndefined;
  std::string local_note;  // why there is no local error
  // Its inputs pass and its outputs fail, yet its local error passes: it rounded a difference it
  // inherited past the tolerance (a Cast to float16 turning 4e-7 into one float16 ulp). Never
  // the first divergence.
  bool rounds_inherited = false;
  bool passed() const { return status == NodeStatus::kPassed; }
};

struct LayerwiseResult {
  std::vector<TensorErrorStats> tensors;  // compared tensors, in the order they were produced
  std::vector<NodeResult> nodes;          // nodes with a compared output, topological order
  size_t total_nodes = 0;                 // nodes of the graph
  std::vector<std::string> missing;       // marked tensors the other side did not provide
  // Index into nodes: the first node (in topological order) that diverges: its outputs fail and
  // its own error does (its local error fails, or without one its inputs all pass).
  std::optional<size_t> first_divergence;
  // Node names from the nearest graph input to the first divergence (both included).
  std::vector<std::string> path;
  std::vector<size_t> top_local;  // indices into nodes, the largest local error first
  size_t batches = 0;
  size_t peak_batch_bytes = 0;  // the most bytes held and fetched at once

  bool passed() const;
};

class LayerwiseComparison {
 public:
  LayerwiseComparison(const ir::Graph& graph, const std::vector<std::string>& marked,
                      LayerwiseOptions options, BatchFetcher fetch, NodeRunner rerun = nullptr);

  // The feed of this run (graph inputs for local error).
  void set_feed(const TensorMap& feed) { feed_ = feed; }
  // Receives every compared tensor of both sides (nullptr: none).
  void set_sink(LayerwiseSink* sink) { sink_ = sink; }
  // Called after each node the reference runs, in order (nodes of control-flow bodies are
  // ignored: only the top-level graph is marked).
  void on_node(const ir::Node& node, const std::vector<Value>& outputs);
  // Compares what is still held, analyses, and returns the result (call once, after the run).
  LayerwiseResult finish();

 private:
  struct Held {
    const ir::Node* node;
    std::vector<std::pair<std::string, Tensor>> outputs;  // marked tensor outputs
  };
  void flush();
  void compare_held(const Held& held, const TensorMap& other);
  void local_error(const Held& held, const TensorMap& other, NodeResult& node);
  void analyse();

  const ir::Graph& graph_;
  LayerwiseOptions options_;
  BatchFetcher fetch_;
  NodeRunner rerun_;
  LayerwiseSink* sink_ = nullptr;
  TensorMap feed_;
  TensorMap constants_;  // outputs of Constant nodes
  std::unordered_set<std::string> marked_;
  std::unordered_map<const ir::Node*, size_t> node_index_;
  std::unordered_set<std::string> graph_inputs_;
  std::unordered_map<std::string, size_t> sizes_;      // bytes of every tensor seen so far
  std::unordered_map<std::string, size_t> tensor_of_;  // name -> index into result_.tensors
  std::vector<Held> held_;
  std::unordered_set<std::string> to_fetch_;
  size_t held_bytes_ = 0, fetch_bytes_ = 0;
  LayerwiseResult result_;
};

// "max-abs=1.2e-07, max-rel=3.4e-06, max-ulps=1, error/tolerance=0.012" (the metrics of
// `metric`; ulps for floating tensors of one type).
std::string format_error_summary(const TensorErrorStats& s, CompareMetric metric);

// "512 B", "64.0 KiB", "1.0 GiB".
std::string format_bytes(size_t bytes);

// Logs the summary: counts, batches, the first divergence with its inputs' and outputs' errors
// and where it sits, the nodes that add the most error, how many only inherit it.
void log_layerwise_summary(const LayerwiseResult& r, const LayerwiseOptions& options);

}  // namespace parity
