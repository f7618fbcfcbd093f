// `parity run` end to end: the executable as a user runs it.
#include <gtest/gtest.h>

#include "support/onnx_text.h"
#include "support/test_util.h"

namespace parity::testing {
namespace {

const char* kIdentity = R"(
  <ir_version: 8, opset_import: ["" : 13]>
  identity (float[1,1,2,2] x) => (float[1,1,2,2] y) { y = Identity(x) }
)";

std::string example(const std::string& name) { return source_path("examples/" + name); }

TEST(CliRun, ReferenceOnExampleModelPasses) {
  auto r = run_parity({"run", example("tiny_cnn.onnx"), "--pluginref"});
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("RUNNING | Command:"), std::string::npos);
  EXPECT_NE(r.output.find("| Completed 1 iteration(s)"), std::string::npos);
  EXPECT_NE(r.output.find("PASSED | Runtime:"), std::string::npos);
}

TEST(CliRun, OnnxRuntimeAndReferenceAgreeOnExampleModel) {
  auto r = run_parity({"run", example("tiny_cnn.onnx"), "--onnxrt", "--pluginref", "--atol", "1e-5",
                       "--rtol", "1e-4"});
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("PASSED | All outputs matched | Outputs: ['probs']"), std::string::npos)
      << r.output;
  // Runners are compared in command-line order.
  size_t ort = r.output.find("Accuracy Comparison | onnxrt-runner");
  EXPECT_NE(ort, std::string::npos) << r.output;
}

TEST(CliRun, SavedOutputsReloadAndCompare) {
  TempDir dir;
  std::string outputs = dir.file("golden.json"), inputs = dir.file("inputs.json");
  auto save = run_parity({"run", example("tiny_cnn.onnx"), "--pluginref", "--save-outputs", outputs,
                          "--save-inputs", inputs, "--iterations", "2"});
  ASSERT_EQ(save.exit_code, 0) << save.output;
  auto load = run_parity({"run", example("tiny_cnn.onnx"), "--pluginref", "--load-inputs", inputs,
                          "--load-outputs", outputs});
  EXPECT_EQ(load.exit_code, 0) << load.output;
  EXPECT_NE(load.output.find("Passed: 2/2 iterations"), std::string::npos) << load.output;
}

TEST(CliRun, DifferentSeedFailsAgainstSavedOutputs) {
  TempDir dir;
  std::string outputs = dir.file("golden.json");
  ASSERT_EQ(run_parity({"run", example("tiny_cnn.onnx"), "--pluginref", "--save-outputs", outputs})
                .exit_code,
            0);
  auto r = run_parity(
      {"run", example("tiny_cnn.onnx"), "--pluginref", "--seed", "7", "--load-outputs", outputs});
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_NE(r.output.find("FAILED | Mismatched outputs: ['probs']"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("FAILED | Runtime:"), std::string::npos);
}

TEST(CliRun, PerOutputToleranceApplies) {
  TempDir dir;
  std::string outputs = dir.file("golden.json");
  ASSERT_EQ(run_parity({"run", example("tiny_cnn.onnx"), "--pluginref", "--save-outputs", outputs})
                .exit_code,
            0);
  auto r = run_parity({"run", example("tiny_cnn.onnx"), "--pluginref", "--seed", "7",
                       "--load-outputs", outputs, "--atol", "1e-9", "probs:1.0"});
  EXPECT_EQ(r.exit_code, 0) << r.output;
}

TEST(CliRun, MarkAllComparesEveryTensor) {
  auto r = run_parity({"run", example("tiny_cnn.onnx"), "--pluginref", "--onnxrt", "--onnx-outputs",
                       "mark", "all", "--atol", "1e-4", "--rtol", "1e-3"});
  EXPECT_EQ(r.exit_code, 0) << r.output;
  for (const char* name : {"'conv1'", "'relu1'", "'pool1'", "'norm'", "'logits'", "'probs'"})
    EXPECT_NE(r.output.find(std::string("Comparing Output: ") + name), std::string::npos) << name;
}

TEST(CliRun, ValidateFindsNaN) {
  TempDir dir;
  std::string model = dir.file("log.onnx");
  write_model_from_text(model, R"(
    <ir_version: 8, opset_import: ["" : 13]>
    g (float[4] x) => (float[4] y) { m = Neg(x)  y = Sqrt(m) }
  )");
  auto r = run_parity({"run", model, "--pluginref", "--validate", "--val-range", "[1,2]"});
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_NE(r.output.find("NaN Detected"), std::string::npos) << r.output;
}

TEST(CliRun, TopKPostprocessing) {
  auto r = run_parity(
      {"run", example("tiny_cnn.onnx"), "--pluginref", "--onnxrt", "--postprocess", "top-3"});
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("shape=(1, 3)"), std::string::npos) << r.output;
}

// ---- Bad input: one clear message, a non-zero exit, never a crash ----

void expect_clean_failure(const CommandResult& r, int code, const std::string& message) {
  EXPECT_EQ(r.exit_code, code) << r.output;
  EXPECT_NE(r.output.find(message), std::string::npos) << r.output;
  EXPECT_EQ(r.output.find("terminate called"), std::string::npos) << r.output;
  EXPECT_EQ(r.output.find("Segmentation"), std::string::npos) << r.output;
}

TEST(CliBadInput, MissingModelFile) {
  expect_clean_failure(run_parity({"run", "/nonexistent/model.onnx", "--pluginref"}), 1,
                       "/nonexistent/model.onnx");
}

TEST(CliBadInput, TruncatedModel) {
  TempDir dir;
  std::string bytes = read_text(example("tiny_cnn.onnx"));
  write_text(dir.file("cut.onnx"), bytes.substr(0, bytes.size() / 2));
  expect_clean_failure(run_parity({"run", dir.file("cut.onnx"), "--pluginref"}), 1, "cut.onnx");
}

TEST(CliBadInput, GarbageModel) {
  TempDir dir;
  write_text(dir.file("junk.onnx"), "this is not a protobuf at all \x01\x02\xff");
  expect_clean_failure(run_parity({"run", dir.file("junk.onnx"), "--pluginref"}), 1, "junk.onnx");
}

TEST(CliBadInput, GraphWithCycle) {
  TempDir dir;
  write_model_from_text(dir.file("cycle.onnx"), R"(
    <ir_version: 8, opset_import: ["" : 13]>
    g (float[2] x) => (float[2] y) { a = Add(x, b)  b = Relu(a)  y = Identity(b) }
  )");
  expect_clean_failure(run_parity({"run", dir.file("cycle.onnx"), "--pluginref"}), 1, "cycle");
}

TEST(CliBadInput, InputThatNothingProduces) {
  TempDir dir;
  write_model_from_text(dir.file("dangling.onnx"), R"(
    <ir_version: 8, opset_import: ["" : 13]>
    g (float[2] x) => (float[2] y) { y = Add(x, ghost) }
  )");
  expect_clean_failure(run_parity({"run", dir.file("dangling.onnx"), "--pluginref"}), 1, "ghost");
}

TEST(CliBadInput, UnknownFlagIsUsageError) {
  auto r = run_parity({"run", example("identity.onnx"), "--pluginref", "--no-such-flag"});
  expect_clean_failure(r, 2, "--no-such-flag");
}

TEST(CliBadInput, MalformedPerOutputValueIsUsageError) {
  auto r = run_parity({"run", example("identity.onnx"), "--pluginref", "--atol", "out0:abc"});
  expect_clean_failure(r, 2, "out0:abc");
  EXPECT_NE(r.output.find("not a number"), std::string::npos) << r.output;
}

TEST(CliBadInput, InvalidErrorStatIsUsageError) {
  auto r =
      run_parity({"run", example("identity.onnx"), "--pluginref", "--check-error-stat", "maximum"});
  expect_clean_failure(r, 2, "Invalid choice for check_error_stat: maximum");
}

TEST(CliBadInput, FeedFileNotMatchingTheModel) {
  TempDir dir;
  std::string model = dir.file("identity.onnx");
  write_model_from_text(model, kIdentity);
  // Inputs saved for another model: wrong name, then wrong dtype, then wrong shape. By default
  // Parity fits them as Polygraphy does (tests/cli/loaded_inputs_test.cc); --strict-inputs
  // refuses each, and a shape with another element count cannot be fitted at all.
  struct Case {
    const char* text;
    const char* message;
  } cases[] = {
      {R"(<ir_version: 8, opset_import: ["" : 13]>
          g (float[1,1,2,2] z) => (float[1,1,2,2] y) { y = Identity(z) })",
       "The following inputs were not found in input data"},
      {R"(<ir_version: 8, opset_import: ["" : 13]>
          g (double[1,1,2,2] x) => (double[1,1,2,2] y) { y = Identity(x) })",
       "Received unexpected dtype"},
      {R"(<ir_version: 8, opset_import: ["" : 13]>
          g (float[1,1,3,2] x) => (float[1,1,3,2] y) { y = Identity(x) })",
       "Received incompatible shape"},
  };
  for (const auto& c : cases) {
    std::string other = dir.file("other.onnx"), inputs = dir.file("inputs.json");
    write_model_from_text(other, c.text);
    ASSERT_EQ(run_parity({"run", other, "--pluginref", "--save-inputs", inputs}).exit_code, 0);
    expect_clean_failure(
        run_parity({"run", model, "--pluginref", "--load-inputs", inputs, "--strict-inputs"}), 1,
        c.message);
  }
  expect_clean_failure(
      run_parity({"run", model, "--pluginref", "--load-inputs", dir.file("inputs.json")}), 1,
      "Received incompatible shape");
}

TEST(CliBadInput, MissingFeedFile) {
  expect_clean_failure(run_parity({"run", example("identity.onnx"), "--pluginref", "--load-inputs",
                                   "/nonexistent/inputs.json"}),
                       1, "/nonexistent/inputs.json");
}

TEST(CliBadInput, CorruptResultsFile) {
  TempDir dir;
  write_text(dir.file("bad.json"), "{\"lst\": [[\"r\", [{\"outputs\": 5");
  expect_clean_failure(run_parity({"run", example("identity.onnx"), "--pluginref", "--load-outputs",
                                   dir.file("bad.json")}),
                       1, "bad.json");
}

TEST(CliBadInput, ExternalDataEscapingTheModelFolder) {
  TempDir dir;
  // A model whose initializer's data lives in "../secret.bin".
  auto r = run_python(R"(
import numpy as np, onnx
from onnx import helper, TensorProto
w = onnx.TensorProto(name="w", data_type=TensorProto.FLOAT, dims=[4])
w.data_location = TensorProto.EXTERNAL
for k, v in (("location", "../secret.bin"), ("offset", "0"), ("length", "16")):
    e = w.external_data.add(); e.key = k; e.value = v
g = helper.make_graph([helper.make_node("Add", ["x", "w"], ["y"])], "g",
    [helper.make_tensor_value_info("x", TensorProto.FLOAT, [4])],
    [helper.make_tensor_value_info("y", TensorProto.FLOAT, [4])], initializer=[w])
onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)]), ")" +
                      dir.file("escape.onnx") + R"(")
)");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  write_text((dir.path().parent_path() / "secret.bin").string(), std::string(16, '\0'));
  expect_clean_failure(run_parity({"run", dir.file("escape.onnx"), "--pluginref"}), 1,
                       "../secret.bin");
  std::filesystem::remove(dir.path().parent_path() / "secret.bin");
}

TEST(CliBadInput, OnnxRuntimeLibraryMissing) {
  auto r = run_parity({"run", example("identity.onnx"), "--onnxrt", "--ort-lib",
                       "/nonexistent/libonnxruntime.so.1"});
  expect_clean_failure(r, 1, "/nonexistent/libonnxruntime.so.1");
}

}  // namespace
}  // namespace parity::testing
