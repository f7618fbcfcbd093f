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

}  // namespace parity::bench
