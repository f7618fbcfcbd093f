// Reference kernels: how an op is written and registered.
//
// A kernel is a class constructed once per node from an OpContext (parse typed attributes,
// check what can be checked before running) and then run any number of times:
//
//   class Relu : public Kernel {
//    public:
//     explicit Relu(const OpContext& ctx) {}
//     Outputs run(const Inputs& in, RunContext& ctx) override { ... }
//   };
//   PARITY_REF_OP("", "Relu", 6, kOpsetMax, Relu);
//
// The registration line sits beside the kernel, in the file of its op family (ops/*.cc);
// there is no central table. Versions are inclusive: a node of opset N uses the kernel whose
// [since, until] range contains N.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "core/error.h"
#include "core/value.h"
#include "onnx/graph.h"

namespace parity::ref {

constexpr int64_t kOpsetMax = 1000;

using Inputs = std::vector<Value>;   // one per node input; kNone for an absent optional one
using Outputs = std::vector<Value>;  // one per node output

// What a kernel can learn about its node when it is prepared.
class OpContext {
 public:
  OpContext(const ir::Node& node, int64_t opset, const ir::Graph& graph);

  const ir::Node& node() const { return node_; }
  int64_t opset() const { return opset_; }  // the model's opset for the node's domain
  const ir::Graph& graph() const { return graph_; }

  size_t num_inputs() const { return node_.inputs.size(); }
  size_t num_outputs() const { return node_.outputs.size(); }
  bool has_input(size_t i) const { return i < node_.inputs.size() && !node_.inputs[i].empty(); }
  // The value of input i when it is an initializer (or a constant) of this or an enclosing graph,
  // or a value of this graph that the executor computed when it prepared the model.
  const Tensor* constant_input(size_t i) const;
  // The values of this graph computed at preparation (the executor's constant folding).
  void set_folded(const std::unordered_map<std::string, Tensor>* folded) { folded_ = folded; }
  // The declared type of input/output i, when the model says.
  const ir::ValueType* input_type(size_t i) const;
  const ir::ValueType* output_type(size_t i) const;

  // Typed attributes. The forms without a default throw when the attribute is missing;
  // all throw when it has another type.
  bool has_attr(std::string_view name) const;
  int64_t attr_int(std::string_view name) const;
  int64_t attr_int(std::string_view name, int64_t dflt) const;
  float attr_float(std::string_view name) const;
  float attr_float(std::string_view name, float dflt) const;
  std::string attr_string(std::string_view name) const;
  std::string attr_string(std::string_view name, std::string dflt) const;
  std::vector<int64_t> attr_ints(std::string_view name) const;
  std::vector<int64_t> attr_ints(std::string_view name, std::vector<int64_t> dflt) const;
  std::vector<float> attr_floats(std::string_view name) const;
  std::vector<float> attr_floats(std::string_view name, std::vector<float> dflt) const;
  std::vector<std::string> attr_strings(std::string_view name) const;
  std::vector<std::string> attr_strings(std::string_view name, std::vector<std::string> dflt) const;
  Tensor attr_tensor(std::string_view name) const;
  std::shared_ptr<ir::Graph> attr_graph(std::string_view name) const;
  const ir::Attribute* attr(std::string_view name) const { return node_.attribute(name); }

  // Throws Error "failed to prepare node '<name>' (<op>): <message>".
  template <typename... A>
  [[noreturn]] void fail(fmt::format_string<A...> f, A&&... a) const {
    fail_message(fmt::format(f, std::forward<A>(a)...));
  }
  [[noreturn]] void fail_message(const std::string& message) const;

 private:
  const ir::Attribute& require_attr(std::string_view name, ir::Attribute::Type type) const;
  const ir::Node& node_;
  int64_t opset_;
  const ir::Graph& graph_;
  // Tensors made from a Constant node's value_float/value_ints/... attributes.
  mutable std::vector<std::shared_ptr<Tensor>> owned_constants_;
  const std::unordered_map<std::string, Tensor>* folded_ = nullptr;
};

class Executor;
class Frame;  // the executor's values of the graph being run (defined in executor.h)

// What a kernel has while running: its node (for messages) and a way to run subgraphs.
class RunContext {
 public:
  RunContext(const ir::Node& node, Executor* executor) : node_(node), executor_(executor) {}
  // `frame` holds the values the node can see, so that a body it runs can read them.
  RunContext(const ir::Node& node, Executor* executor, Frame* frame)
      : node_(node), executor_(executor), frame_(frame) {}
  const ir::Node& node() const { return node_; }

  // Runs a control-flow body with these inputs (in the body's input order); the body can read
  // every value visible at this node. Returns the body's outputs in order.
  Outputs run_subgraph(const ir::Graph& body, const Inputs& inputs);

  // Throws Error "failed to run node '<name>' (<op>): <message>".
  template <typename... A>
  [[noreturn]] void fail(fmt::format_string<A...> f, A&&... a) const {
    fail_message(fmt::format(f, std::forward<A>(a)...));
  }
  [[noreturn]] void fail_message(const std::string& message) const;

 private:
  const ir::Node& node_;
  Executor* executor_;
  Frame* frame_ = nullptr;
};

class Kernel {
 public:
  virtual ~Kernel() = default;
  virtual Outputs run(const Inputs& inputs, RunContext& ctx) = 0;
};

using KernelFactory = std::function<std::unique_ptr<Kernel>(const OpContext&)>;

// Adds a kernel to the global registry; used through PARITY_REF_OP at namespace scope.
struct KernelRegistration {
  KernelRegistration(const char* domain, const char* op_type, int64_t since, int64_t until,
                     KernelFactory factory);
};

#define PARITY_REF_CONCAT_INNER(a, b) a##b
#define PARITY_REF_CONCAT(a, b) PARITY_REF_CONCAT_INNER(a, b)
#define PARITY_REF_OP(domain, op_type, since, until, Class)                                   \
  static const ::parity::ref::KernelRegistration PARITY_REF_CONCAT(kRegistration_, __LINE__)( \
      domain, op_type, since, until,                                                          \
      [](const ::parity::ref::OpContext& ctx) -> std::unique_ptr<::parity::ref::Kernel> {     \
        return std::make_unique<Class>(ctx);                                                  \
      })

}  // namespace parity::ref
