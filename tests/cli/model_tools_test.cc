// The model tools from the command line: check lint, convert --fp-to-fp16, data to-input,
// surgeon prune / weight-strip / weight-reconstruct, inspect sparsity. Printed lines are
// compared with what Polygraphy 0.49 printed for the same files
// (tests/cli/fixtures/model_tools/README.md says how each was made).
#include <gtest/gtest.h>

#include <filesystem>
#include <sstream>

#include "io/json.h"
#include "support/onnx_text.h"
#include "support/test_util.h"

namespace parity::testing {
namespace {

std::string fixture(const std::string& name) {
  return source_path("tests/cli/fixtures/model_tools/" + name);
}

// The log lines both tools print, with the frame (commands, runtimes) and paths left out.
std::vector<std::string> comparable_lines(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("[I] RUNNING", 0) == 0 || line.rfind("[I] PASSED", 0) == 0 ||
        line.rfind("[E] FAILED", 0) == 0 || line.rfind("[I] Saving ONNX model", 0) == 0)
      continue;
    if (line.rfind("[I] Loading model: ", 0) == 0)
      line = "[I] Loading model: " + std::filesystem::path(line.substr(19)).filename().string();
    if (line.rfind("[I] Saving ", 0) == 0 && line.find(" to ") != std::string::npos)
      line = line.substr(0, line.rfind(" to ") + 4) + "<file>";
    lines.push_back(line);
  }
  return lines;
}

std::string joined(const std::vector<std::string>& lines) {
  std::string s;
  for (const auto& l : lines) s += l + "\n";
  return s;
}

TEST(CliModelTools, InspectSparsityPrintsPolygraphysLines) {
  const auto r = run_parity({"inspect", "sparsity", fixture("weights.onnx")});
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_EQ(joined(comparable_lines(r.output)),
            joined(comparable_lines(read_text(fixture("inspect_sparsity.txt")))));
  EXPECT_NE(r.output.find("[I] RUNNING | Command: "), std::string::npos);
  EXPECT_NE(r.output.find("[I] PASSED | Runtime: "), std::string::npos);
}

TEST(CliModelTools, PruneAndWeightStripPrintPolygraphysLines) {
  TempDir dir;
  const auto prune =
      run_parity({"surgeon", "prune", fixture("weights.onnx"), "-o", dir.file("pruned.onnx")});
  ASSERT_EQ(prune.exit_code, 0) << prune.output;
  EXPECT_EQ(joined(comparable_lines(prune.output)),
            joined(comparable_lines(read_text(fixture("prune.txt")))));
  EXPECT_NE(prune.output.find("[I] Saving ONNX model to: " + dir.file("pruned.onnx")),
            std::string::npos);
  const auto strip = run_parity(
      {"surgeon", "weight-strip", fixture("weights.onnx"), "-o", dir.file("stripped.onnx")});
  ASSERT_EQ(strip.exit_code, 0) << strip.output;
  EXPECT_EQ(joined(comparable_lines(strip.output)),
            joined(comparable_lines(read_text(fixture("weight_strip.txt")))));
  const auto rebuilt = run_parity(
      {"surgeon", "weight-reconstruct", dir.file("stripped.onnx"), "-o", dir.file("rebuilt.onnx")});
  ASSERT_EQ(rebuilt.exit_code, 0) << rebuilt.output;
  EXPECT_NE(rebuilt.output.find("[I] Finished reconstructing 6 weights"), std::string::npos);
  // The reconstructed model runs on both backends, and they agree.
  const auto run = run_parity({"run", dir.file("rebuilt.onnx"), "--pluginref", "--onnxrt", "--atol",
                               "0.05", "--rtol", "1e-2"});  // g_b is float16
  EXPECT_EQ(run.exit_code, 0) << run.output;
}

TEST(CliModelTools, DataToInputMergesAsPolygraphy) {
  TempDir dir;
  const auto r = run_parity({"data", "to-input", fixture("inputs2.json"), fixture("outputs2.json"),
                             "-o", dir.file("merged.json")});
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_EQ(joined(comparable_lines(r.output)),
            joined(comparable_lines(read_text(fixture("to_input.txt")))));
  // Iteration i holds the inputs and the outputs of iteration i.
  const auto mine = io::load_inputs(dir.file("merged.json"));
  const auto inputs = io::load_inputs(fixture("inputs2.json"));
  const RunResults outputs = io::load_run_results(fixture("outputs2.json"));
  ASSERT_EQ(mine.size(), 2u);
  for (size_t i = 0; i < mine.size(); ++i) {
    ASSERT_EQ(mine[i].size(), 4u);
    for (const auto& [name, t] : inputs[i]) EXPECT_TRUE(mine[i].at(name).equals(t)) << name;
    for (const auto& [name, t] : outputs[0].second[i].outputs)
      EXPECT_TRUE(mine[i].at(name).equals(t)) << name;
  }
  // Polygraphy pads its list with one dict repeated, so every iteration of its file is the
  // last one (a bug Parity does not copy); the last iterations agree.
  const auto theirs = io::load_inputs(fixture("polygraphy_to_input.json"));
  ASSERT_EQ(theirs.size(), 2u);
  for (const auto& [name, t] : theirs[0]) {
    EXPECT_TRUE(theirs[1].at(name).equals(t)) << name;
    EXPECT_TRUE(mine[1].at(name).equals(t)) << name;
  }

  // Run in the fixtures' folder: the warning names the file as given.
  const auto uneven = run_command("cd '" + fixture("") + "' && '" + PARITY_CLI +
                                  "' data to-input inputs1.json outputs2.json -o '" +
                                  dir.file("uneven.json") + "'");
  ASSERT_EQ(uneven.exit_code, 0) << uneven.output;
  EXPECT_EQ(joined(comparable_lines(uneven.output)),
            joined(comparable_lines(read_text(fixture("to_input_uneven.txt")))));
  const auto a = io::load_inputs(dir.file("uneven.json"));
  ASSERT_EQ(a.size(), 2u);
  EXPECT_EQ(a[0].size(), 4u);  // inputs1's x, y and the outputs of iteration 0
  EXPECT_TRUE(a[0].at("x").equals(io::load_inputs(fixture("inputs1.json"))[0].at("x")));
  EXPECT_EQ(a[1].size(), 2u);  // only the outputs of iteration 1: "incomplete data"
  EXPECT_TRUE(a[1].at("z").equals(outputs[0].second[1].outputs.at("z")));
}

TEST(CliModelTools, LintReportsOfWhatPolygraphyRunsHereAreItsBytes) {
  for (const std::string name : {"not_a_model", "no_nodes"}) {
    TempDir dir;
    const auto r =
        run_parity({"check", "lint", fixture(name + ".onnx"), "-o", dir.file("report.json")});
    EXPECT_EQ(r.exit_code, name == "no_nodes" ? 0 : 1) << r.output;
    EXPECT_EQ(joined(comparable_lines(r.output)),
              joined(comparable_lines(read_text(fixture("lint_" + name + ".txt")))));
    EXPECT_EQ(read_text(dir.file("report.json")),
              read_text(fixture("polygraphy_lint_" + name + ".json")));
  }
}

TEST(CliModelTools, LintNamesTheFailingNodeAndExitsOne) {
  TempDir dir;
  write_model_from_text(dir.file("m.onnx"), R"(
    <ir_version: 8, opset_import: ["" : 13]>
    g (float[2, 3] A) => (float[2, 4] R) <float[5, 4] W = {1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17,18,19,20}> {
      M = MatMul (A, W)
      R = Relu (M)
    }
  )");
  const auto r = run_parity({"check", "lint", dir.file("m.onnx"), "-o", dir.file("r.json")});
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_NE(r.output.find("[E] LINT | Name: polygraphy_unnamed_node_0, Op: MatMul | "),
            std::string::npos)
      << r.output;
  const std::string report = read_text(dir.file("r.json"));
  EXPECT_NE(report.find("\"failing\": [\n            \"polygraphy_unnamed_node_0\"\n        ]"),
            std::string::npos)
      << report;
  EXPECT_NE(report.find("\"source\": \"pluginref\""), std::string::npos) << report;
}

TEST(CliModelTools, ConvertToFp16RunsOnBothBackendsCloseToTheOriginal) {
  TempDir dir;
  write_model_from_text(dir.file("m.onnx"), R"(
    <ir_version: 8, opset_import: ["" : 13]>
    g (float[2, 3] x) => (float[2, 4] y) <float[3, 4] W = {0.1, -0.2, 0.3, 0.4, 0.5, -0.6, 0.7, 0.8, 0.9, 1.0, -1.1, 1.2}> {
      m = MatMul (x, W)
      y = Softmax <axis = -1> (m)
    }
  )");
  const std::string before = read_text(dir.file("m.onnx"));
  const auto c =
      run_parity({"convert", dir.file("m.onnx"), "--fp-to-fp16", "-o", dir.file("half.onnx")});
  ASSERT_EQ(c.exit_code, 0) << c.output;
  EXPECT_NE(c.output.find("[I] Converting float tensors to float16"), std::string::npos);
  EXPECT_EQ(read_text(dir.file("m.onnx")), before);
  ASSERT_EQ(run_parity(
                {"run", dir.file("m.onnx"), "--pluginref", "--save-outputs", dir.file("fp32.json")})
                .exit_code,
            0);
  for (const char* backend : {"--pluginref", "--onnxrt"}) {
    const auto r = run_parity({"run", dir.file("half.onnx"), backend, "--load-outputs",
                               dir.file("fp32.json"), "--atol", "2e-3", "--rtol", "1e-2"});
    EXPECT_EQ(r.exit_code, 0) << r.output;
  }
}

TEST(CliModelTools, BadInputIsOneMessageAndLeavesTheInputAlone) {
  TempDir dir;
  const auto missing =
      run_parity({"convert", dir.file("nope.onnx"), "--fp-to-fp16", "-o", dir.file("o.onnx")});
  EXPECT_EQ(missing.exit_code, 1) << missing.output;
  EXPECT_NE(missing.output.find("nope.onnx"), std::string::npos) << missing.output;

  const std::string before = read_text(fixture("weights.onnx"));
  const auto unwritable = run_parity(
      {"surgeon", "prune", fixture("weights.onnx"), "-o", dir.file("no/such/dir/o.onnx")});
  EXPECT_EQ(unwritable.exit_code, 1) << unwritable.output;
  EXPECT_NE(unwritable.output.find("failed to save model to"), std::string::npos)
      << unwritable.output;
  EXPECT_EQ(read_text(fixture("weights.onnx")), before);

  const auto to = run_parity(
      {"convert", fixture("weights.onnx"), "--convert-to", "trt", "-o", dir.file("o.onnx")});
  EXPECT_EQ(to.exit_code, 2) << to.output;
  EXPECT_NE(to.output.find("valid choices are: onnx"), std::string::npos) << to.output;

  const auto no_output = run_parity({"surgeon", "prune", fixture("weights.onnx")});
  EXPECT_EQ(no_output.exit_code, 2) << no_output.output;

  // Inputs that do not fit the model's inputs: refused with the runner's message.
  write_model_from_text(dir.file("m.onnx"), R"(
    <ir_version: 8, opset_import: ["" : 13]>
    g (float[2, 3] q) => (float[2, 3] y) { y = Relu (q) }
  )");
  const auto feed =
      run_parity({"check", "lint", dir.file("m.onnx"), "--load-inputs", fixture("inputs1.json")});
  EXPECT_EQ(feed.exit_code, 1) << feed.output;
  EXPECT_NE(feed.output.find("The following inputs were not found in input data"),
            std::string::npos)
      << feed.output;

  const auto not_data =
      run_parity({"data", "to-input", fixture("README.md"), "-o", dir.file("o.json")});
  EXPECT_EQ(not_data.exit_code, 1) << not_data.output;
  EXPECT_NE(not_data.output.find("README.md"), std::string::npos) << not_data.output;
  EXPECT_FALSE(std::filesystem::exists(dir.file("o.json")));
}

}  // namespace
}  // namespace parity::testing
