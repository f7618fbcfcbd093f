// `parity debug reduce` and `parity debug repeat` run as a user runs them: the printed lines
// against Polygraphy's (fixtures/debug), the reduced models checked with python3-onnx, native
// mode on a real disagreement of ONNX Runtime and the reference, and the usage errors.
#include <gtest/gtest.h>

#include <filesystem>
#include <regex>
#include <sstream>

#include "support/test_util.h"

namespace parity::testing {
namespace {

namespace fs = std::filesystem;

std::string fixture(const std::string& name) {
  return source_path("tests/cli/fixtures/debug/" + name);
}

// Lines that differ by nature (times, the command's path, dates in artifact names) made equal,
// and the lines Polygraphy printed about its own environment left out.
std::string normalise(const std::string& text) {
  static const std::vector<std::string> environment = {
      "'colored' module",
      "onnxruntime.tools.symbolic_shape_infer",
      "Note: Error was: No module named 'onnxruntime'",
      "POLYGRAPHY_AUTOINSTALL_DEPS",
      "Falling back to `onnx.shape_inference`",
      "Note that using ONNX-Runtime for shape inference",
      "Loading model: /tmp/tmp_polygraphy",
  };
  std::istringstream in(text);
  std::string line, out;
  while (std::getline(in, line)) {
    bool skip = false;
    for (const std::string& e : environment) skip |= line.find(e) != std::string::npos;
    if (skip) continue;
    line = std::regex_replace(line, std::regex(R"(Duration [0-9.e-]+s)"), "Duration Xs");
    line = std::regex_replace(line, std::regex(R"(Runtime: [0-9.]+s \| Command: .*)"),
                              "Runtime: Xs | Command: X");
    line =
        std::regex_replace(line, std::regex(R"(RUNNING \| Command: .*)"), "RUNNING | Command: X");
    line = std::regex_replace(line, std::regex(R"(Loading model: .*)"), "Loading model: X");
    line = std::regex_replace(line, std::regex(R"(_\d\d-\d\d-\d\d_\d\d-\d\d-\d\d_)"), "_DATE_");
    out += line + "\n";
  }
  return out;
}

// Runs `parity <args>` in `dir`.
CommandResult parity_in(const TempDir& dir, const std::string& args) {
  return run_command("cd '" + dir.path().string() + "' && " PARITY_CLI " " + args + " 2>&1");
}

void copy_scripts(const TempDir& dir) {
  for (const char* name :
       {"mk.py", "check.py", "flaky.py", "mk_fp16.py", "mk_branch.py", "check_add.py"})
    fs::copy_file(fixture(name), dir.file(name));
}

// The op types of a saved model, by python3-onnx (which also checks the model).
std::string op_types(const std::string& path) {
  const CommandResult r = run_python(
      "import onnx\nm = onnx.load('" + path +
      "')\nonnx.checker.check_model(m)\nprint(' '.join(n.op_type for n in m.graph.node))\n");
  EXPECT_EQ(r.exit_code, 0) << r.output;
  std::string s = r.output;
  while (!s.empty() && (s.back() == '\n' || s.back() == '\r')) s.pop_back();
  return s;
}

TEST(DebugReduceCli, BisectPrintsPolygraphysLinesAndKeepsTheSigmoid) {
  TempDir dir;
  copy_scripts(dir);
  ASSERT_EQ(run_command("cd '" + dir.path().string() + "' && /usr/bin/python3 mk.py").exit_code, 0);
  const CommandResult r =
      parity_in(dir,
                "debug reduce chain.onnx -o min.onnx --check /usr/bin/python3 check.py "
                "polygraphy_debug.onnx");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_EQ(normalise(r.output), normalise(read_text(fixture("polygraphy_reduce_bisect.txt"))));
  EXPECT_EQ(op_types(dir.file("min.onnx")), "Sigmoid");
  EXPECT_FALSE(fs::exists(dir.file("polygraphy_debug.onnx")));  // removed after each iteration
  EXPECT_TRUE(fs::exists(dir.file("polygraphy_debug_replay.json")));
}

TEST(DebugReduceCli, LinearPrintsPolygraphysLines) {
  TempDir dir;
  copy_scripts(dir);
  ASSERT_EQ(run_command("cd '" + dir.path().string() + "' && /usr/bin/python3 mk.py").exit_code, 0);
  const CommandResult r =
      parity_in(dir,
                "debug reduce chain.onnx -o min_lin.onnx --mode linear --check /usr/bin/python3 "
                "check.py polygraphy_debug.onnx");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_EQ(normalise(r.output), normalise(read_text(fixture("polygraphy_reduce_linear.txt"))));
  EXPECT_EQ(op_types(dir.file("min_lin.onnx")), "Sigmoid");
}

TEST(DebugReduceCli, MinGoodAndArtifactsAndReplay) {
  TempDir dir;
  copy_scripts(dir);
  ASSERT_EQ(run_command("cd '" + dir.path().string() + "' && /usr/bin/python3 mk.py").exit_code, 0);
  const CommandResult r =
      parity_in(dir,
                "debug reduce chain.onnx -o min.onnx --min-good good.onnx --artifacts "
                "polygraphy_debug.onnx --check /usr/bin/python3 check.py polygraphy_debug.onnx");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  // The passing model close in size holds no Sigmoid; every candidate was sorted.
  EXPECT_EQ(op_types(dir.file("good.onnx")).find("Sigmoid"), std::string::npos);
  size_t good = 0, bad = 0;
  for (const auto& e : fs::directory_iterator(dir.file("polygraphy_artifacts/good")))
    good += e.is_regular_file();
  for (const auto& e : fs::directory_iterator(dir.file("polygraphy_artifacts/bad")))
    bad += e.is_regular_file();
  EXPECT_EQ(good, 1u);
  EXPECT_EQ(bad, 4u);
  // A second session with the replay runs no check command.
  fs::remove(dir.file("min.onnx"));
  const CommandResult again = parity_in(
      dir,
      "debug reduce chain.onnx -o min.onnx --load-debug-replay polygraphy_debug_replay.json "
      "--save-debug-replay replay2.json --check /bin/false");
  ASSERT_EQ(again.exit_code, 0) << again.output;
  EXPECT_EQ(again.output.find("Running check command"), std::string::npos) << again.output;
  EXPECT_EQ(op_types(dir.file("min.onnx")), "Sigmoid");
}

TEST(DebugReduceCli, BranchCutOffFromTheNewInputsIsFrozen) {
  // relu -> exp -> sigmoid -> add(relu, sigmoid) -> neg; the check fails any model with the Add.
  // Cutting the inputs at the Sigmoid leaves the Add reading relu's output, whose own input is
  // no longer a graph input: it is frozen into an initializer (the relu folded away).
  TempDir dir;
  copy_scripts(dir);
  ASSERT_EQ(
      run_command("cd '" + dir.path().string() + "' && /usr/bin/python3 mk_branch.py").exit_code,
      0);
  const CommandResult r =
      parity_in(dir,
                "debug reduce branch.onnx -o min.onnx --artifacts polygraphy_debug.onnx --check "
                "/usr/bin/python3 check_add.py polygraphy_debug.onnx");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("Freezing tensor: Variable (x): (shape=[1, 4], dtype=float32) to "
                          "eliminate branches."),
            std::string::npos)
      << r.output;
  EXPECT_EQ(op_types(dir.file("min.onnx")), "Add");
  std::string frozen;
  for (const auto& e : fs::directory_iterator(dir.file("polygraphy_artifacts/bad")))
    if (e.path().filename().string().find("_N0_inputs") != std::string::npos) frozen = e.path();
  ASSERT_FALSE(frozen.empty());
  EXPECT_EQ(op_types(frozen), "Sigmoid Add");
  const CommandResult init = run_python(
      "import onnx\nm = onnx.load('" + frozen +
      "')\nprint([(i.name, list(i.dims)) for i in m.graph.initializer], [i.name for i in "
      "m.graph.input])\n");
  EXPECT_NE(init.output.find("[('a', [1, 4])] ['e']"), std::string::npos) << init.output;
}

TEST(DebugRepeatCli, UntilBadPrintsPolygraphysLinesAndSortsArtifacts) {
  TempDir dir;
  copy_scripts(dir);
  const CommandResult r = parity_in(
      dir, "debug repeat --until bad --artifacts art.txt --check /usr/bin/python3 flaky.py");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_EQ(normalise(r.output), normalise(read_text(fixture("polygraphy_repeat_until_bad.txt"))));
  size_t good = 0;
  for (const auto& e : fs::directory_iterator(dir.file("polygraphy_artifacts/good")))
    good += e.is_regular_file();
  EXPECT_EQ(good, 2u);
}

TEST(DebugRepeatCli, FailRegexHideOutputAndIterationInfo) {
  TempDir dir;
  // Exits 0 but prints the failure's words: --fail-regex alone makes it a failure. The
  // command also copies the iteration-info file, to see what it held during the iteration.
  const CommandResult r =
      parity_in(dir,
                "debug repeat --until 2 --fail-regex 'bo+m' --hide-fail-output --iteration-info "
                "info.json --check sh -c 'cp info.json seen.json; echo boom'");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("Finished 2 iteration(s) | Passed: 0/2 | Pass Rate: 0.0%"),
            std::string::npos)
      << r.output;
  EXPECT_EQ(r.output.find("CAPTURED STDOUT"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("`--artifacts` was not specified"), std::string::npos);
  EXPECT_FALSE(fs::exists(dir.file("info.json")));  // removed after each iteration
  const CommandResult info =
      run_python("import json\nprint(json.load(open('" + dir.file("seen.json") + "')))\n");
  EXPECT_NE(info.output.find("{'iteration': 1}"), std::string::npos) << info.output;
  // --fail-code narrows the regex to the listed exit statuses.
  const CommandResult codes = parity_in(
      dir, "debug repeat --until 1 --fail-code 3 --fail-regex boom --check sh -c 'echo boom'");
  EXPECT_NE(codes.output.find("Passed: 1/1"), std::string::npos) << codes.output;
}

TEST(DebugReduceCli, NativeFindsWhereOnnxRuntimeAndTheReferenceDisagree) {
  // ONNX Runtime computes a float16 Add fed by a Cast differently from the reference (which
  // rounds the Cast, then the Add): the reduced model is that Cast and Add, found from the
  // first divergence in a few in-process candidates.
  TempDir dir;
  copy_scripts(dir);
  ASSERT_EQ(run_command("cd '" + dir.path().string() +
                        "' && /usr/bin/python3 mk_fp16.py 1000 500 big.onnx")
                .exit_code,
            0);
  const CommandResult r = parity_in(dir, "debug reduce big.onnx --onnxrt --pluginref -o min.onnx");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("Starting from the first divergence: node 'add16_500' (Add)"),
            std::string::npos);
  EXPECT_EQ(op_types(dir.file("min.onnx")), "Cast Add");
  EXPECT_EQ(r.output.find("Running check command"), std::string::npos);
}

TEST(DebugReduceCli, LayerwiseInputsGiveCandidatesTheFullModelsValues) {
  // The workflow of issue 13: save every tensor of a reference run, merge inputs and tensors
  // into one input file (what `data to-input` writes; here the same merge in a few lines of
  // Python on Polygraphy's JSON), and let the check command load it: each candidate's new graph
  // inputs then get the values they had in the full model.
  TempDir dir;
  copy_scripts(dir);
  const std::string at = "cd '" + dir.path().string() + "' && ";
  ASSERT_EQ(run_command(at + "/usr/bin/python3 mk_fp16.py 20 10 m.onnx").exit_code, 0);
  const CommandResult saved =
      run_command(at + PARITY_CLI
                  " run m.onnx --pluginref --onnx-outputs mark all --save-outputs out.json "
                  "--save-inputs in.json 2>&1");
  ASSERT_EQ(saved.exit_code, 0) << saved.output;
  const CommandResult merged =
      run_python("import json, os\nos.chdir('" + dir.path().string() +
                 "')\ninputs = json.load(open('in.json'))\nresults = json.load(open('out.json'))\n"
                 "tensors = results['lst'][0][1][0]['outputs']\n"
                 "inputs[0].update({k: v['values'] for k, v in tensors.items()})\n"
                 "json.dump(inputs, open('layerwise.json', 'w'))\n");
  ASSERT_EQ(merged.exit_code, 0) << merged.output;
  const CommandResult r = run_command(
      at + PARITY_CLI " debug reduce m.onnx -o min.onnx --load-inputs layerwise.json --check " +
      PARITY_CLI
      " run polygraphy_debug.onnx --onnxrt --pluginref --load-inputs layerwise.json 2>&1");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_EQ(op_types(dir.file("min.onnx")), "Cast Add");
  // Candidates start at intermediate tensors, and none was refused for a missing input.
  EXPECT_NE(r.output.find("Marking model inputs: [Variable (t9)"), std::string::npos);
  EXPECT_EQ(r.output.find("missing"), std::string::npos) << r.output;
}

TEST(DebugReduceCli, ModelWithExternalDataInAnotherFolder) {
  // Candidates keep their weights readable: each is saved with its external data beside it,
  // and nothing of them is left behind.
  TempDir dir;
  copy_scripts(dir);
  const std::string at = "cd '" + dir.path().string() + "' && ";
  ASSERT_EQ(run_command(at + "mkdir weights run && /usr/bin/python3 mk_fp16.py 20 10 m.onnx && "
                             "/usr/bin/python3 -c \"import onnx; onnx.save(onnx.load('m.onnx'), "
                             "'weights/m.onnx', save_as_external_data=True, location='m.data', "
                             "size_threshold=0)\"")
                .exit_code,
            0);
  const CommandResult r = run_command(
      at + "cd run && " PARITY_CLI " debug reduce ../weights/m.onnx -o min.onnx --check " +
      PARITY_CLI " run polygraphy_debug.onnx --onnxrt --pluginref 2>&1");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_EQ(op_types(dir.file("run/min.onnx")), "Cast Add");
  EXPECT_TRUE(fs::exists(dir.file("run/min.onnx.data")));
  EXPECT_FALSE(fs::exists(dir.file("run/polygraphy_debug.onnx")));
  EXPECT_FALSE(fs::exists(dir.file("run/polygraphy_debug.onnx.data")));
}

TEST(DebugReduceCli, UsageErrors) {
  TempDir dir;
  copy_scripts(dir);
  ASSERT_EQ(run_command("cd '" + dir.path().string() + "' && /usr/bin/python3 mk.py").exit_code, 0);
  CommandResult r = parity_in(dir, "debug reduce chain.onnx --check true");
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.output.find("--output (where to write the reduced model) and/or --min-good"),
            std::string::npos);
  r = parity_in(dir, "debug reduce chain.onnx -o m.onnx --onnxrt --check true");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.output.find("failed to use --onnxrt with --check"), std::string::npos) << r.output;
  r = parity_in(dir, "debug reduce chain.onnx -o m.onnx --mode half");
  EXPECT_EQ(r.exit_code, 2);
  r = parity_in(dir, "debug reduce chain.onnx -o m.onnx --pluginref");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.output.find("it compares exactly two backends"), std::string::npos) << r.output;
  r = parity_in(dir, "debug reduce chain.onnx -o m.onnx --check /nonexistent/checker");
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.output.find("failed to run the check command '/nonexistent/checker'"),
            std::string::npos)
      << r.output;
  write_text(dir.file("polygraphy_debug.onnx"), "keep me");
  r = parity_in(dir, "debug reduce chain.onnx -o m.onnx --check true");
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.output.find("polygraphy_debug.onnx already exists, refusing to overwrite"),
            std::string::npos);
  EXPECT_EQ(read_text(dir.file("polygraphy_debug.onnx")), "keep me");
  r = parity_in(dir, "debug repeat --until often --check true");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.output.find("--until value must be an integer, 'good', or 'bad', but was: often"),
            std::string::npos);
}

}  // namespace
}  // namespace parity::testing
