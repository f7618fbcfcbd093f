#include "support_models.h"

#include <onnx/onnx_pb.h>

namespace parity::bench {

namespace {

void add_float_input(onnx::GraphProto* g, const std::string& name, const Shape& shape,
                     bool output = false) {
  onnx::ValueInfoProto* v = output ? g->add_output() : g->add_input();
  v->set_name(name);
  auto* t = v->mutable_type()->mutable_tensor_type();
  t->set_elem_type(onnx::TensorProto::FLOAT);
  for (int64_t d : shape) t->mutable_shape()->add_dim()->set_dim_value(d);
}

}  // namespace

std::string instance_norm_model_bytes(const Shape& shape) {
  onnx::ModelProto m;
  m.set_ir_version(8);
  m.add_opset_import()->set_version(13);
  onnx::GraphProto* g = m.mutable_graph();
  g->set_name("instance_norm");
  add_float_input(g, "x", shape);
  add_float_input(g, "scale", {shape[1]});
  add_float_input(g, "bias", {shape[1]});
  add_float_input(g, "y", shape, /*output=*/true);
  onnx::NodeProto* n = g->add_node();
  n->set_op_type("InstanceNormalization");
  n->set_name("norm");
  n->add_input("x");
  n->add_input("scale");
  n->add_input("bias");
  n->add_output("y");
  return m.SerializeAsString();
}

std::string single_op_model_bytes(
    const std::string& op, const Shape& shape, int opset, int inputs,
    const std::vector<std::pair<std::string, std::string>>& string_attrs,
    const std::vector<std::pair<std::string, int64_t>>& int_attrs,
    const std::vector<std::pair<std::string, std::vector<int64_t>>>& ints_attrs) {
  std::vector<NodeInput> fed;
  for (int i = 0; i < inputs; ++i) fed.push_back({"x" + std::to_string(i), shape});
  return node_model_bytes(op, opset, fed, string_attrs, int_attrs, ints_attrs);
}

std::string node_model_bytes(
    const std::string& op, int opset, const std::vector<NodeInput>& inputs,
    const std::vector<std::pair<std::string, std::string>>& string_attrs,
    const std::vector<std::pair<std::string, int64_t>>& int_attrs,
    const std::vector<std::pair<std::string, std::vector<int64_t>>>& ints_attrs,
    const std::vector<std::pair<std::string, float>>& float_attrs) {
  onnx::ModelProto m;
  m.set_ir_version(9);
  m.add_opset_import()->set_version(opset);
  onnx::GraphProto* g = m.mutable_graph();
  g->set_name(op);
  onnx::NodeProto* n = g->add_node();
  n->set_op_type(op);
  n->set_name(op);
  for (const NodeInput& in : inputs) {
    n->add_input(in.name);
    if (in.name.empty()) continue;
    if (!in.constant) {
      add_float_input(g, in.name, in.shape);
      continue;
    }
    onnx::TensorProto* t = g->add_initializer();
    t->set_name(in.name);
    for (int64_t d : in.shape) t->add_dims(d);
    if (!in.ints.empty()) {
      t->set_data_type(onnx::TensorProto::INT64);
      for (int64_t v : in.ints) t->add_int64_data(v);
    } else {
      t->set_data_type(onnx::TensorProto::FLOAT);
      for (float v : in.floats) t->add_float_data(v);
    }
  }
  n->add_output("y");
  for (const auto& [name, value] : string_attrs) {
    onnx::AttributeProto* a = n->add_attribute();
    a->set_name(name);
    a->set_type(onnx::AttributeProto::STRING);
    a->set_s(value);
  }
  for (const auto& [name, value] : int_attrs) {
    onnx::AttributeProto* a = n->add_attribute();
    a->set_name(name);
    a->set_type(onnx::AttributeProto::INT);
    a->set_i(value);
  }
  for (const auto& [name, values] : ints_attrs) {
    onnx::AttributeProto* a = n->add_attribute();
    a->set_name(name);
    a->set_type(onnx::AttributeProto::INTS);
    for (int64_t v : values) a->add_ints(v);
  }
  for (const auto& [name, value] : float_attrs) {
    onnx::AttributeProto* a = n->add_attribute();
    a->set_name(name);
    a->set_type(onnx::AttributeProto::FLOAT);
    a->set_f(value);
  }
  onnx::ValueInfoProto* y = g->add_output();
  y->set_name("y");
  y->mutable_type()->mutable_tensor_type()->set_elem_type(onnx::TensorProto::FLOAT);
  return m.SerializeAsString();
}

}  // namespace parity::bench
