// The OnnxrtRunner contract of Polygraphy's tests/backend/onnxrt/test_runner.py (see
// polygraphy-features.md §4.3), against the real ONNX Runtime.
#include "backend/onnxrt/runner.h"

#include <gtest/gtest.h>

#include "ort_test_util.h"
#include "support/test_util.h"

namespace parity {
namespace {

using testing::model_from_text;
using testing::ort_runtime;

constexpr const char* kIdentity = R"(
  <ir_version: 8, opset_import: ["" : 17]>
  identity (float[1,1,2,2] x) => (float[1,1,2,2] y) { y = Identity(x) }
)";

std::unique_ptr<Runner> identity_runner(std::string name = "") {
  ort_runtime();
  return make_onnxrt_runner(model_from_text(kIdentity), OrtOptions{}, std::move(name));
}

TEST(OnnxrtRunner, CanNameRunner) {
  auto runner = identity_runner("onnx-runner");
  EXPECT_EQ(runner->name(), "onnx-runner");
}

TEST(OnnxrtRunner, DefaultNameHasPrefix) {
  auto runner = identity_runner();
  EXPECT_TRUE(runner->name().starts_with("onnxrt-runner-N")) << runner->name();
}

TEST(OnnxrtRunner, Basic) {
  auto runner = identity_runner();
  auto x = Tensor::from_vector<float>({1, 1, 2, 2}, {1.5f, -2.0f, 0.25f, 8.0f});
  {
    RunnerActivation active(*runner);
    EXPECT_TRUE(runner->is_active());
    TensorMap feed;
    feed.set("x", x);
    TensorMap out = runner->infer(feed);
    ASSERT_EQ(out.size(), 1u);
    EXPECT_TRUE(out.at("y").equals(x));
    ASSERT_TRUE(runner->last_inference_time().has_value());
    EXPECT_GT(*runner->last_inference_time(), 0.0);
  }
  EXPECT_FALSE(runner->is_active());
}

TEST(OnnxrtRunner, InputMetadata) {
  auto runner = identity_runner();
  RunnerActivation active(*runner);
  TensorMetadata meta = runner->input_metadata();
  ASSERT_EQ(meta.size(), 1u);
  EXPECT_EQ(meta[0].name, "x");
  EXPECT_EQ(meta[0].dtype, DataType::kFloat32);
  EXPECT_EQ(*meta[0].shape, dims_from_shape({1, 1, 2, 2}));
}

TEST(OnnxrtRunner, OutputsStayValidAfterDeactivation) {
  // Outputs borrow ONNX Runtime's buffers; the Tensor keeps them alive past the session.
  auto runner = identity_runner();
  auto x = Tensor::from_vector<float>({1, 1, 2, 2}, {1, 2, 3, 4});
  TensorMap out;
  {
    RunnerActivation active(*runner);
    TensorMap feed;
    feed.set("x", x);
    out = runner->infer(feed);
  }
  runner.reset();
  EXPECT_TRUE(out.at("y").equals(x));
}

TEST(OnnxrtRunner, ErrorOnMissingInput) {
  auto runner = identity_runner();
  RunnerActivation active(*runner);
  for (const char* name : {"fake-input", ""}) {
    TensorMap feed;
    if (*name) feed.set(name, Tensor(DataType::kFloat32, {1, 1, 2, 2}));
    try {
      runner->infer(feed);
      FAIL() << "a feed without x must be refused";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find("The following inputs were not found"),
                std::string::npos)
          << e.what();
    }
  }
}

TEST(OnnxrtRunner, ErrorOnExtraInput) {
  auto runner = identity_runner();
  RunnerActivation active(*runner);
  TensorMap feed;
  feed.set("fake-input", Tensor(DataType::kFloat32, {1, 1, 2, 2}));
  feed.set("x", Tensor(DataType::kFloat32, {1, 1, 2, 2}));
  try {
    runner->infer(feed);
    FAIL() << "an extra input must be refused";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("Extra inputs in"), std::string::npos) << e.what();
  }
}

TEST(OnnxrtRunner, ErrorOnWrongDtype) {
  auto runner = identity_runner();
  RunnerActivation active(*runner);
  TensorMap feed;
  feed.set("x", Tensor(DataType::kInt32, {1, 1, 2, 2}));
  try {
    runner->infer(feed);
    FAIL() << "an int32 feed for a float32 input must be refused";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("Received unexpected dtype"), std::string::npos)
        << e.what();
  }
}

TEST(OnnxrtRunner, ErrorOnWrongShape) {
  auto runner = identity_runner();
  RunnerActivation active(*runner);
  TensorMap feed;
  feed.set("x", Tensor(DataType::kFloat32, {1, 1, 3, 2}));
  try {
    runner->infer(feed);
    FAIL() << "a (1, 1, 3, 2) feed for a (1, 1, 2, 2) input must be refused";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("Received incompatible shape"), std::string::npos)
        << e.what();
  }
}

TEST(OnnxrtRunner, InferRaisesIfInactive) {
  auto runner = identity_runner();
  TensorMap feed;
  feed.set("x", Tensor(DataType::kFloat32, {1, 1, 2, 2}));
  try {
    runner->infer(feed);
    FAIL() << "infer() on an inactive runner must be refused";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("Must be activated"), std::string::npos) << e.what();
  }
}

TEST(OnnxrtRunner, ShapeOutput) {
  // The output shape comes from shape ops: y = Reshape(Flatten(x), Shape(x)) equals x.
  auto runner = make_onnxrt_runner(model_from_text(R"(
    <ir_version: 8, opset_import: ["" : 17]>
    reshape (float[N,3,2] x) => (float[N,3,2] y, int64[3] s) {
      s = Shape(x)
      flat = Flatten(x)
      y = Reshape(flat, s)
    }
  )"),
                                   OrtOptions{});
  RunnerActivation active(*runner);
  std::vector<float> values(4 * 3 * 2);
  for (size_t i = 0; i < values.size(); ++i) values[i] = static_cast<float>(i) * 0.5f - 3.0f;
  auto x = Tensor::from_vector<float>({4, 3, 2}, values);
  TensorMap feed;
  feed.set("x", x);
  TensorMap out = runner->infer(feed);
  ASSERT_EQ(out.names(), (std::vector<std::string>{"y", "s"}));
  EXPECT_TRUE(out.at("y").equals(x));
  EXPECT_TRUE(out.at("s").equals(Tensor::from_vector<int64_t>({3}, {4, 3, 2})));
}

TEST(OnnxrtRunner, DimParamPreserved) {
  auto runner = make_onnxrt_runner(model_from_text(R"(
    <ir_version: 8, opset_import: ["" : 17]>
    dims (float[dim0,16,128] x) => (float[dim0,16,128] y) { y = Identity(x) }
  )"),
                                   OrtOptions{});
  RunnerActivation active(*runner);
  TensorMetadata meta = runner->input_metadata();
  ASSERT_EQ(meta.size(), 1u);
  EXPECT_EQ(*meta[0].shape, (DimList{Dim::symbolic("dim0"), Dim::fixed(16), Dim::fixed(128)}));
}

TEST(OnnxrtRunner, UnnamedDynamicDimIsUnknown) {
  std::string bytes = testing::model_bytes_from_text(R"(
    <ir_version: 8, opset_import: ["" : 17]>
    dims (float[N,2] x) => (float[N,2] y) { y = Identity(x) }
  )");
  ::onnx::ModelProto proto;
  proto.ParseFromString(bytes);
  proto.mutable_graph()
      ->mutable_input(0)
      ->mutable_type()
      ->mutable_tensor_type()
      ->mutable_shape()
      ->mutable_dim(0)
      ->clear_dim_param();
  proto.SerializeToString(&bytes);
  auto runner = testing::bytes_runner(bytes);
  EXPECT_EQ(*runner->input_metadata()[0].shape, (DimList{Dim::unknown(), Dim::fixed(2)}));
  runner->deactivate();
}

TEST(OnnxrtRunner, OutputsInSessionOrder) {
  // Outputs listed c, a, b in the model come back in that order, whatever the feed order.
  auto runner = make_onnxrt_runner(model_from_text(R"(
    <ir_version: 8, opset_import: ["" : 17]>
    order (float[2] p, float[2] q) => (float[2] c, float[2] a, float[2] b) {
      a = Add(p, q)
      b = Sub(p, q)
      c = Mul(p, q)
    }
  )"),
                                   OrtOptions{});
  RunnerActivation active(*runner);
  TensorMap feed;
  feed.set("q", Tensor::from_vector<float>({2}, {2, 4}));
  feed.set("p", Tensor::from_vector<float>({2}, {3, 5}));
  TensorMap out = runner->infer(feed);
  ASSERT_EQ(out.names(), (std::vector<std::string>{"c", "a", "b"}));
  EXPECT_TRUE(out.at("c").equals(Tensor::from_vector<float>({2}, {6, 20})));
  EXPECT_TRUE(out.at("a").equals(Tensor::from_vector<float>({2}, {5, 9})));
  EXPECT_TRUE(out.at("b").equals(Tensor::from_vector<float>({2}, {1, 1})));
}

TEST(OnnxrtRunner, RunFailureCarriesOrtMessage) {
  // With check_inputs off the feed reaches ONNX Runtime, which refuses the shape itself.
  auto runner = identity_runner();
  RunnerActivation active(*runner);
  TensorMap feed;
  feed.set("x", Tensor(DataType::kFloat32, {3}));
  try {
    runner->infer(feed, /*check_inputs=*/false);
    FAIL() << "ONNX Runtime must refuse a rank-1 feed for a rank-4 input";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("ONNX Runtime failed to run the model: "),
              std::string::npos)
        << e.what();
  }
}

}  // namespace
}  // namespace parity
