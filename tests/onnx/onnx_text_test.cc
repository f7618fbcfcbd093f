#include <gtest/gtest.h>

#include "core/error.h"
#include "onnx/model_io.h"
#include "support/onnx_text.h"
#include "support/test_util.h"

namespace parity::testing {
namespace {

constexpr const char* kAddModel = R"(
  <ir_version: 8, opset_import: ["" : 17]>
  add (float[N, 2] x, float[N, 2] y) => (float[N, 2] z) {
    z = Add(x, y)
  }
)";

TEST(OnnxText, BuildsModelInMemory) {
  auto model = model_from_text(kAddModel);
  ASSERT_EQ(model->graph.nodes.size(), 1u);
  EXPECT_EQ(model->graph.nodes[0].op_type, "Add");
  EXPECT_EQ(model->graph.nodes[0].name, "Add_0");
  EXPECT_EQ(model->opset(), 17);
  ASSERT_EQ(model->graph.inputs.size(), 2u);
  EXPECT_EQ(model->graph.inputs[0].type.str(), "tensor(float32, ('N', 2))");
}

TEST(OnnxText, WritesLoadableFile) {
  TempDir dir;
  write_model_from_text(dir.file("add.onnx"), kAddModel);
  auto model = onnx_io::load_model(dir.file("add.onnx"));
  EXPECT_EQ(model->graph.name, "add");
  EXPECT_EQ(model->path, dir.file("add.onnx"));
  EXPECT_EQ(model_bytes_from_text(kAddModel), onnx_io::serialize_model(*model));
}

TEST(OnnxText, SyntaxErrorIsAnError) {
  EXPECT_THROW(model_from_text("<ir_version: 8> broken ( => {"), Error);
}

}  // namespace
}  // namespace parity::testing
