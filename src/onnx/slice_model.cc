#include "onnx/slice_model.h"

#include <algorithm>
#include <filesystem>
#include <set>
#include <unordered_set>

#include <onnx/onnx_pb.h>
#include <onnx/shape_inference/implementation.h>

#include "core/error.h"
#include "onnx/model_io.h"

namespace parity::onnx_io {

ModelSlicer::ModelSlicer(std::shared_ptr<const ir::Model> model) : model_(std::move(model)) {
  const ir::Graph& graph = model_->graph;
  if (!model_->proto) {
    why_not_ = "the model has no protobuf";
    return;
  }
  const ::onnx::GraphProto& g = model_->proto->graph();
  std::unordered_map<std::string, int> proto_by_output;
  for (int i = 0; i < g.node_size(); ++i)
    for (const auto& out : g.node(i).output())
      if (!out.empty()) proto_by_output.emplace(out, i);
  for (size_t i = 0; i < graph.nodes.size(); ++i) {
    const ir::Node& node = graph.nodes[i];
    for (const auto& a : node.attributes)
      if (a.type == ir::Attribute::Type::kGraph || a.type == ir::Attribute::Type::kGraphs) {
        why_not_ = "node '" + node.name + "' has a subgraph";
        return;
      }
    int at = -1;
    for (const auto& out : node.outputs)
      if (auto it = proto_by_output.find(out); !out.empty() && it != proto_by_output.end()) {
        at = it->second;
        break;
      }
    if (at < 0) {
      why_not_ = "node '" + node.name + "' has no output";
      return;
    }
    proto_node_.push_back(at);
    for (const auto& out : node.outputs)
      if (!out.empty()) producer_[out] = i;
  }
  for (int i = 0; i < g.initializer_size(); ++i) initializer_[g.initializer(i).name()] = i;
  for (int i = 0; i < g.value_info_size(); ++i) value_info_[g.value_info(i).name()] = i;
  for (int i = 0; i < g.output_size(); ++i) graph_output_[g.output(i).name()] = i;
}

std::shared_ptr<ir::Model> ModelSlicer::slice(size_t begin, size_t end,
                                              const std::vector<SliceInput>& inputs,
                                              const std::vector<std::string>& outputs) const {
  PARITY_ENFORCE(why_not_.empty(), "slicing a model that cannot be sliced: {}", why_not_);
  const ir::Graph& graph = model_->graph;
  PARITY_ENFORCE(begin <= end && end < graph.nodes.size(), "slice [{}, {}] of {} nodes", begin, end,
                 graph.nodes.size());
  const ::onnx::ModelProto& m = *model_->proto;
  const ::onnx::GraphProto& g = m.graph();

  // The nodes: Constant nodes before `begin` that the slice reads, then the run itself.
  std::set<size_t> nodes;
  for (size_t i = begin; i <= end; ++i) nodes.insert(i);
  for (size_t i = begin; i <= end; ++i)
    for (const auto& in : graph.nodes[i].inputs) {
      auto p = producer_.find(in);
      if (in.empty() || p == producer_.end() || p->second >= begin) continue;
      const ir::Node& source = graph.nodes[p->second];
      if (source.op_type == "Constant" && source.domain.empty()) nodes.insert(p->second);
    }

  auto proto = std::make_shared<::onnx::ModelProto>();
  proto->set_ir_version(m.ir_version());
  *proto->mutable_opset_import() = m.opset_import();
  *proto->mutable_functions() = m.functions();
  proto->set_producer_name(m.producer_name());
  proto->set_producer_version(m.producer_version());
  ::onnx::GraphProto* out = proto->mutable_graph();
  out->set_name(fmt::format("{}_nodes_{}_to_{}", g.name(), begin, end));
  std::unordered_set<std::string> fed;
  for (const SliceInput& in : inputs) {
    fed.insert(in.name);
    ::onnx::ValueInfoProto* v = out->add_input();
    v->set_name(in.name);
    auto* t = v->mutable_type()->mutable_tensor_type();
    t->set_elem_type(static_cast<int>(in.dtype));
    auto* shape = t->mutable_shape();
    for (int64_t d : in.shape) shape->add_dim()->set_dim_value(d);
  }
  std::unordered_set<std::string> copied;
  for (size_t i : nodes) {
    *out->add_node() = g.node(proto_node_[i]);
    for (const auto& in : graph.nodes[i].inputs) {
      auto init = initializer_.find(in);
      if (in.empty() || fed.count(in) || init == initializer_.end() || !copied.insert(in).second)
        continue;
      *out->add_initializer() = g.initializer(init->second);
    }
  }
  // Types the model does not give are inferred on the slice (ONNX requires an output's type;
  // the slice's inputs are typed exactly, so inference usually finds them).
  std::unordered_map<std::string, ::onnx::ValueInfoProto> inferred;
  {
    ::onnx::ModelProto typed = *proto;
    try {
      ::onnx::shape_inference::InferShapes(typed);
      for (const auto& v : typed.graph().value_info())
        if (v.has_type()) inferred.emplace(v.name(), v);
    } catch (const std::exception&) {
      // A node without a schema (a custom op): its outputs keep the name alone.
    }
  }
  for (const auto& name : outputs) {
    if (auto o = graph_output_.find(name);
        o != graph_output_.end() && g.output(o->second).has_type())
      *out->add_output() = g.output(o->second);
    else if (auto v = value_info_.find(name);
             v != value_info_.end() && g.value_info(v->second).has_type())
      *out->add_output() = g.value_info(v->second);
    else if (auto i = inferred.find(name); i != inferred.end())
      *out->add_output() = i->second;
    else
      out->add_output()->set_name(name);
  }
  return model_from_proto(
      proto, LoadOptions{},
      model_->external_data_dir.empty() ? std::string(".") : model_->external_data_dir);
}

}  // namespace parity::onnx_io
