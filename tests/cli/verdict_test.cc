// Every way `parity run` can end, and that none of them prints PASSED without a comparison
// that ran and passed (comparator/verdict.h), nor accepts a request it then ignores.
#include <gtest/gtest.h>

#include <regex>

#include "support/onnx_text.h"
#include "support/test_util.h"

namespace parity::testing {
namespace {

std::string example(const std::string& name) { return source_path("examples/" + name); }

bool has(const CommandResult& r, const std::string& s) {
  return r.output.find(s) != std::string::npos;
}

// Saved results of the example identity model with the given seed.
std::string saved(const TempDir& dir, const std::string& name, int seed) {
  const std::string path = dir.file(name);
  CommandResult r = run_parity({"run", example("identity.onnx"), "--pluginref", "--seed",
                                std::to_string(seed), "--save-outputs", path});
  EXPECT_EQ(r.exit_code, 0) << r.output;
  return path;
}

TEST(CliVerdict, SavedResultsAloneAreComparedWithEachOther) {
  TempDir dir;
  const std::string a = saved(dir, "a.json", 1), b = saved(dir, "b.json", 2);
  CommandResult same = run_parity({"run", "--load-outputs", a, a});
  EXPECT_EQ(same.exit_code, 0) << same.output;
  EXPECT_TRUE(has(same, "PASSED | All outputs matched | Outputs: ['y']")) << same.output;
  // The case that passed without comparing: b.json is compared, not taken as the model.
  CommandResult differ = run_parity({"run", "--load-outputs", a, b});
  EXPECT_EQ(differ.exit_code, 1) << differ.output;
  EXPECT_TRUE(has(differ, "FAILED | Output: 'y' | Difference exceeds tolerance")) << differ.output;
  EXPECT_FALSE(has(differ, "PASSED | Runtime")) << differ.output;
}

// Polygraphy's output for the same command, with times, run names and paths masked.
TEST(CliVerdict, SavedResultsComparisonPrintsPolygraphysLines) {
  TempDir dir;
  const std::string a = saved(dir, "a.json", 1);
  CommandResult ours = run_parity({"run", "--load-outputs", a, a, "--log-format", "no-colors"});
  ASSERT_EQ(ours.exit_code, 0) << ours.output;
  auto mask = [](std::string text) {
    text = std::regex_replace(text, std::regex(R"(pluginref-runner-N0-[0-9/]+-[0-9:]+)"), "RUNNER");
    text = std::regex_replace(text, std::regex(R"(Runtime: [0-9.]+s \| Command: .*)"), "END");
    text = std::regex_replace(text, std::regex(R"(RUNNING \| Command: .*)"), "START");
    text = std::regex_replace(text, std::regex(R"(results from \S+)"), "results from FILE");
    return text;
  };
  std::string fixture =
      read_text(source_path("tests/cli/fixtures/polygraphy_run_load_outputs.txt"));
  fixture = fixture.substr(fixture.find("[I] RUNNING"));
  EXPECT_EQ(mask(ours.output), mask(fixture));
}

TEST(CliVerdict, NothingToRunOrCompareIsAUsageError) {
  CommandResult nothing = run_parity({"run"});
  EXPECT_EQ(nothing.exit_code, 2) << nothing.output;
  EXPECT_TRUE(has(nothing, "nothing to run or compare; select runners (--pluginref, --onnxrt"))
      << nothing.output;
  CommandResult no_model = run_parity({"run", "--onnxrt"});
  EXPECT_EQ(no_model.exit_code, 2) << no_model.output;
  EXPECT_TRUE(has(no_model, "One or more runners was specified, but no model file was provided"))
      << no_model.output;
  TempDir dir;
  CommandResult eaten = run_parity(
      {"run", "--onnxrt", "--load-outputs", saved(dir, "a.json", 1), example("identity.onnx")});
  EXPECT_EQ(eaten.exit_code, 2) << eaten.output;
  EXPECT_TRUE(has(eaten, "Note: --load-outputs took '" + example("identity.onnx") +
                             "'; give the model before the flags that take several values"))
      << eaten.output;
}

TEST(CliVerdict, OneSavedFileHasNothingToBeComparedWith) {
  TempDir dir;
  CommandResult r = run_parity({"run", "--load-outputs", saved(dir, "a.json", 1)});
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_TRUE(has(r, "Compared nothing: --load-outputs gave one set of results")) << r.output;
  EXPECT_TRUE(has(r, "FAILED | Runtime")) << r.output;
}

TEST(CliVerdict, NoInputMeansNothingRanOrCompared) {
  TempDir dir;
  write_text(dir.file("none.json"), "[]");
  CommandResult one = run_parity(
      {"run", example("identity.onnx"), "--pluginref", "--load-inputs", dir.file("none.json")});
  EXPECT_EQ(one.exit_code, 1) << one.output;
  EXPECT_TRUE(has(one, "ran no iteration (the data loader gave no input)")) << one.output;
  CommandResult two = run_parity({"run", example("identity.onnx"), "--pluginref", "--onnxrt",
                                  "--load-inputs", dir.file("none.json")});
  EXPECT_EQ(two.exit_code, 1) << two.output;
  EXPECT_TRUE(has(two, "Compared nothing")) << two.output;
  CommandResult layerwise =
      run_parity({"run", example("identity.onnx"), "--pluginref", "--onnxrt", "--load-inputs",
                  dir.file("none.json"), "--onnx-outputs", "mark", "all"});
  EXPECT_EQ(layerwise.exit_code, 1) << layerwise.output;
  EXPECT_TRUE(has(layerwise, "Compared nothing: no iteration ran")) << layerwise.output;
  EXPECT_FALSE(has(layerwise, "PASSED")) << layerwise.output;
}

TEST(CliVerdict, RequestsThatCannotTakeEffectAreRefused) {
  const std::string model = example("identity.onnx");
  CommandResult local = run_parity({"run", model, "--pluginref", "--onnxrt", "--local-error"});
  EXPECT_EQ(local.exit_code, 2) << local.output;
  EXPECT_TRUE(has(local,
                  "failed to use --local-error: it needs a layer-wise run, and this run is "
                  "not one: no tensors are marked"))
      << local.output;
  TempDir dir;
  CommandResult report = run_parity({"run", model, "--pluginref", "--report", dir.file("r.html")});
  EXPECT_EQ(report.exit_code, 2) << report.output;
  EXPECT_TRUE(has(report, "a report shows a comparison, and this run compares nothing"))
      << report.output;
  CommandResult atol = run_parity({"run", model, "--pluginref", "--onnxrt", "--atol", "z:1e-3"});
  EXPECT_EQ(atol.exit_code, 2) << atol.output;
  EXPECT_TRUE(has(atol,
                  "failed to use --atol for output 'z': no compared output has that name; "
                  "did you mean 'y'?"))
      << atol.output;
  CommandResult shapes =
      run_parity({"run", model, "--pluginref", "--input-shapes", "xx:[1,1,2,2]"});
  EXPECT_EQ(shapes.exit_code, 2) << shapes.output;
  EXPECT_TRUE(has(shapes,
                  "failed to use --input-shapes for 'xx': the model has no input of that "
                  "name; did you mean 'x'?"))
      << shapes.output;
  CommandResult range = run_parity({"run", model, "--pluginref", "--val-range", "q:[0,1]"});
  EXPECT_EQ(range.exit_code, 2) << range.output;
  EXPECT_TRUE(has(range, "failed to use --val-range for 'q'")) << range.output;
}

TEST(CliVerdict, LayerwiseFallbackIsSaidAloud) {
  TempDir dir;
  CommandResult r =
      run_parity({"run", example("tiny_cnn.onnx"), "--pluginref", "--onnxrt", "--onnx-outputs",
                  "mark", "all", "--validate", "--atol", "1e-4", "--rtol", "1e-3"});
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_TRUE(has(r, "without the layer-wise summary: --validate needs every output in memory"))
      << r.output;
  // --save-outputs no longer needs it: the tensors are streamed to the file.
  CommandResult saved = run_parity({"run", example("tiny_cnn.onnx"), "--pluginref", "--onnxrt",
                                    "--onnx-outputs", "mark", "all", "--save-outputs",
                                    dir.file("all.json"), "--atol", "1e-4", "--rtol", "1e-3"});
  EXPECT_EQ(saved.exit_code, 0) << saved.output;
  EXPECT_FALSE(has(saved, "without the layer-wise summary")) << saved.output;
  EXPECT_TRUE(has(saved, "Layer-wise Summary")) << saved.output;
}

// A failed comparison names a known departure of ONNX Runtime that may explain it.
TEST(CliVerdict, AKnownDepartureIsNamedWhenTheComparisonFails) {
  TempDir dir;
  write_model_from_text(dir.file("pool.onnx"), R"(
    <ir_version: 9, opset_import: ["" : 19]>
    g (float[1,1,5] x) => (float[1,1,5] y) {
      y = AveragePool<kernel_shape = [2], dilations = [2], auto_pad = "SAME_UPPER">(x)
    }
  )");
  for (std::vector<std::string> extra :
       {std::vector<std::string>{}, std::vector<std::string>{"--onnx-outputs", "mark", "all"}}) {
    std::vector<std::string> args{"run", dir.file("pool.onnx"), "--onnxrt", "--pluginref"};
    args.insert(args.end(), extra.begin(), extra.end());
    CommandResult r = run_parity(args);
    EXPECT_EQ(r.exit_code, 1) << r.output;
    EXPECT_TRUE(has(r, "may meet a known ONNX Runtime departure from the specification"))
        << r.output;
    EXPECT_TRUE(has(r, "averagepool-same-upper-dilations")) << r.output;
  }
}

TEST(CliVerdict, OnlyRunIsFramedWithRunningAndPassedLines) {
  TempDir dir;
  CommandResult script = run_parity(
      {"run", example("identity.onnx"), "--pluginref", "--gen-script", dir.file("s.py")});
  EXPECT_EQ(script.exit_code, 0) << script.output;
  EXPECT_FALSE(has(script, "RUNNING")) << script.output;
  EXPECT_FALSE(has(script, "PASSED")) << script.output;
  CommandResult inspect = run_parity({"inspect", "model", example("identity.onnx")});
  EXPECT_EQ(inspect.exit_code, 0) << inspect.output;
  EXPECT_FALSE(has(inspect, "PASSED")) << inspect.output;
  EXPECT_FALSE(has(inspect, "RUNNING")) << inspect.output;
}

// Polygraphy's "Runtime:" counts from the start of its main, the command line's parsing
// included. Parity's counted from after it, and printed a fixed "Runtime: 0.000s" when a
// --plugins library failed to load: here ONNX Runtime's library, which takes milliseconds to
// load and is no plugin.
TEST(CliVerdict, TheRuntimeCountsFromTheStartOfTheCommand) {
  auto runtime_of = [](const CommandResult& r) {
    std::smatch m;
    EXPECT_TRUE(
        std::regex_search(r.output, m, std::regex(R"((PASSED|FAILED) \| Runtime: (\d+\.\d{3})s)")))
        << r.output;
    return m.size() == 3 ? std::stod(m[2]) : -1.0;
  };
  CommandResult plugin = run_parity(
      {"run", example("identity.onnx"), "--pluginref", "--plugins", PARITY_ORT_LIB_FOR_TESTS});
  EXPECT_EQ(plugin.exit_code, 1) << plugin.output;
  EXPECT_TRUE(has(plugin, "failed to load plugin library")) << plugin.output;
  EXPECT_GT(runtime_of(plugin), 0.0) << plugin.output;
  CommandResult run = run_parity({"run", example("identity.onnx"), "--pluginref"});
  EXPECT_EQ(run.exit_code, 0) << run.output;
  EXPECT_GT(runtime_of(run), 0.0) << run.output;
}

}  // namespace
}  // namespace parity::testing
