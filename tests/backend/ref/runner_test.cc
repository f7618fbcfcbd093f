// PluginRefRunner against Polygraphy's runner contract (tests/backend/pluginref/test_runner.py
// and tests/backend/base/test_runner.py).
#include "backend/ref/runner.h"

#include <regex>

#include <gtest/gtest.h>

#include "ref_test_util.h"
#include "support/onnx_text.h"
#include "support/test_util.h"

namespace parity {
namespace {

using testing::error_of;

constexpr const char* kIdentity = R"(
  <ir_version: 8, opset_import: ["" : 13]>
  identity (float[1,1,2,2] x) => (float[1,1,2,2] y) { y = Identity(x) }
)";

Tensor input_1x1x2x2() { return Tensor::from_vector<float>({1, 1, 2, 2}, {1.5f, -2, 3, 4.25f}); }

TEST(PluginRefRunner, KeepsAnExplicitName) {
  PluginRefRunner runner(testing::model_from_text(kIdentity), "my-runner");
  EXPECT_EQ(runner.name(), "my-runner");
}

TEST(PluginRefRunner, DefaultNamesCountUpWithADateAndTime) {
  PluginRefRunner first(testing::model_from_text(kIdentity));
  PluginRefRunner second(testing::model_from_text(kIdentity));
  std::regex pattern(R"(pluginref-runner-N(\d+)-\d\d/\d\d/\d\d-\d\d:\d\d:\d\d)");
  std::smatch a, b;
  ASSERT_TRUE(std::regex_match(first.name(), a, pattern)) << first.name();
  ASSERT_TRUE(std::regex_match(second.name(), b, pattern)) << second.name();
  EXPECT_EQ(std::stoi(b[1].str()), std::stoi(a[1].str()) + 1);
}

TEST(PluginRefRunner, RunsAnIdentityModelLoadedFromAFile) {
  testing::TempDir dir;
  std::string path = dir.file("identity.onnx");
  testing::write_model_from_text(path, kIdentity);
  PluginRefRunner runner(OnnxFromPath(path));
  {
    RunnerActivation active(runner);
    EXPECT_TRUE(runner.is_active());
    TensorMetadata meta = runner.input_metadata();
    ASSERT_EQ(meta.size(), 1u);
    EXPECT_EQ(meta[0].name, "x");
    EXPECT_EQ(meta[0].dtype, DataType::kFloat32);
    EXPECT_EQ(dims_str(*meta[0].shape), "(1, 1, 2, 2)");
    TensorMap feed;
    feed.set("x", input_1x1x2x2());
    TensorMap out = runner.infer(feed);
    ASSERT_EQ(out.names(), std::vector<std::string>{"y"});
    EXPECT_TRUE(out.at("y").equals(input_1x1x2x2()));
    EXPECT_TRUE(runner.last_inference_time().has_value());
  }
  EXPECT_FALSE(runner.is_active());
}

TEST(PluginRefRunner, KeepsSymbolicDimsInInputMetadata) {
  PluginRefRunner runner(testing::model_from_text(R"(
    <ir_version: 8, opset_import: ["" : 13]>
    g (float[batch,16,128] x) => (float[batch,16,128] y) { y = Identity(x) }
  )"));
  RunnerActivation active(runner);
  EXPECT_EQ(dims_str(*runner.input_metadata()[0].shape), "('batch', 16, 128)");
}

TEST(PluginRefRunner, WorksOnMultipleNodes) {
  PluginRefRunner runner(testing::model_from_text(R"(
    <ir_version: 8, opset_import: ["" : 13]>
    identity_identity (float[64,64] X) => (float[64,64] identity_out_2) {
      identity_out_0 = Identity(X)
      identity_out_2 = Identity(identity_out_0)
    }
  )"));
  RunnerActivation active(runner);
  std::vector<float> values(64 * 64);
  for (size_t i = 0; i < values.size(); ++i) values[i] = static_cast<float>(i) * 0.5f;
  TensorMap feed;
  feed.set("X", Tensor::from_vector<float>({64, 64}, values));
  TensorMap out = runner.infer(feed);
  EXPECT_TRUE(out.at("identity_out_2").equals(feed.at("X")));
}

TEST(PluginRefRunner, FailsOnAnUnsupportedNode) {
  // A custom-domain op that no one will implement (Polygraphy's test uses And).
  PluginRefRunner runner(testing::model_from_text(R"(
    <ir_version: 8, opset_import: ["" : 13, "parity.unimplemented" : 1]>
    g (float[1,1,2,2] x) => (float[1,1,2,2] y) { y = parity.unimplemented.Frobnicate(x) }
  )"));
  std::string message = error_of([&] {
    RunnerActivation active(runner);
    TensorMap feed;
    feed.set("x", input_1x1x2x2());
    runner.infer(feed);
  });
  EXPECT_NE(message.find("Op: Frobnicate does not have a reference implementation registered!"),
            std::string::npos)
      << message;
}

class WrongFeedNames
    : public ::testing::TestWithParam<std::pair<std::vector<std::string>, std::string>> {};

TEST_P(WrongFeedNames, AreRejected) {
  PluginRefRunner runner(testing::model_from_text(kIdentity));
  RunnerActivation active(runner);
  TensorMap feed;
  for (const auto& name : GetParam().first) feed.set(name, input_1x1x2x2());
  std::string message = error_of([&] { runner.infer(feed); });
  EXPECT_NE(message.find(GetParam().second), std::string::npos) << message;
}

INSTANTIATE_TEST_SUITE_P(PluginRefRunner, WrongFeedNames,
                         ::testing::Values(std::make_pair(std::vector<std::string>{"fake-input",
                                                                                   "x"},
                                                          "Extra inputs in"),
                                           std::make_pair(std::vector<std::string>{"fake-input"},
                                                          "The following inputs were not found"),
                                           std::make_pair(std::vector<std::string>{},
                                                          "The following inputs were not found")));

TEST(PluginRefRunner, RejectsAWrongDtype) {
  PluginRefRunner runner(testing::model_from_text(kIdentity));
  RunnerActivation active(runner);
  TensorMap feed;
  feed.set("x", Tensor(DataType::kInt32, {1, 1, 2, 2}));
  std::string message = error_of([&] { runner.infer(feed); });
  // Polygraphy matches this pattern as a regular expression.
  EXPECT_TRUE(std::regex_search(message, std::regex("unexpected dtype."))) << message;
}

TEST(PluginRefRunner, RejectsAWrongShape) {
  PluginRefRunner runner(testing::model_from_text(kIdentity));
  RunnerActivation active(runner);
  TensorMap feed;
  feed.set("x", Tensor(DataType::kFloat32, {1, 1, 3, 2}));
  std::string message = error_of([&] { runner.infer(feed); });
  EXPECT_TRUE(std::regex_search(message, std::regex("incompatible shape."))) << message;
}

TEST(PluginRefRunner, InferRaisesIfInactive) {
  PluginRefRunner runner(testing::model_from_text(kIdentity));
  TensorMap feed;
  feed.set("x", input_1x1x2x2());
  std::string message = error_of([&] { runner.infer(feed); });
  EXPECT_NE(message.find("Must be activated"), std::string::npos) << message;
}

TEST(PluginRefRunner, ExposesItsExecutorOnlyWhileActive) {
  PluginRefRunner runner(testing::model_from_text(kIdentity));
  EXPECT_NE(error_of([&] { runner.executor(); }).find("call activate() first"), std::string::npos);
  RunnerActivation active(runner);
  EXPECT_EQ(runner.executor().model().graph.nodes.size(), 1u);
}

}  // namespace
}  // namespace parity
