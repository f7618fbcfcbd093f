// The reference interpreter's execution plan.
//
// An Executor prepares every node of a model once: it finds the kernel registered for the
// node's (domain, op type, opset), builds it (typed attributes, checks, precomputation), and
// resolves where each input comes from: nothing (an empty optional input), a constant of this
// or an enclosing graph, a value produced earlier, or, inside a control-flow body, a value of
// an enclosing graph. Bodies get their own plans, prepared once and cached per body.
//
// Nodes whose inputs are all constants (initializers, or values of such nodes) run once, here
// (constant folding): run() hands out their values and the observer still sees them.
//
// run() then executes the nodes in order. A value is released right after its last use
// (a body's reads of enclosing values count as uses by the node that owns the body), unless
// it is a graph output or an extra output asked for, so memory follows the set of live values.
//
//   Executor exec(model);
//   exec.set_observer([](const ir::Node& n, const std::vector<Value>& outs) { ... });
//   TensorMap outputs = exec.run(feed, /*extra_outputs=*/{"conv1_out"});
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "backend/ref/kernel.h"
#include "core/limits.h"
#include "core/tensor.h"
#include "onnx/graph.h"

namespace parity::ref {

struct NamedValue {
  std::string name;
  Value value;
};

// What the last run() kept alive: the most values held at once, and their bytes (a view that
// shares another value's buffer is counted as its own).
struct RunStats {
  size_t peak_live_values = 0;
  size_t peak_live_bytes = 0;
};

// What a run may use. Every tensor the run allocates is checked against `limits` (elements per
// tensor, bytes held at once), Loop nodes against its iteration limit and every node against
// its wall time; the defaults are the process-wide ones (core/limits.h), which the command
// line sets.
struct ExecutorOptions {
  ResourceLimits limits = default_limits();
};

struct ExecutionPlan;  // the prepared nodes of one graph (defined in executor.cc)
struct PreparedStep;   // one prepared node (defined in executor.cc)

class Executor {
 public:
  // Called after each node (also inside bodies) with the values it produced, before any of
  // them can be released: the hook for comparing every tensor as it is produced.
  using Observer = std::function<void(const ir::Node& node, const std::vector<Value>& outputs)>;

  // Prepares every node of the model's graph and of its bodies. Throws Error for an op with
  // no registered kernel, and for whatever a kernel finds wrong with its node.
  explicit Executor(std::shared_ptr<const ir::Model> model, ExecutorOptions options = {});
  ~Executor();
  Executor(const Executor&) = delete;
  Executor& operator=(const Executor&) = delete;

  const ir::Model& model() const { return *model_; }
  void set_observer(Observer observer) { observer_ = std::move(observer); }

  // Runs the graph on `feed` (every graph input by name). Returns the graph outputs in the
  // model's order, followed by `extra_outputs` (names of any values of the top-level graph).
  std::vector<NamedValue> run(const std::vector<NamedValue>& feed,
                              const std::vector<std::string>& extra_outputs = {});
  // The same for tensors; an output that is a sequence or an empty optional is an error.
  TensorMap run(const TensorMap& feed, const std::vector<std::string>& extra_outputs = {});

  // Runs a control-flow body for the node `owner`, whose values are in `frame` (what
  // RunContext::run_subgraph calls). Returns the body's outputs in order.
  Outputs run_subgraph(const ir::Node& owner, const ir::Graph& body, const Inputs& inputs,
                       Frame* frame);

  const RunStats& last_run_stats() const { return stats_; }
  const ExecutorOptions& options() const { return options_; }
  // The nodes of the model (bodies included) computed once at preparation (constant folding).
  size_t folded_nodes() const { return folded_nodes_; }

 private:
  const ExecutionPlan& prepare(const ir::Graph& graph, const ExecutionPlan* parent);
  void prepare_step(ExecutionPlan& plan, const ir::Node& node);
  void fold(ExecutionPlan& plan, PreparedStep& step);
  void execute(const ExecutionPlan& plan, Frame& frame, const std::vector<bool>* keep);
  void store(Frame& frame, int slot, Value value);
  void release(Frame& frame, int slot);

  std::shared_ptr<const ir::Model> model_;
  ExecutorOptions options_;
  std::unordered_map<const ir::Graph*, std::unique_ptr<ExecutionPlan>> plans_;
  const ExecutionPlan* main_ = nullptr;
  Observer observer_;
  RunStats stats_;
  size_t live_values_ = 0;
  size_t live_bytes_ = 0;
  size_t folded_nodes_ = 0;
};

// "failed to run node '<name>' (<op>): ", the start of every error raised while a node runs.
std::string run_error_prefix(const ir::Node& node);

}  // namespace parity::ref
