// `parity inspect model` and `parity inspect data`.
#include <gtest/gtest.h>

#include "support/test_util.h"

namespace parity::testing {
namespace {

std::string example(const std::string& name) { return source_path("examples/" + name); }

TEST(CliInspect, ModelSummaryAndLayers) {
  auto r = run_parity({"inspect", "model", example("tiny_cnn.onnx"), "--show", "layers", "attrs"});
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("==== ONNX Model ===="), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("image [dtype=float32, shape=('N', 3, 32, 32)]"), std::string::npos)
      << r.output;
  EXPECT_NE(r.output.find("Op: InstanceNormalization"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("kernel_shape"), std::string::npos) << r.output;
}

TEST(CliInspect, DataOfSavedResultsAndInputs) {
  TempDir dir;
  std::string outputs = dir.file("out.json"), inputs = dir.file("in.json");
  ASSERT_EQ(run_parity({"run", example("tiny_cnn.onnx"), "--pluginref", "--iterations", "2",
                        "--save-outputs", outputs, "--save-inputs", inputs})
                .exit_code,
            0);
  auto r = run_parity({"inspect", "data", outputs, "--all", "--histogram"});
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("==== Run Results (1 runners) ===="), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("-- Iteration: 1"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("probs [dtype=float32, shape=(1, 10)] | Stats: mean="), std::string::npos)
      << r.output;
  EXPECT_NE(r.output.find("---- Histogram ----"), std::string::npos) << r.output;

  auto in = run_parity({"inspect", "data", inputs, "--show-values"});
  ASSERT_EQ(in.exit_code, 0) << in.output;
  EXPECT_NE(in.output.find("==== Data (2 iterations) ===="), std::string::npos) << in.output;
  EXPECT_NE(in.output.find("image [dtype=float32, shape=(1, 3, 32, 32)]"), std::string::npos);
}

TEST(CliInspect, DataOfMissingOrBrokenFile) {
  TempDir dir;
  auto missing = run_parity({"inspect", "data", dir.file("none.json")});
  EXPECT_EQ(missing.exit_code, 1);
  EXPECT_NE(missing.output.find("none.json"), std::string::npos) << missing.output;
  write_text(dir.file("broken.json"), "[{\"x\": ");
  auto broken = run_parity({"inspect", "data", dir.file("broken.json")});
  EXPECT_EQ(broken.exit_code, 1);
  EXPECT_NE(broken.output.find("broken.json"), std::string::npos) << broken.output;
}

TEST(CliInspect, NoSubcommandIsUsageError) {
  auto r = run_parity({"inspect"});
  EXPECT_EQ(r.exit_code, 2) << r.output;
  auto none = run_parity({});
  EXPECT_EQ(none.exit_code, 2) << none.output;
}

}  // namespace
}  // namespace parity::testing
