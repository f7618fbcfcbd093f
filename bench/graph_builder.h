// Builds the benchmark networks node by node (no model files are shipped): float inputs and
// outputs, seeded random initializers, nodes with INT/INTS/FLOAT attributes.
#pragma once

#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include <onnx/onnx_pb.h>

namespace parity::bench {

// Weights are drawn from one generator seeded with a constant, so every run (and every
// process of a benchmark) measures the same model.
class GraphBuilder {
 public:
  explicit GraphBuilder(const std::string& name, int opset) : rng_(42) {
    model_.set_ir_version(8);
    model_.add_opset_import()->set_version(opset);
    graph_ = model_.mutable_graph();
    graph_->set_name(name);
  }

  void input(const std::string& name, const std::vector<int64_t>& shape) {
    value_info(graph_->add_input(), name, shape);
  }
  // The shape is required: ONNX's checker rejects a graph output without one.
  void output(const std::string& name, const std::vector<int64_t>& shape) {
    value_info(graph_->add_output(), name, shape);
  }

  // A float initializer of normal(0, scale) values.
  std::string weight(const std::string& name, const std::vector<int64_t>& shape, float scale) {
    std::normal_distribution<float> dist(0.0f, scale);
    return floats(name, shape, [&] { return dist(rng_); });
  }
  // A float initializer of uniform [low, high) values: for parameters that must stay positive
  // or near one (BatchNormalization's scale and variance).
  std::string uniform(const std::string& name, const std::vector<int64_t>& shape, float low,
                      float high) {
    std::uniform_real_distribution<float> dist(low, high);
    return floats(name, shape, [&] { return dist(rng_); });
  }
  std::string ints(const std::string& name, const std::vector<int64_t>& values) {
    onnx::TensorProto* t = graph_->add_initializer();
    t->set_name(name);
    t->set_data_type(onnx::TensorProto::INT64);
    t->add_dims(static_cast<int64_t>(values.size()));
    for (int64_t v : values) t->add_int64_data(v);
    return name;
  }
  std::string scalar(const std::string& name, float v) {
    onnx::TensorProto* t = graph_->add_initializer();
    t->set_name(name);
    t->set_data_type(onnx::TensorProto::FLOAT);
    t->add_float_data(v);
    return name;
  }

  onnx::NodeProto* node(const std::string& op, const std::vector<std::string>& inputs,
                        const std::string& output) {
    onnx::NodeProto* n = graph_->add_node();
    n->set_op_type(op);
    n->set_name(output);
    for (const auto& i : inputs) n->add_input(i);
    n->add_output(output);
    return n;
  }
  static void attr(onnx::NodeProto* n, const std::string& name, const std::vector<int64_t>& v) {
    auto* a = n->add_attribute();
    a->set_name(name);
    a->set_type(onnx::AttributeProto::INTS);
    for (int64_t x : v) a->add_ints(x);
  }
  static void attr(onnx::NodeProto* n, const std::string& name, int64_t v) {
    auto* a = n->add_attribute();
    a->set_name(name);
    a->set_type(onnx::AttributeProto::INT);
    a->set_i(v);
  }
  static void attr(onnx::NodeProto* n, const std::string& name, float v) {
    auto* a = n->add_attribute();
    a->set_name(name);
    a->set_type(onnx::AttributeProto::FLOAT);
    a->set_f(v);
  }

  std::string bytes() const { return model_.SerializeAsString(); }

 private:
  template <typename Draw>
  std::string floats(const std::string& name, const std::vector<int64_t>& shape, Draw draw) {
    onnx::TensorProto* t = graph_->add_initializer();
    t->set_name(name);
    t->set_data_type(onnx::TensorProto::FLOAT);
    int64_t n = 1;
    for (int64_t d : shape) {
      t->add_dims(d);
      n *= d;
    }
    t->mutable_float_data()->Reserve(static_cast<int>(n));
    for (int64_t i = 0; i < n; ++i) t->add_float_data(draw());
    return name;
  }

  static void value_info(onnx::ValueInfoProto* v, const std::string& name,
                         const std::vector<int64_t>& shape) {
    v->set_name(name);
    auto* t = v->mutable_type()->mutable_tensor_type();
    t->set_elem_type(onnx::TensorProto::FLOAT);
    for (int64_t d : shape) t->mutable_shape()->add_dim()->set_dim_value(d);
  }

  onnx::ModelProto model_;
  onnx::GraphProto* graph_;
  std::mt19937 rng_;
};

}  // namespace parity::bench
