// A backend for the tests of `debug reduce`: the reference backend with one node made wrong.
// The node's output is scaled by (1 + --wrong-scale) inside the model it runs, so the error
// flows on through every node after it, as a wrong kernel's would:
//
//   wrongref with --wrong-tensor t500 against pluginref: the producer of t500 is to blame.
#include <cstdlib>

#include <onnx/onnx_pb.h>

#include "backend/ref/runner.h"
#include "backend/registry.h"
#include "core/error.h"
#include "onnx/model_io.h"

namespace parity::testing {
namespace {

struct WrongConfig {
  std::string tensor;  // the output of the node made wrong
  float scale = 1e-3f;
};

ModelPtr with_wrong_node(const ModelPtr& model, const WrongConfig& config) {
  auto proto = std::make_shared<::onnx::ModelProto>(*model->proto);
  ::onnx::GraphProto& g = *proto->mutable_graph();
  for (int i = 0; i < g.node_size(); ++i) {
    if (g.node(i).output_size() == 0 || g.node(i).output(0) != config.tensor) continue;
    const std::string out = config.tensor;
    g.mutable_node(i)->set_output(0, out + "__right");
    ::onnx::NodeProto* mul = g.add_node();
    mul->set_op_type("Mul");
    mul->set_name(out + "__wrong");
    mul->add_input(out + "__right");
    mul->add_input("__wrong_scale");
    mul->add_output(out);
    ::onnx::TensorProto* scale = g.add_initializer();
    scale->set_name("__wrong_scale");
    scale->set_data_type(::onnx::TensorProto::FLOAT);
    scale->add_float_data(1.0f + config.scale);
    return onnx_io::model_from_proto(proto, {}, ".");
  }
  return model;  // the node is not in this model (a candidate without it)
}

Backend wrong_node_backend() {
  using Kind = BackendOption::Kind;
  Backend b;
  b.name = "wrongref";
  b.flags = "--wrongref";
  b.help = "The reference backend with one node's output scaled (a test backend)";
  b.group = "Wrong Node Runner (tests only)";
  b.options = {{"--wrong-tensor", Kind::kValue, "The output of the node made wrong", ""},
               {"--wrong-scale", Kind::kValue, "The relative error it adds", "0.001"}};
  b.configure = [](const BackendOptionValues& v) {
    WrongConfig c;
    c.tensor = v.value("wrong-tensor", "");
    c.scale = std::strtof(v.value("wrong-scale", "0.001").c_str(), nullptr);
    return std::any(c);
  };
  b.make_runner = [](Loader<ModelPtr> model, const std::any& config, const std::string& name) {
    const WrongConfig c = std::any_cast<const WrongConfig&>(config);
    Loader<ModelPtr> wrong([model, c] { return with_wrong_node(model(), c); });
    return std::unique_ptr<Runner>(std::make_unique<PluginRefRunner>(wrong, name));
  };
  return b;
}

}  // namespace

PARITY_REGISTER_BACKEND(wrong_node_backend());

}  // namespace parity::testing
