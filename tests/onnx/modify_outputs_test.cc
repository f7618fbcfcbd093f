// Marking outputs (Polygraphy's ModifyOutputs) and the lazy ONNX loaders.
#include <gtest/gtest.h>

#include <onnx/onnx_pb.h>

#include "core/error.h"
#include "onnx/loaders.h"
#include "onnx/model_io.h"
#include "support/onnx_text.h"
#include "support/test_util.h"

namespace parity::testing {
namespace {

constexpr const char* kModel = R"(
  <ir_version: 8, opset_import: ["" : 17]>
  g (float[N, 2] x) => (float[N, 2] y)
  {
    two = Constant <value = float[1] {2.0}> ()
    a = Mul (x, two)
    b, c = Split <axis = 1> (a)
    d = Concat <axis = 1> (c, b)
    y = If (flag) <then_branch = t () => (float[N, 2] o1) { o1 = Neg (d) },
                   else_branch = e () => (float[N, 2] o2) { o2 = Abs (d) }>
    flag = Constant <value = bool {1}> ()
  }
)";

std::vector<std::string> output_names(const ir::Model& m) {
  std::vector<std::string> names;
  for (const auto& v : m.graph.outputs) names.push_back(v.name);
  return names;
}

std::vector<std::string> proto_output_names(const ir::Model& m) {
  std::vector<std::string> names;
  for (const auto& v : m.proto->graph().output()) names.push_back(v.name());
  return names;
}

std::string error_of(const std::function<void()>& fn) {
  try {
    fn();
  } catch (const Error& e) {
    return e.what();
  }
  return "(no error)";
}

std::shared_ptr<ir::Model> with_value_info() {
  auto proto = model_proto_from_text(kModel);
  auto* vi = proto.mutable_graph()->add_value_info();
  vi->set_name("a");
  auto* tt = vi->mutable_type()->mutable_tensor_type();
  tt->set_elem_type(::onnx::TensorProto::FLOAT);
  tt->mutable_shape()->add_dim()->set_dim_param("N");
  tt->mutable_shape()->add_dim()->set_dim_value(2);
  return onnx_io::model_from_proto(std::make_shared<::onnx::ModelProto>(proto), {}, ".");
}

TEST(ModifyOutputs, MarkAllSkipsConstantNodesInTopologicalOrder) {
  auto model = with_value_info();
  auto marked = onnx_io::modify_outputs(*model, {}, /*mark_all=*/true, {});
  const std::vector<std::string> expected = {"a", "b", "c", "d", "y"};
  EXPECT_EQ(output_names(*marked), expected);
  EXPECT_EQ(proto_output_names(*marked), expected);
  // Types come from value_info (and the old outputs); unknown ones stay unknown.
  EXPECT_EQ(marked->graph.outputs[0].type.str(), "tensor(float32, ('N', 2))");
  EXPECT_EQ(marked->graph.outputs[1].type.kind, ir::ValueType::Kind::kUnknown);
  EXPECT_EQ(marked->graph.outputs[4].type.str(), "tensor(float32, ('N', 2))");
  // An unknown type is left out entirely: ONNX Runtime refuses element type 0.
  EXPECT_FALSE(marked->proto->graph().output(1).has_type());
  // The original is untouched, and the copy's subgraphs point at the copy's graph.
  EXPECT_EQ(output_names(*model), std::vector<std::string>{"y"});
  EXPECT_EQ(proto_output_names(*model), std::vector<std::string>{"y"});
  const ir::Node& if_node = marked->graph.nodes.back();
  ASSERT_EQ(if_node.op_type, "If");
  EXPECT_EQ(if_node.attribute("then_branch")->g->parent, &marked->graph);
}

TEST(ModifyOutputs, NamedOutputsAndExclude) {
  auto model = model_from_text(kModel);
  auto named = onnx_io::modify_outputs(*model, {"c", "a", "c"}, false, {});
  EXPECT_EQ(output_names(*named), (std::vector<std::string>{"c", "a"}));
  auto excluded = onnx_io::modify_outputs(*model, {}, true, {"b", "y"});
  EXPECT_EQ(output_names(*excluded), (std::vector<std::string>{"a", "c", "d"}));
  EXPECT_EQ(proto_output_names(*excluded), (std::vector<std::string>{"a", "c", "d"}));
  auto unchanged = onnx_io::modify_outputs(*model, {}, false, {});
  EXPECT_EQ(output_names(*unchanged), std::vector<std::string>{"y"});
  // The marked model serializes and loads back with its new outputs.
  auto reloaded = onnx_io::load_model_from_bytes(onnx_io::serialize_model(*excluded));
  EXPECT_EQ(output_names(*reloaded), (std::vector<std::string>{"a", "c", "d"}));
}

TEST(ModifyOutputs, UnknownNamesListTheAvailableTensors) {
  auto model = model_from_text(kModel);
  EXPECT_EQ(error_of([&] {
              onnx_io::modify_outputs(*model, {"a", "zz", "two"}, false, {});
            }),
            "The following outputs were not found: {'zz', 'two'}.\nNote: Available tensors:\n"
            "\ta\n\tb\n\tc\n\td\n\ty");
  EXPECT_EQ(error_of([&] {
              onnx_io::modify_outputs(*model, {"a", "b"}, false, {"d"});
            }),
            "The following outputs were not found: {'d'}.\nNote: Available tensors:\n\ta\n\tb");
}

TEST(ModifyOutputs, ManyTensorsListTheNearestNames) {
  std::string body;
  std::string prev = "x";
  for (int i = 0; i < 30; ++i) {
    std::string out = "layer" + std::to_string(i);
    body += out + " = Relu (" + prev + ")\n";
    prev = out;
  }
  auto model = model_from_text(
      "<ir_version: 8, opset_import: [\"\" : 17]>\n"
      "g (float[2] x) => (float[2] layer29) {\n" +
      body + "}");
  std::string message = error_of([&] { onnx_io::modify_outputs(*model, {"layer_17"}, false, {}); });
  EXPECT_EQ(message.find("The following outputs were not found: {'layer_17'}.\n"
                         "Note: Available tensors:\n\tlayer17\n"),
            0u)
      << message;
  EXPECT_NE(message.find("\t... and 20 more"), std::string::npos) << message;
}

TEST(Loaders, AreLazyAndChain) {
  TempDir dir;
  const std::string path = dir.file("model.onnx");
  auto load = OnnxFromPath(path);  // nothing is read yet: the file does not exist
  auto marked = ModifyOutputs(load, {}, true, {"y"});
  auto bytes = BytesFromOnnx(marked);
  write_model_from_text(path, kModel);
  auto model = OnnxFromBytes(bytes)();
  EXPECT_EQ(output_names(*model), (std::vector<std::string>{"a", "b", "c", "d"}));
  EXPECT_EQ(GraphFromOnnx(load)()->graph.nodes.size(), 6u);
  EXPECT_THROW(OnnxFromPath(dir.file("missing.onnx"))(), Error);
}

}  // namespace
}  // namespace parity::testing
