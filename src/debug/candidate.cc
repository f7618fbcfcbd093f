#include "debug/candidate.h"

#include <algorithm>
#include <cstring>
#include <set>
#include <unordered_map>
#include <unordered_set>

#include <onnx/onnx_pb.h>

#include "core/error.h"
#include "core/logger.h"
#include "onnx/model_io.h"
#include "surgeon/extract.h"

namespace parity::debug {

namespace {

bool is_constant_node(const ir::Node& node) {
  return node.op_type == "Constant" && node.domain.empty();
}

// Names a subgraph reads from the graphs around it (an If/Loop/Scan body reading outer values).
void outer_reads(const ir::Graph& g, std::unordered_set<std::string>& defined,
                 std::vector<std::string>& reads) {
  std::unordered_set<std::string> local = defined;
  for (const auto& in : g.inputs) local.insert(in.name);
  for (const auto& [name, t] : g.initializers) local.insert(name);
  for (const ir::Node& n : g.nodes) {
    for (const std::string& in : n.inputs)
      if (!in.empty() && !local.count(in)) reads.push_back(in);
    for (const ir::Attribute& a : n.attributes) {
      if (a.g) outer_reads(*a.g, local, reads);
      for (const auto& sub : a.graphs) outer_reads(*sub, local, reads);
    }
    for (const std::string& out : n.outputs) local.insert(out);
  }
}

// Every value a node reads: its inputs and what its subgraphs read from outside.
std::vector<std::string> node_reads(const ir::Node& node) {
  std::vector<std::string> reads;
  for (const std::string& in : node.inputs)
    if (!in.empty()) reads.push_back(in);
  std::unordered_set<std::string> none;
  for (const ir::Attribute& a : node.attributes) {
    if (a.g) outer_reads(*a.g, none, reads);
    for (const auto& sub : a.graphs) outer_reads(*sub, none, reads);
  }
  return reads;
}

std::string gs_shape(const std::optional<DimList>& dims) {
  if (!dims) return "None";
  std::string s = "[";
  for (size_t i = 0; i < dims->size(); ++i) {
    const Dim& d = (*dims)[i];
    if (i) s += ", ";
    s += d.is_fixed() ? std::to_string(d.value) : d.is_symbolic() ? "'" + d.param + "'" : "None";
  }
  return s + "]";
}

}  // namespace

// The indices of the full model: producers and the protobuf's nodes.
struct CandidateIndex {
  std::unordered_map<std::string, size_t> producer;  // tensor -> graph node index
  std::unordered_map<std::string, const ::onnx::ValueInfoProto*> value_info;
};

namespace {

std::shared_ptr<CandidateIndex> build_index(const ir::Model& model) {
  auto index = std::make_shared<CandidateIndex>();
  const ir::Graph& g = model.graph;
  for (size_t i = 0; i < g.nodes.size(); ++i)
    for (const std::string& out : g.nodes[i].outputs)
      if (!out.empty()) index->producer.emplace(out, i);
  PARITY_ENFORCE(model.proto != nullptr, "debug reduce needs the model's protobuf");
  const ::onnx::GraphProto& pg = model.proto->graph();
  for (const auto& vi : pg.value_info()) index->value_info.emplace(vi.name(), &vi);
  for (const auto& vi : pg.output()) index->value_info[vi.name()] = &vi;
  for (const auto& vi : pg.input()) index->value_info[vi.name()] = &vi;
  return index;
}

bool has_tensor_type(const ::onnx::ValueInfoProto& vi, bool need_shape) {
  if (!vi.type().has_tensor_type())
    return vi.type().value_case() != ::onnx::TypeProto::VALUE_NOT_SET;
  const auto& tt = vi.type().tensor_type();
  return tt.elem_type() != 0 && (!need_shape || tt.has_shape());
}

void tensor_to_proto(const std::string& name, const Tensor& t, ::onnx::TensorProto& p) {
  p.set_name(name);
  p.set_data_type(static_cast<int32_t>(t.dtype()));
  for (int64_t d : t.shape()) p.add_dims(d);
  if (t.dtype() == DataType::kString)
    fail(
        "failed to freeze tensor '{}': string tensors cannot be frozen into the model; reduce "
        "with --no-reduce-inputs to keep the branch that computes it",
        name);
  p.set_raw_data(std::string(static_cast<const char*>(t.raw_data()), t.nbytes()));
}

}  // namespace

std::string gs_tensor_meta(const ir::ValueType* type) {
  std::string dtype = "None";
  std::optional<DimList> shape;
  if (type && type->kind == ir::ValueType::Kind::kTensor) {
    if (type->elem_type) dtype = std::string(dtype_name(*type->elem_type));
    shape = type->shape;
  }
  return fmt::format("(shape={}, dtype={})", gs_shape(shape), dtype);
}

Candidate::Candidate(const ir::Model& model) : model_(&model), graph_(&model.graph) {
  for (size_t i = 0; i < graph_->nodes.size(); ++i)
    if (!is_constant_node(graph_->nodes[i])) nodes_.push_back(i);
  for (const auto& in : graph_->inputs)
    if (!graph_->initializers.count(in.name)) inputs_.push_back(in.name);
  for (const auto& out : graph_->outputs) outputs_.push_back(out.name);
  index_ = build_index(model);
}

std::optional<size_t> Candidate::producer(const std::string& name) const {
  const auto& p = index_->producer;
  auto it = p.find(name);
  if (it == p.end()) return std::nullopt;
  return it->second;
}

bool Candidate::is_constant(const std::string& name) const {
  if (graph_->initializers.count(name)) return true;
  const std::optional<size_t> p = producer(name);
  return p && is_constant_node(graph_->nodes[*p]);
}

std::vector<std::string> Candidate::node_outputs(size_t position) const {
  std::vector<std::string> names;
  for (const std::string& o : node(position).outputs)
    if (!o.empty()) names.push_back(o);
  return names;
}

std::vector<std::string> Candidate::node_inputs(size_t position) const {
  std::vector<std::string> names;
  for (const std::string& i : node(position).inputs)
    if (!i.empty() && std::find(names.begin(), names.end(), i) == names.end()) names.push_back(i);
  return names;
}

std::string Candidate::describe_tensors(const std::vector<std::string>& names) const {
  std::string s = "[";
  for (size_t i = 0; i < names.size(); ++i) {
    if (i) s += ", ";
    const bool constant = graph_->initializers.count(names[i]) > 0;
    s += fmt::format("{} ({}): {}", constant ? "Constant" : "Variable", names[i],
                     gs_tensor_meta(graph_->find_type(names[i])));
  }
  return s + "]";
}

void Candidate::mark_outputs(const std::vector<std::string>& names) {
  if (names.empty())
    logger().warning(
        "No non-constant tensors are available to mark. Try folding constants in the model "
        "with `polygraphy surgeon sanitize --fold-constants`");
  outputs_ = names;
  logger().info("Marking model outputs: {}", describe_tensors(outputs_));
  cleanup();
}

void Candidate::mark_inputs(const std::vector<std::string>& names) {
  std::vector<std::string> variables;
  for (const std::string& n : names)
    if (!is_constant(n)) variables.push_back(n);
  if (variables.empty())
    logger().warning(
        "No non-constant tensors are available to mark. Try folding constants in the model "
        "with `polygraphy surgeon sanitize --fold-constants`");
  inputs_ = variables;
  logger().info("Marking model inputs: {}", describe_tensors(inputs_));
  // A producer of a new input is cut away: its other outputs cannot stay graph outputs (the
  // node might need all of its outputs by the specification).
  for (const std::string& in : inputs_) {
    const std::optional<size_t> p = producer(in);
    if (!p) continue;
    for (const std::string& out : graph_->nodes[*p].outputs)
      outputs_.erase(std::remove(outputs_.begin(), outputs_.end(), out), outputs_.end());
  }
  cleanup();
}

void Candidate::cleanup() {
  // Walk back from the outputs, stopping at graph inputs, through the nodes of this candidate.
  const std::set<size_t> allowed(nodes_.begin(), nodes_.end());
  const std::unordered_set<std::string> inputs(inputs_.begin(), inputs_.end());
  std::unordered_set<std::string> seen;
  std::set<size_t> kept;
  std::vector<std::string> stack(outputs_.begin(), outputs_.end());
  std::unordered_set<std::string> read;
  while (!stack.empty()) {
    const std::string t = stack.back();
    stack.pop_back();
    if (!seen.insert(t).second || inputs.count(t)) continue;
    const std::optional<size_t> p = producer(t);
    if (!p || !allowed.count(*p) || !kept.insert(*p).second) continue;
    for (const std::string& r : node_reads(graph_->nodes[*p])) {
      read.insert(r);
      stack.push_back(r);
    }
  }
  nodes_.assign(kept.begin(), kept.end());
  // Graph inputs nothing reads are dropped (GraphSurgeon's remove_unused_graph_inputs).
  std::vector<std::string> used;
  for (const std::string& in : inputs_)
    if (read.count(in) || std::find(outputs_.begin(), outputs_.end(), in) != outputs_.end())
      used.push_back(in);
  inputs_ = used;
}

ModelPtr Candidate::to_model(TensorSource& source) const {
  const CandidateIndex* index = index_.get();
  const std::unordered_set<std::string> inputs(inputs_.begin(), inputs_.end());
  std::unordered_set<std::string> produced;
  for (size_t i : nodes_)
    for (const std::string& o : graph_->nodes[i].outputs) produced.insert(o);

  // Values read that nothing here computes: a branch reaching a tensor that is no longer a
  // graph input. They are frozen; then every node whose inputs are all constant is folded
  // away by freezing what it feeds into the rest.
  std::vector<std::string> cut_off;
  for (size_t i : nodes_)
    for (const std::string& r : node_reads(graph_->nodes[i]))
      if (!inputs.count(r) && !produced.count(r) && !is_constant(r) &&
          std::find(cut_off.begin(), cut_off.end(), r) == cut_off.end())
        cut_off.push_back(r);
  std::vector<std::string> frozen;
  if (!cut_off.empty()) {
    if (source.random_data())
      logger().log_once(
          Severity::kWarning,
          "This model includes multiple branches/paths. In order to continue reducing, one "
          "branch needs to be folded away.\nPlease ensure that you have provided a data loader "
          "argument directly to `debug reduce` (i.e. prior to `--check`) if your `--check` "
          "command is using a non-default data loader.\nNot doing so may result in false "
          "negatives!");
    source.values(cut_off);  // as Polygraphy: values first (the fallback run), then the log
    for (const std::string& name : cut_off)
      logger().info("Freezing tensor: Variable ({}): {} to eliminate branches.", name,
                    gs_tensor_meta(graph_->find_type(name)));
    // Nodes that depend on a graph input stay; the others fold into what they feed.
    std::unordered_set<std::string> dynamic_values(inputs_.begin(), inputs_.end());
    std::vector<size_t> dynamic_nodes;
    for (size_t i : nodes_) {
      bool dynamic = false;
      for (const std::string& r : node_reads(graph_->nodes[i]))
        dynamic |= dynamic_values.count(r) > 0;
      if (!dynamic) continue;
      dynamic_nodes.push_back(i);
      for (const std::string& o : graph_->nodes[i].outputs) dynamic_values.insert(o);
    }
    std::unordered_set<std::string> dynamic_produced;
    for (size_t i : dynamic_nodes)
      for (const std::string& o : graph_->nodes[i].outputs) dynamic_produced.insert(o);
    // Tensors read by a kept node, or graph outputs, that a folded node computes.
    std::vector<std::string> boundary;
    auto add_boundary = [&](const std::string& r) {
      if (inputs.count(r) || dynamic_produced.count(r) || is_constant(r)) return;
      if (std::find(boundary.begin(), boundary.end(), r) == boundary.end()) boundary.push_back(r);
    };
    for (size_t i : dynamic_nodes)
      for (const std::string& r : node_reads(graph_->nodes[i])) add_boundary(r);
    for (const std::string& o : outputs_) add_boundary(o);
    frozen = boundary;
    if (!frozen.empty()) logger().verbose("Folding constants to remove extraneous subgraphs");
  }

  // The graph inputs and outputs need types; those the file does not give come from the
  // values of the full model (which makes them static, as Polygraphy's fallback does).
  auto known = [&](const std::string& name, bool need_shape) -> const ::onnx::ValueInfoProto* {
    auto it = index->value_info.find(name);
    return it != index->value_info.end() && has_tensor_type(*it->second, need_shape) ? it->second
                                                                                     : nullptr;
  };
  std::vector<std::string> need_values = frozen;
  for (const std::string& in : inputs_)
    if (!known(in, true)) need_values.push_back(in);
  for (const std::string& out : outputs_)
    if (!known(out, false) && std::find(frozen.begin(), frozen.end(), out) == frozen.end())
      need_values.push_back(out);
  std::sort(need_values.begin(), need_values.end());
  need_values.erase(std::unique(need_values.begin(), need_values.end()), need_values.end());
  const TensorMap values = need_values.empty() ? TensorMap{} : source.values(need_values);

  // The subgraph itself is surgeon's extraction, between the graph inputs and the frozen
  // tensors on one side and the outputs on the other; the frozen ones then become
  // initializers holding their values.
  auto proto = std::make_shared<::onnx::ModelProto>(*model_->proto);
  surgeon::ExtractOptions extract;
  auto spec = [&](const std::string& name, bool is_input) {
    surgeon::TensorSpec t{name, std::nullopt, std::nullopt};
    if (const Tensor* v = values.find(name); v && !known(name, is_input)) {
      t.dtype = v->dtype();
      if (is_input) t.shape = dims_from_shape(v->shape());
    }
    return t;
  };
  for (const std::string& in : inputs_) extract.inputs.push_back(spec(in, true));
  for (const std::string& f : frozen) extract.inputs.push_back(spec(f, true));
  for (const std::string& out : outputs_) extract.outputs.push_back(spec(out, false));
  surgeon::extract_subgraph(*proto, extract);
  ::onnx::GraphProto& g = *proto->mutable_graph();
  for (const std::string& f : frozen) {
    auto* graph_inputs = g.mutable_input();
    for (int i = 0; i < graph_inputs->size(); ++i)
      if (graph_inputs->Get(i).name() == f) {
        graph_inputs->DeleteSubrange(i, 1);
        break;
      }
    tensor_to_proto(f, values.at(f), *g.add_initializer());
  }

  onnx_io::LoadOptions options;
  options.external_data_dir = model_->external_data_dir;
  const std::string base = model_->external_data_dir.empty() ? "." : model_->external_data_dir;
  ModelPtr model = onnx_io::model_from_proto(std::move(proto), options, base);
  model->path = model_->path;
  return model;
}

}  // namespace parity::debug
