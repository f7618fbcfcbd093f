// Slices of a model (what layer-wise comparison runs on the other backend, batch after batch):
// the run of nodes with the Constant nodes they read, fed inputs typed as the values fed, the
// initializers they read, the outputs typed as the model types them; a valid model for ONNX's
// own checker.
#include "onnx/slice_model.h"

#include <gtest/gtest.h>

#include <onnx/onnx_pb.h>

#include "onnx/model_io.h"
#include "onnx/save_model.h"
#include "support/onnx_text.h"
#include "support/test_util.h"

namespace parity::testing {
namespace {

constexpr const char* kModel = R"(
  <ir_version: 8, opset_import: ["" : 17]>
  g (float[4] x) => (float[4] y)
  <float[4] w = {1.0, 2.0, 3.0, 4.0}, float[4] b>
  {
    half = Constant <value = float {0.5}> ()
    a = Mul (x, half)
    c = Add (a, w)
    d = Mul (c, half)
    y = Add (d, a)
  }
)";

std::vector<std::string> names(const std::vector<ir::ValueInfo>& values) {
  std::vector<std::string> out;
  for (const auto& v : values) out.push_back(v.name);
  return out;
}

TEST(SliceModel, NodesWithTheirConstantsInitializersAndTypes) {
  auto model = model_from_text(kModel);
  onnx_io::ModelSlicer slicer(model);
  ASSERT_EQ(slicer.why_not(), "");
  // Nodes 2..3 (c = Add(a, w), d = Mul(c, half)): 'a' is fed, 'half' comes from its Constant.
  auto part = slicer.slice(2, 3, {{"a", DataType::kFloat32, {4}}}, {"c", "d"});
  const ir::Graph& g = part->graph;
  ASSERT_EQ(g.nodes.size(), 3u);
  EXPECT_EQ(g.nodes[0].op_type, "Constant");
  EXPECT_EQ(g.nodes[1].outputs[0], "c");
  EXPECT_EQ(g.nodes[2].outputs[0], "d");
  EXPECT_EQ(names(g.inputs), (std::vector<std::string>{"a"}));
  EXPECT_EQ(names(g.outputs), (std::vector<std::string>{"c", "d"}));
  EXPECT_EQ(g.initializers.count("w"), 1u);
  EXPECT_EQ(g.initializers.count("b"), 0u);  // not read by the slice
  EXPECT_EQ(part->opset(""), 17);

  // ONNX's checker and shape inference accept it, and infer d as float[4].
  TempDir dir;
  const std::string path = dir.file("slice.onnx");
  onnx_io::save_model(*part, path);
  CommandResult r = run_python(fmt::format(R"(
import onnx
m = onnx.load('{}')
onnx.checker.check_model(m, full_check=True)
inferred = onnx.shape_inference.infer_shapes(m, strict_mode=True)
print([(i.name, i.type.tensor_type.elem_type, [d.dim_value for d in i.type.tensor_type.shape.dim])
       for i in inferred.graph.input])
print('OK')
)",
                                           path));
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("[('a', 1, [4])]"), std::string::npos) << r.output;
}

TEST(SliceModel, ModelsThatCannotBeSlicedSayWhy) {
  auto with_if = model_from_text(R"(
    <ir_version: 8, opset_import: ["" : 17]>
    g (bool c, float[2] x) => (float[2] y) {
      y = If (c) <then_branch = t () => (float[2] o1) { o1 = Neg (x) },
                  else_branch = e () => (float[2] o2) { o2 = Abs (x) }>
    })");
  EXPECT_NE(onnx_io::ModelSlicer(with_if).why_not().find("has a subgraph"), std::string::npos);
  auto bare = std::make_shared<ir::Model>(*model_from_text(kModel));
  bare->proto.reset();
  EXPECT_EQ(onnx_io::ModelSlicer(bare).why_not(), "the model has no protobuf");
}

}  // namespace
}  // namespace parity::testing
