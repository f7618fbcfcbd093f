// convert --fp-to-fp16: float16 where the op allows it, float32 where it must stay, Casts
// between; the result passes ONNX's checker and runs on both backends close to the original.
#include "surgeon/fp16.h"

#include <gtest/gtest.h>

#include <onnx/checker.h>
#include <cmath>

#include "core/float_types.h"
#include "onnx/proto_convert.h"
#include "support/onnx_text.h"
#include "surgeon/graph.h"
#include "surgeon_test_util.h"

namespace parity::testing {
namespace {

// MatMul, Add, Relu and Softmax run in float16; Resize (its scales too), Range and TopK are
// kept in float32; a Cast to float and a Constant float become float16.
const char* kMixed = R"(
  <ir_version: 8, opset_import: ["" : 13]>
  g (float[2, 3] x) => (float[2, 4] y, float[N] y2, float[2, 2] y3)
    <float[3, 4] W = {0.1, -0.2, 0.3, 0.4, 0.5, -0.6, 0.7, 0.8, 0.9, 1.0, -1.1, 1.2},
     float[4] b = {0.01, 0.02, -0.03, 0.04}, int64[4] shape4 = {1, 1, 2, 4},
     float[4] scales = {1, 1, 1, 2}, float zero = {0}, float one = {1}, int64[1] k = {2}> {
    m = MatMul (x, W)
    a = Add (m, b)
    r = Relu (a)
    r4 = Reshape (r, shape4)
    rs = Resize <mode = "nearest"> (r4, , scales)
    s = ReduceSum <keepdims = 0> (rs)
    rg = Range (zero, s, one)
    rgf = Cast <to = 1> (rg)
    c = Constant <value_float = 0.5> ()
    y2 = Mul (rgf, c)
    y = Softmax <axis = -1> (r)
    tv, ti = TopK (r, k)
    y3 = Sigmoid (tv)
  }
)";

TensorMap feed_x() {
  TensorMap feed;
  feed.set("x", Tensor::from_vector<float>({2, 3}, {0.5f, 1, -1, 2, -3, 4}));
  return feed;
}

int elem_type(const ::onnx::GraphProto& g, const std::string& name) {
  for (const auto& t : g.initializer())
    if (t.name() == name) return t.data_type();
  const ::onnx::TypeProto* type = surgeon::find_type(g, name);
  return type ? type->tensor_type().elem_type() : -1;
}

const ::onnx::NodeProto& node_named(const ::onnx::GraphProto& g, const std::string& name) {
  for (const auto& n : g.node())
    if (n.name() == name) return n;
  throw std::runtime_error("no node " + name);
}

void expect_close(const TensorMap& got, const TensorMap& want, double tolerance) {
  for (const auto& [name, expected] : want) {
    const Tensor& actual = got.at(name);
    ASSERT_EQ(actual.shape(), expected.shape()) << name;
    ASSERT_EQ(actual.dtype(), DataType::kFloat32) << name;
    for (int64_t i = 0; i < expected.numel(); ++i)
      EXPECT_NEAR(actual.data<float>()[i], expected.data<float>()[i],
                  tolerance * (1 + std::fabs(expected.data<float>()[i])))
          << name << "[" << i << "]";
  }
}

TEST(SurgeonFp16, ConvertsWhatMayBeHalfAndKeepsTheRestWithCasts) {
  const auto original = named_model(kMixed);
  auto model = original;
  const size_t casts = surgeon::convert_to_fp16(model);
  EXPECT_GT(casts, 0u);
  EXPECT_NO_THROW(::onnx::checker::check_model(model));
  const auto& g = model.graph();
  EXPECT_EQ(elem_type(g, "W"), ::onnx::TensorProto::FLOAT16);
  EXPECT_EQ(elem_type(g, "b"), ::onnx::TensorProto::FLOAT16);
  // Read only where float32 is needed: kept exact.
  EXPECT_EQ(elem_type(g, "scales"), ::onnx::TensorProto::FLOAT);
  EXPECT_EQ(elem_type(g, "zero"), ::onnx::TensorProto::FLOAT);
  // keep_io_types: the graph's inputs and outputs stay float32, with Polygraphy's cast names.
  EXPECT_EQ(g.input(0).type().tensor_type().elem_type(), ::onnx::TensorProto::FLOAT);
  for (const auto& out : g.output())
    EXPECT_EQ(out.type().tensor_type().elem_type(), ::onnx::TensorProto::FLOAT);
  EXPECT_EQ(node_named(g, "graph_input_cast0").output(0), "graph_input_cast_0");
  EXPECT_EQ(node_named(g, "MatMul_0").input(0), "graph_input_cast_0");
  // Range and Resize read float32; the Cast to float now casts to float16.
  for (const auto& in : node_named(g, "Range_6").input())
    EXPECT_EQ(elem_type(g, in) == ::onnx::TensorProto::FLOAT16, false) << in;
  EXPECT_EQ(node_named(g, "Cast_7").attribute(0).i(), ::onnx::TensorProto::FLOAT16);
  EXPECT_EQ(node_named(g, "Constant_8").attribute(0).name(), "value");
  EXPECT_EQ(node_named(g, "Constant_8").attribute(0).t().data_type(), ::onnx::TensorProto::FLOAT16);

  const TensorMap want = run_model(original, feed_x());
  for (const char* backend : {"pluginref", "onnxrt"})
    expect_close(run_model(model, feed_x(), backend), want, 1e-2);
}

TEST(SurgeonFp16, WithoutKeepIoTypesTheGraphInputsAndOutputsAreHalf) {
  auto model = named_model(R"(
    <ir_version: 8, opset_import: ["" : 13]>
    g (float[2, 3] x) => (float[2, 3] y) <float[3] w = {1, 2, 3}> { a = Mul (x, w)  y = Relu (a) }
  )");
  surgeon::Fp16Options options;
  options.keep_io_types = false;
  EXPECT_EQ(surgeon::convert_to_fp16(model, options), 0u);
  EXPECT_EQ(model.graph().input(0).type().tensor_type().elem_type(), ::onnx::TensorProto::FLOAT16);
  EXPECT_EQ(model.graph().output(0).type().tensor_type().elem_type(), ::onnx::TensorProto::FLOAT16);
  TensorMap feed;
  feed.set("x",
           Tensor::from_vector<float16>(
               {2, 3}, {float16::from_float(1), float16::from_float(-2), float16::from_float(0.5f),
                        float16::from_float(3), float16::from_float(4), float16::from_float(-1)}));
  for (const char* backend : {"pluginref", "onnxrt"}) {
    const Tensor y = run_model(model, feed, backend).at("y");
    ASSERT_EQ(y.dtype(), DataType::kFloat16);
    EXPECT_EQ(y.data<float16>()[3].to_float(), 3.0f);
    EXPECT_EQ(y.data<float16>()[4].to_float(), 8.0f);
    EXPECT_EQ(y.data<float16>()[1].to_float(), 0.0f);
  }
}

TEST(SurgeonFp16, ClampsInitializersAsOnnxmltoolsDoes) {
  auto model = named_model(R"(
    <ir_version: 8, opset_import: ["" : 13]>
    g (float[5] x) => (float[5] y) <float[5] w = {1e-9, -1e-9, 1e5, -1e5, 0.25}> { y = Add (x, w) }
  )");
  surgeon::convert_to_fp16(model);
  const Tensor w = onnx_io::tensor_from_proto(model.graph().initializer(0), {});
  ASSERT_EQ(w.dtype(), DataType::kFloat16);
  EXPECT_EQ(w.data<float16>()[0].bits, float16::from_float(1e-7f).bits);
  EXPECT_EQ(w.data<float16>()[1].bits, float16::from_float(-1e-7f).bits);
  EXPECT_EQ(w.data<float16>()[2].to_float(), float16::from_float(1e4f).to_float());
  EXPECT_EQ(w.data<float16>()[3].to_float(), float16::from_float(-1e4f).to_float());
  EXPECT_EQ(w.data<float16>()[4].to_float(), 0.25f);
}

TEST(SurgeonFp16, ABodyReadsTheFloatVersionOfAnOuterValue) {
  // The If is kept whole in float32; its branches read `a`, which is float16 outside.
  const auto original = named_model(R"(
    <ir_version: 8, opset_import: ["" : 13]>
    g (float[3] x, bool c) => (float[3] y) {
      a = Relu (x)
      y = If (c) <
        then_branch = t () => (float[3] o) { o = Neg (a) },
        else_branch = e () => (float[3] o) { o = Abs (a) }>
    }
  )");
  auto model = original;
  surgeon::convert_to_fp16(model);
  EXPECT_NO_THROW(::onnx::checker::check_model(model));
  TensorMap feed = feed_x();
  feed.set("x", Tensor::from_vector<float>({3}, {1.5f, -2, 3}));
  for (bool c : {true, false}) {
    feed.set("c", Tensor::from_vector<bool>({}, {c}));
    const TensorMap want = run_model(original, feed);
    for (const char* backend : {"pluginref", "onnxrt"})
      expect_close(run_model(model, feed, backend), want, 1e-3);
  }
}

TEST(SurgeonFp16, NodeBlockListKeepsANodeInFloat) {
  auto model = named_model(R"(
    <ir_version: 8, opset_import: ["" : 13]>
    g (float[2] x) => (float[2] y) { a = Relu (x)  y = Neg (a) }
  )");
  surgeon::Fp16Options options;
  options.node_block_list = {"Neg_1"};
  surgeon::convert_to_fp16(model, options);
  EXPECT_NO_THROW(::onnx::checker::check_model(model));
  // Neg reads a float32 version of a and writes y (float32) itself: no output cast.
  EXPECT_EQ(node_named(model.graph(), "Neg_1").output(0), "y");
  EXPECT_EQ(node_named(model.graph(), "Neg_1").input(0), "a_fp32");
}

TEST(SurgeonFp16, OldOpsetsGetCastsThatNameTheirTypeAndTypedVersions) {
  // Cast before opset 6 takes `to` as a string and has no type inference: the casts name the
  // type, and the new tensors get value_info, so ONNX's strict inference types the result.
  const auto original = named_model(R"(
    <ir_version: 3, opset_import: ["" : 1]>
    g (float[3] x) => (float[3] y) { y = Softplus (x) }
  )");
  auto model = original;
  surgeon::convert_to_fp16(model);
  EXPECT_NO_THROW(::onnx::checker::check_model(model));
  EXPECT_EQ(node_named(model.graph(), "graph_input_cast0").attribute(0).s(), "FLOAT16");
  EXPECT_EQ(elem_type(model.graph(), "graph_input_cast_0"), ::onnx::TensorProto::FLOAT16);
  TensorMap feed;
  feed.set("x", Tensor::from_vector<float>({3}, {-1, 0, 2}));
  expect_close(run_model(model, feed), run_model(original, feed), 2e-3);
}

TEST(SurgeonFp16, OpsTypedByAnAttributeAreTypedHalf) {
  // A window op is float32 unless output_datatype says otherwise.
  const auto original = named_model(R"(
    <ir_version: 8, opset_import: ["" : 17]>
    g (int64 n) => (float[N] y) { y = HannWindow (n) }
  )");
  auto model = original;
  surgeon::convert_to_fp16(model);
  const auto& attrs = node_named(model.graph(), "HannWindow_0").attribute();
  ASSERT_EQ(attrs.size(), 1);
  EXPECT_EQ(attrs[0].name(), "output_datatype");
  EXPECT_EQ(attrs[0].i(), ::onnx::TensorProto::FLOAT16);
  TensorMap feed;
  feed.set("n", Tensor::from_vector<int64_t>({}, {8}));
  for (const char* backend : {"pluginref", "onnxrt"})
    expect_close(run_model(model, feed, backend), run_model(original, feed), 2e-3);
}

}  // namespace
}  // namespace parity::testing
