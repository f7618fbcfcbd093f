#include "backend/ref/kernel.h"

#include "backend/ref/executor.h"

namespace parity::ref {

namespace {

// The tensor a Constant node holds, in whichever attribute form it was written.
std::shared_ptr<Tensor> constant_node_value(const ir::Node& node) {
  for (const auto& a : node.attributes) {
    if (a.name == "value" && a.type == ir::Attribute::Type::kTensor)
      return std::make_shared<Tensor>(a.t);
    if (a.name == "value_float" && a.type == ir::Attribute::Type::kFloat)
      return std::make_shared<Tensor>(Tensor::scalar<float>(a.f));
    if (a.name == "value_floats" && a.type == ir::Attribute::Type::kFloats)
      return std::make_shared<Tensor>(
          Tensor::from_vector<float>({static_cast<int64_t>(a.floats.size())}, a.floats));
    if (a.name == "value_int" && a.type == ir::Attribute::Type::kInt)
      return std::make_shared<Tensor>(Tensor::scalar<int64_t>(a.i));
    if (a.name == "value_ints" && a.type == ir::Attribute::Type::kInts)
      return std::make_shared<Tensor>(
          Tensor::from_vector<int64_t>({static_cast<int64_t>(a.ints.size())}, a.ints));
    if (a.name == "value_string" && a.type == ir::Attribute::Type::kString)
      return std::make_shared<Tensor>(Tensor::scalar<std::string>(a.s));
    if (a.name == "value_strings" && a.type == ir::Attribute::Type::kStrings)
      return std::make_shared<Tensor>(
          Tensor::from_vector<std::string>({static_cast<int64_t>(a.strings.size())}, a.strings));
  }
  return nullptr;
}

}  // namespace

OpContext::OpContext(const ir::Node& node, int64_t opset, const ir::Graph& graph)
    : node_(node), opset_(opset), graph_(graph) {}

const Tensor* OpContext::constant_input(size_t i) const {
  if (!has_input(i)) return nullptr;
  const std::string& name = node_.inputs[i];
  if (folded_)
    if (auto it = folded_->find(name); it != folded_->end()) return &it->second;
  for (const ir::Graph* g = &graph_; g; g = g->parent) {
    // A name produced by a node of this graph hides the enclosing graphs' values.
    for (const auto& n : g->nodes) {
      for (const auto& out : n.outputs) {
        if (out != name) continue;
        if (n.op_type != "Constant" || !n.domain.empty()) return nullptr;
        auto t = constant_node_value(n);
        if (!t) return nullptr;
        owned_constants_.push_back(t);
        return t.get();
      }
    }
    if (auto it = g->initializers.find(name); it != g->initializers.end()) return &it->second;
    for (const auto& in : g->inputs)
      if (in.name == name) return nullptr;
  }
  return nullptr;
}

const ir::ValueType* OpContext::input_type(size_t i) const {
  if (!has_input(i)) return nullptr;
  for (const ir::Graph* g = &graph_; g; g = g->parent)
    if (const ir::ValueType* t = g->find_type(node_.inputs[i])) return t;
  return nullptr;
}

const ir::ValueType* OpContext::output_type(size_t i) const {
  if (i >= node_.outputs.size() || node_.outputs[i].empty()) return nullptr;
  return graph_.find_type(node_.outputs[i]);
}

bool OpContext::has_attr(std::string_view name) const { return node_.attribute(name) != nullptr; }

const ir::Attribute& OpContext::require_attr(std::string_view name,
                                             ir::Attribute::Type type) const {
  const ir::Attribute* a = node_.attribute(name);
  if (!a) fail("attribute '{}' is required but missing", name);
  if (a->type != type)
    fail("attribute '{}' has type {}; it must be of type {}", name, attribute_type_name(a->type),
         attribute_type_name(type));
  return *a;
}

int64_t OpContext::attr_int(std::string_view name) const {
  return require_attr(name, ir::Attribute::Type::kInt).i;
}
int64_t OpContext::attr_int(std::string_view name, int64_t dflt) const {
  return has_attr(name) ? attr_int(name) : dflt;
}
float OpContext::attr_float(std::string_view name) const {
  return require_attr(name, ir::Attribute::Type::kFloat).f;
}
float OpContext::attr_float(std::string_view name, float dflt) const {
  return has_attr(name) ? attr_float(name) : dflt;
}
std::string OpContext::attr_string(std::string_view name) const {
  return require_attr(name, ir::Attribute::Type::kString).s;
}
std::string OpContext::attr_string(std::string_view name, std::string dflt) const {
  return has_attr(name) ? attr_string(name) : dflt;
}
std::vector<int64_t> OpContext::attr_ints(std::string_view name) const {
  return require_attr(name, ir::Attribute::Type::kInts).ints;
}
std::vector<int64_t> OpContext::attr_ints(std::string_view name, std::vector<int64_t> dflt) const {
  return has_attr(name) ? attr_ints(name) : dflt;
}
std::vector<float> OpContext::attr_floats(std::string_view name) const {
  return require_attr(name, ir::Attribute::Type::kFloats).floats;
}
std::vector<float> OpContext::attr_floats(std::string_view name, std::vector<float> dflt) const {
  return has_attr(name) ? attr_floats(name) : dflt;
}
std::vector<std::string> OpContext::attr_strings(std::string_view name) const {
  return require_attr(name, ir::Attribute::Type::kStrings).strings;
}
std::vector<std::string> OpContext::attr_strings(std::string_view name,
                                                 std::vector<std::string> dflt) const {
  return has_attr(name) ? attr_strings(name) : dflt;
}
Tensor OpContext::attr_tensor(std::string_view name) const {
  return require_attr(name, ir::Attribute::Type::kTensor).t;
}
std::shared_ptr<ir::Graph> OpContext::attr_graph(std::string_view name) const {
  return require_attr(name, ir::Attribute::Type::kGraph).g;
}

void OpContext::fail_message(const std::string& message) const {
  throw Error(
      fmt::format("failed to prepare node '{}' ({}): {}", node_.name, node_.op_type, message));
}

Outputs RunContext::run_subgraph(const ir::Graph& body, const Inputs& inputs) {
  PARITY_ENFORCE(executor_ != nullptr, "node '{}' ran a subgraph without an executor", node_.name);
  return executor_->run_subgraph(node_, body, inputs, frame_);
}

void RunContext::fail_message(const std::string& message) const {
  throw Error(fmt::format("{}{}", run_error_prefix(node_), message));
}

}  // namespace parity::ref
