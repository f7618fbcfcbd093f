// `parity run` layer-wise: the first divergence and local errors from the command line, memory
// that stays inside --mark-budget with hundreds of large marked tensors, --compare distance and
// quality, --report, and `parity inspect data` on results with many outputs.
#include <gtest/gtest.h>

#include <map>
#include <regex>
#include <sstream>

#include "support/onnx_text.h"
#include "support/test_util.h"

namespace parity::testing {
namespace {

// Model A; model B is A with LeakyRelu in place of the Relu named "faulty".
std::string divergent_model(const std::string& op) {
  return R"(
    <ir_version: 8, opset_import: ["" : 17]>
    g (float[4,64] x) => (float[4,64] y) {
      a = Sin(x)
      b = Mul(a, a)
      quarter = Constant <value = float {0.25}> ()
      d = Sub(b, quarter)
      e = )" +
         op + R"((d)
      f = Exp(e)
      y = Add(f, b)
    })";
}

// The name the loader gives the Relu node (unnamed nodes are "<op_type>_<index>").
const std::string kFaulty = "Relu_4";

TEST(CliLayerwise, FirstDivergenceAndLocalErrorAgainstSavedResults) {
  TempDir dir;
  const std::string a = dir.file("a.onnx"), b = dir.file("b.onnx");
  write_model_from_text(a, divergent_model("Relu"));
  write_model_from_text(b, divergent_model("LeakyRelu <alpha = 0.5>"));
  const std::string saved = dir.file("b.json"), report = dir.file("report.html");
  auto save = run_parity({"run", b, "--pluginref", "--onnx-outputs", "mark", "all", "--val-range",
                          "[-1.5,1.5]", "--save-outputs", saved});
  ASSERT_EQ(save.exit_code, 0) << save.output;

  auto r = run_parity({"run", a, "--pluginref", "--onnx-outputs", "mark", "all", "--val-range",
                       "[-1.5,1.5]", "--load-outputs", saved, "--local-error", "--report", report,
                       "--mark-budget", "2K"});
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_NE(r.output.find("First divergence: node '" + kFaulty + "' (Relu), node 5 of 7"),
            std::string::npos)
      << r.output;
  EXPECT_NE(r.output.find("Outputs: 'e' fails"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("Inputs: 'd' passes"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("1. '" + kFaulty + "' (Relu) | local error/tolerance="),
            std::string::npos)
      << r.output;
  EXPECT_NE(r.output.find("1 failing node(s) add error of their own; 2 only inherit it"),
            std::string::npos)
      << r.output;
  EXPECT_NE(r.output.find("Comparing Output: 'y' (dtype=float32, shape=(4, 64)) | FAILED"),
            std::string::npos)
      << r.output;
  const std::string html = read_text(report);
  EXPECT_NE(html.find("id=\"first-divergence-node\">" + kFaulty + "<"), std::string::npos);
}

TEST(CliLayerwise, ReferenceAgainstOnnxRuntimePassesWithSummary) {
  auto r = run_parity({"run", source_path("examples/tiny_cnn.onnx"), "--pluginref", "--onnxrt",
                       "--onnx-outputs", "mark", "all", "--atol", "1e-4", "--rtol", "1e-3",
                       "--local-error", "--mark-budget", "64K"});
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("Layer-wise Summary | pluginref-runner"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("10/10 tensors passed"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("Largest local errors"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("Passed: 1/1 iterations"), std::string::npos) << r.output;
}

// No line of a layer-wise run is printed twice (times masked): the other backend's start-up
// lines ("Creating ONNX-Runtime Inference Session ...") come once however many batches it runs
// (every batch's with -v), and the summary, the first divergence and the local errors once each.
TEST(CliLayerwise, NoLineIsPrintedTwice) {
  TempDir dir;
  const std::string model = source_path("examples/tiny_cnn.onnx");
  const std::vector<std::vector<std::string>> runs = {
      {"--pluginref", "--onnxrt"},
      // Exact tolerances: a first divergence, local errors, and a failing verdict.
      {"--onnxrt", "--pluginref", "--atol", "0", "--rtol", "0", "--local-error"},
      // A budget of a few tensors: the run is cut into batches, one session each.
      {"--pluginref", "--onnxrt", "--mark-budget", "20K", "--local-error"},
      {"--pluginref", "--onnxrt", "--save-outputs", dir.file("all.json"), "--report",
       dir.file("report.html")},
  };
  for (const auto& flags : runs) {
    std::vector<std::string> args{"run", model, "--onnx-outputs", "mark", "all"};
    args.insert(args.end(), flags.begin(), flags.end());
    const CommandResult r = run_parity(args);
    ASSERT_TRUE(r.exit_code == 0 || r.exit_code == 1) << r.output;
    ASSERT_NE(r.output.find("Layer-wise Summary"), std::string::npos) << r.output;
    std::map<std::string, int> seen;
    std::istringstream lines(r.output);
    for (std::string line; std::getline(lines, line);) {
      if (line.empty()) continue;
      line = std::regex_replace(line, std::regex(R"(\d\d:\d\d:\d\d)"), "<time>");
      line = std::regex_replace(line, std::regex(R"(Runtime: [0-9.]+s)"), "Runtime: <t>");
      EXPECT_EQ(++seen[line], 1) << "printed twice: " << line << "\n" << r.output;
    }
  }
}

// Local errors need each node's inputs from ONNX Runtime; a Constant's output cannot be marked
// there and comes from the reference.
TEST(CliLayerwise, LocalErrorWithOnnxRuntimeAndConstants) {
  TempDir dir;
  const std::string a = dir.file("a.onnx");
  write_model_from_text(a, divergent_model("Relu"));
  auto r = run_parity({"run", a, "--onnxrt", "--pluginref", "--onnx-outputs", "mark", "all",
                       "--local-error", "--val-range", "[-1.5,1.5]"});
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("6/6 tensors passed"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("'Sub_3' (Sub) | local error/tolerance="), std::string::npos) << r.output;
  // ONNX Runtime is the first runner: it is out0 and the reference is the denominator.
  EXPECT_NE(r.output.find("Layer-wise Summary | onnxrt-runner"), std::string::npos) << r.output;
}

// A chain of 300 Adds over 1M floats: 1.2 GB of intermediates per backend if every marked
// tensor were kept. The peak RSS of the parity process must stay near the budget.
TEST(CliLayerwise, MarkAllStaysInsideTheBudget) {
  TempDir dir;
  const std::string model = dir.file("chain.onnx");
  constexpr int kNodes = 300;
  std::string text = R"(
    <ir_version: 8, opset_import: ["" : 17]>
    g (float[1048576] x) => (float[1048576] t300) {
      one = Constant <value = float {1.0}> ()
      t1 = Add(x, one)
  )";
  for (int i = 2; i <= kNodes; ++i) text += fmt::format("t{} = Add(t{}, one)\n", i, i - 1);
  write_model_from_text(model, text + "}");
  const std::string script = fmt::format(R"(
import resource, subprocess, sys
p = subprocess.run(["{}", "run", "{}", "--pluginref", "--onnxrt", "--onnx-outputs", "mark",
                    "all", "--mark-budget", "64M", "--ort-threads", "1"],
                   stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
print(p.stdout[-3000:])
print("EXIT", p.returncode)
print("PEAK_KB", resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)
)",
                                         PARITY_CLI, model);
  CommandResult r = run_python(script);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("EXIT 0"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("300/300 tensors passed"), std::string::npos) << r.output;
  const size_t at = r.output.find("PEAK_KB ");
  ASSERT_NE(at, std::string::npos);
  const long peak_mb = std::stol(r.output.substr(at + 8)) / 1024;
  // Budget 64 MiB; ONNX Runtime, the model, the feed and the live values take the rest. Keeping
  // every marked tensor would take 1200 MiB per backend.
  EXPECT_LT(peak_mb, 64 + 250) << r.output;
  std::cout << "peak RSS of `parity run` with 300 marked 4 MiB tensors: " << peak_mb << " MiB\n";
}

TEST(CliLayerwise, DistanceAndQualityOnTheCommandLine) {
  TempDir dir;
  const std::string a = dir.file("a.onnx"), b = dir.file("b.onnx"), saved = dir.file("b.json");
  write_model_from_text(a, divergent_model("Relu"));
  write_model_from_text(b, divergent_model("LeakyRelu <alpha = 0.5>"));
  ASSERT_EQ(
      run_parity({"run", b, "--pluginref", "--save-outputs", saved, "--val-range", "[-1.5,1.5]"})
          .exit_code,
      0);
  auto fails = run_parity({"run", a, "--pluginref", "--load-outputs", saved, "--val-range",
                           "[-1.5,1.5]", "--compare", "distance"});
  EXPECT_EQ(fails.exit_code, 1) << fails.output;
  EXPECT_NE(fails.output.find("Distance Metrics: L2 norm="), std::string::npos) << fails.output;
  auto passes = run_parity({"run", a, "--pluginref", "--load-outputs", saved, "--val-range",
                            "[-1.5,1.5]", "--compare", "distance", "--l2-tolerance", "y:100",
                            "--cosine-similarity-threshold", "0.5"});
  EXPECT_EQ(passes.exit_code, 0) << passes.output;
  auto quality = run_parity({"run", a, "--pluginref", "--load-outputs", saved, "--val-range",
                             "[-1.5,1.5]", "--compare", "quality", "--psnr-tolerance", "1",
                             "--snr-tolerance", "y:1", "--report", dir.file("q.html")});
  EXPECT_EQ(quality.exit_code, 0) << quality.output;
  EXPECT_NE(quality.output.find("Quality Metrics: PSNR="), std::string::npos) << quality.output;
  EXPECT_NE(read_text(dir.file("q.html")).find("compared with <b>quality</b>"), std::string::npos);
}

TEST(CliLayerwise, BadValuesAreUsageErrors) {
  const std::string model = source_path("examples/tiny_cnn.onnx");
  auto budget = run_parity({"run", model, "--pluginref", "--pluginref", "--onnx-outputs", "mark",
                            "all", "--mark-budget", "12Q"});
  EXPECT_EQ(budget.exit_code, 2) << budget.output;
  EXPECT_NE(budget.output.find("failed to parse --mark-budget with value '12Q'"), std::string::npos)
      << budget.output;
  auto cosine = run_parity(
      {"run", model, "--pluginref", "--compare", "distance", "--cosine-similarity-threshold", "2"});
  EXPECT_EQ(cosine.exit_code, 2) << cosine.output;
  EXPECT_NE(cosine.output.find("a cosine similarity is within [-1, 1]"), std::string::npos);
  auto compare = run_parity({"run", model, "--pluginref", "--compare", "nearest"});
  EXPECT_EQ(compare.exit_code, 2) << compare.output;
}

TEST(CliLayerwise, TwoReferenceRunnersCompareLayerwise) {
  auto r = run_parity({"run", source_path("examples/tiny_cnn.onnx"), "--pluginref", "--pluginref",
                       "--onnx-outputs", "mark", "all"});
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("10/10 tensors passed | 1 batch(es)"), std::string::npos) << r.output;
}

// Python that decodes Polygraphy's results file `path` into {runner: [{name: array}]}.
const char* kLoadResults = R"(
import base64, io, json
import numpy as np
def load_results(path):
    doc = json.load(open(path))
    assert doc['polygraphy_class'] == 'RunResults'
    out = {}
    for runner, its in doc['lst']:
        out[runner] = [{k: np.load(io.BytesIO(base64.b64decode(v['values']['array'])))
                        for k, v in it['outputs'].items()} for it in its]
    return out
)";

// --save-outputs with mark all, one streaming runner: every tensor streamed to the file (a
// golden file), each equal to NumPy's computation of the model on the saved inputs; then the
// golden file drives a layer-wise comparison node by node, with local errors from its inputs.
// ONNX Runtime cannot stream its tensors; alone with mark all and --save-outputs it computes
// them in batches of nodes (each batch only its slice of the model) within --mark-budget, and
// the file holds every tensor with the values NumPy computes.
TEST(CliLayerwise, SaveOutputsOfOnnxRuntimeAloneComeInBatchesOfNodes) {
  TempDir dir;
  const std::string b = dir.file("b.onnx");
  write_model_from_text(b, divergent_model("LeakyRelu <alpha = 0.5>"));
  const std::string golden = dir.file("golden.json"), inputs = dir.file("inputs.json");
  // 4x64 float32 tensors are 1 KiB each: a 1 KiB budget makes one batch per node.
  auto save = run_parity({"run", b, "--onnxrt", "--onnx-outputs", "mark", "all", "--val-range",
                          "[-1.5,1.5]", "--mark-budget", "1K", "--save-outputs", golden,
                          "--save-inputs", inputs, "-v"});
  ASSERT_EQ(save.exit_code, 0) << save.output;
  EXPECT_NE(save.output.find("in batches of nodes"), std::string::npos) << save.output;
  EXPECT_NE(save.output.find("computes nodes 7 to 7 of 7"), std::string::npos) << save.output;
  EXPECT_EQ(save.output.find("without the layer-wise summary"), std::string::npos) << save.output;
  CommandResult check = run_python(std::string(kLoadResults) + fmt::format(R"(
results = load_results('{}')
feeds = json.load(open('{}'))
[(runner, its)] = results.items()
assert runner.startswith('onnxrt-runner'), runner
[it], [feed] = its, feeds
x = np.load(io.BytesIO(base64.b64decode(feed['x']['array'])))
a = np.sin(x); b = a * a; d = b - np.float32(0.25)
e = np.where(d > 0, d, d * np.float32(0.5)); f = np.exp(e); y = f + b
assert list(it) == ['a', 'b', 'd', 'e', 'f', 'y'], list(it)
for name, want in zip('abdefy', [a, b, d, e, f, y]):
    assert np.allclose(it[name], want, rtol=1e-5, atol=1e-6), name
print('OK')
)",
                                                                           golden, inputs));
  ASSERT_EQ(check.exit_code, 0) << check.output;
  EXPECT_NE(check.output.find("OK"), std::string::npos) << check.output;
}

TEST(CliLayerwise, SaveOutputsStreamsAGoldenFileThatComparesNodeByNode) {
  TempDir dir;
  const std::string a = dir.file("a.onnx"), b = dir.file("b.onnx");
  write_model_from_text(a, divergent_model("Relu"));
  write_model_from_text(b, divergent_model("LeakyRelu <alpha = 0.5>"));
  const std::string golden = dir.file("golden.json"), inputs = dir.file("inputs.json");
  auto save = run_parity({"run", b, "--pluginref", "--onnx-outputs", "mark", "all", "--val-range",
                          "[-1.5,1.5]", "--iterations", "2", "--save-outputs", golden,
                          "--save-inputs", inputs});
  ASSERT_EQ(save.exit_code, 0) << save.output;
  EXPECT_NE(save.output.find("Saving inference results to " + golden), std::string::npos);
  EXPECT_EQ(save.output.find("without the layer-wise summary"), std::string::npos) << save.output;
  CommandResult check = run_python(std::string(kLoadResults) + fmt::format(R"(
results = load_results('{}')
feeds = json.load(open('{}'))
[(runner, its)] = results.items()
assert runner.startswith('pluginref-runner'), runner
assert len(its) == 2 and len(feeds) == 2
for it, feed in zip(its, feeds):
    x = np.load(io.BytesIO(base64.b64decode(feed['x']['array'])))
    a = np.sin(x); b = a * a; d = b - np.float32(0.25)
    e = np.where(d > 0, d, d * np.float32(0.5)); f = np.exp(e); y = f + b
    assert list(it) == ['a', 'b', 'd', 'e', 'f', 'y'], list(it)
    for name, want in zip('abdefy', [a, b, d, e, f, y]):
        assert it[name].dtype == np.float32 and it[name].shape == (4, 64)
        assert np.allclose(it[name], want, rtol=1e-6, atol=1e-6), name
print('OK')
)",
                                                                           golden, inputs));
  ASSERT_EQ(check.exit_code, 0) << check.output;
  EXPECT_NE(check.output.find("OK"), std::string::npos) << check.output;

  auto r = run_parity({"run", a, "--pluginref", "--onnx-outputs", "mark", "all", "--load-inputs",
                       inputs, "--load-outputs", golden, "--local-error"});
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_NE(r.output.find("Passed: 0/2 iterations"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("First divergence: node '" + kFaulty + "' (Relu), node 5 of 7"),
            std::string::npos)
      << r.output;
  EXPECT_NE(r.output.find("1. '" + kFaulty + "' (Relu) | local error/tolerance="),
            std::string::npos)
      << r.output;
}

// Two runners layer-wise with --save-outputs: both runners' tensors saved, in command-line
// order, in Polygraphy's format, while the comparison stays layer-wise.
TEST(CliLayerwise, SaveOutputsOfALayerwiseRunHoldsBothRunners) {
  TempDir dir;
  const std::string a = dir.file("a.onnx"), saved = dir.file("both.json");
  write_model_from_text(a, divergent_model("Relu"));
  auto r =
      run_parity({"run", a, "--onnxrt", "--pluginref", "--onnx-outputs", "mark", "all",
                  "--val-range", "[-1.5,1.5]", "--save-outputs", saved, "--mark-budget", "2K"});
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("Layer-wise Summary | onnxrt-runner"), std::string::npos) << r.output;
  CommandResult check = run_python(std::string(kLoadResults) + fmt::format(R"(
results = load_results('{}')
names = list(results)
assert len(names) == 2 and names[0].startswith('onnxrt-runner') and names[1].startswith('pluginref-runner'), names
ort, ref = results[names[0]][0], results[names[1]][0]
assert list(ort) == list(ref) == ['a', 'b', 'd', 'e', 'f', 'y'], (list(ort), list(ref))
for k in ort:
    assert np.allclose(ort[k], ref[k], rtol=1e-5, atol=1e-5), k
print('OK')
)",
                                                                           saved));
  ASSERT_EQ(check.exit_code, 0) << check.output;
  EXPECT_NE(check.output.find("OK"), std::string::npos) << check.output;
  // The saved file reads back as two runners' results.
  auto inspect = run_parity({"inspect", "data", saved});
  EXPECT_EQ(inspect.exit_code, 0) << inspect.output;
}

// A golden file that Polygraphy saved (fixtures/layerwise_golden/README.md): compared node by
// node, the first divergence is the node whose scale differs, and its local error comes from the
// golden file's inputs to it.
TEST(CliLayerwise, GoldenFileSavedByPolygraphyComparesNodeByNode) {
  const std::string dir = source_path("tests/cli/fixtures/layerwise_golden");
  auto r = run_parity({"run", dir + "/a.onnx", "--pluginref", "--onnx-outputs", "mark", "all",
                       "--load-inputs", dir + "/inputs.json", "--load-outputs",
                       dir + "/golden.json", "--local-error"});
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_NE(r.output.find("2/4 tensors passed"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("First divergence: node 'norm2' (InstanceNormalization), node 3 of 4"),
            std::string::npos)
      << r.output;
  EXPECT_NE(r.output.find("Inputs: 'i1' passes"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("4. 'copy2' (Identity) | local error/tolerance=0 |"), std::string::npos)
      << r.output;
  auto b = run_parity({"run", dir + "/b.onnx", "--pluginref", "--onnx-outputs", "mark", "all",
                       "--load-inputs", dir + "/inputs.json", "--load-outputs",
                       dir + "/golden.json", "--atol", "1e-5", "--rtol", "1e-5"});
  EXPECT_EQ(b.exit_code, 0) << b.output;
  EXPECT_NE(b.output.find("4/4 tensors passed"), std::string::npos) << b.output;
}

// A real float16 model on both backends. Whether ONNX Runtime's float16 Add is correctly rounded
// is decided by NumPy from the saved tensors (its own inputs added in float64, rounded once);
// Parity must name the Add the first divergence with the finding exactly when NumPy finds
// it is not, and the Casts before it (identical on both) must pass.
TEST(CliLayerwise, Float16FindingsAgreeWithNumPy) {
  TempDir dir;
  const std::string model = dir.file("half.onnx"), saved = dir.file("half.json");
  write_model_from_text(model, R"(
    <ir_version: 8, opset_import: ["" : 17]>
    g (float[4096] x, float[4096] z) => (float16[4096] y) {
      s = Sin(x)
      h = Cast <to = 10> (s)
      k = Cast <to = 10> (z)
      a = Add(h, k)
      y = Mul(a, k)
    })");
  auto r = run_parity({"run", model, "--onnxrt", "--pluginref", "--onnx-outputs", "mark", "all",
                       "--val-range", "[-3,3]", "--save-outputs", saved});
  CommandResult check = run_python(std::string(kLoadResults) + fmt::format(R"(
results = load_results('{}')
for runner, [it] in results.items():
    exact = (it['h'].astype(np.float64) + it['k'].astype(np.float64)).astype(np.float16)
    print(runner.split('-')[0], 'ROUNDED' if np.array_equal(exact, it['a']) else 'NOT-ROUNDED')
)",
                                                                           saved));
  ASSERT_EQ(check.exit_code, 0) << check.output;
  EXPECT_NE(check.output.find("pluginref ROUNDED"), std::string::npos) << check.output;
  EXPECT_NE(r.output.find("'h' (dtype=float16, shape=(4096,)) | PASSED"), std::string::npos)
      << r.output;
  const bool ort_rounds = check.output.find("onnxrt ROUNDED") != std::string::npos;
  const std::string finding = "float16 Add is not correctly rounded";
  if (ort_rounds) {
    EXPECT_EQ(r.output.find(finding), std::string::npos) << r.output;
  } else {
    EXPECT_EQ(r.exit_code, 1) << r.output;
    EXPECT_NE(r.output.find("First divergence: node 'Add_3' (Add), node 4 of 5"), std::string::npos)
        << r.output;
    EXPECT_NE(r.output.find(finding), std::string::npos) << r.output;
    EXPECT_NE(r.output.find("one float16 ulp needs --rtol 0.000977 (2^-10)"), std::string::npos)
        << r.output;
  }
}

// The "Comparing Output" lines of a run, in order.
std::vector<std::string> comparison_lines(const std::string& output) {
  std::vector<std::string> lines;
  std::istringstream in(output);
  for (std::string line; std::getline(in, line);)
    if (line.find("Comparing Output:") != std::string::npos) lines.push_back(line);
  return lines;
}

// With a budget of one node per batch, ONNX Runtime computes each batch's slice of the model
// alone, fed with its own earlier values ('b' crosses from the second node to the last): every
// tensor's error is the same as when one batch computes the whole model, local errors included.
TEST(CliLayerwise, SlicedBatchesGiveTheWholeModelsAnswer) {
  TempDir dir;
  const std::string a = dir.file("a.onnx");
  write_model_from_text(a, divergent_model("Relu"));
  std::vector<std::string> flags = {"run",  a,     "--pluginref",   "--onnxrt",    "--onnx-outputs",
                                    "mark", "all", "--local-error", "--val-range", "[-1.5,1.5]",
                                    "-v"};
  auto whole = run_parity(flags);
  flags.insert(flags.end(), {"--mark-budget", "2K"});
  auto sliced = run_parity(flags);
  ASSERT_EQ(whole.exit_code, 0) << whole.output;
  ASSERT_EQ(sliced.exit_code, 0) << sliced.output;
  EXPECT_NE(whole.output.find("| 1 batch(es)"), std::string::npos) << whole.output;
  EXPECT_NE(sliced.output.find("| 6 batch(es)"), std::string::npos) << sliced.output;
  // Each batch computes its own nodes only: the last one is the final Add, fed with 'f' and 'b'.
  EXPECT_NE(sliced.output.find("computes nodes 1 to 1 of 7"), std::string::npos) << sliced.output;
  EXPECT_NE(sliced.output.find("computes nodes 7 to 7 of 7 (2 input(s), 1 output(s))"),
            std::string::npos)
      << sliced.output;
  EXPECT_NE(whole.output.find("computes nodes 1 to 7 of 7"), std::string::npos) << whole.output;
  const auto lines = comparison_lines(whole.output);
  EXPECT_EQ(lines.size(), 6u);
  EXPECT_EQ(lines, comparison_lines(sliced.output));
  // Max errors are not all zero: the comparison compares two backends' own values.
  EXPECT_NE(whole.output.find("max-abs=5.9605e-08"), std::string::npos) << whole.output;
}

// Several iterations whose marked tensors fit the budget: one ONNX Runtime session for the run.
TEST(CliLayerwise, OnnxRuntimeSessionIsBuiltOncePerRun) {
  auto r = run_parity({"run", source_path("examples/tiny_cnn.onnx"), "--onnxrt", "--pluginref",
                       "--onnx-outputs", "mark", "all", "--iterations", "5", "-v"});
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("Passed: 5/5 iterations"), std::string::npos) << r.output;
  size_t sessions = 0;
  for (size_t at = r.output.find("Creating ONNX-Runtime Inference Session");
       at != std::string::npos;
       at = r.output.find("Creating ONNX-Runtime Inference Session", at + 1))
    ++sessions;
  EXPECT_EQ(sessions, 1u) << r.output;
}

TEST(CliLayerwise, LocalErrorWithoutASecondSourceIsAUsageError) {
  auto r =
      run_parity({"run", source_path("examples/tiny_cnn.onnx"), "--pluginref", "--onnx-outputs",
                  "mark", "all", "--local-error", "--save-outputs", "/tmp/never-written.json"});
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("failed to use --local-error"), std::string::npos) << r.output;
}

TEST(CliInspect, ManyOutputsGetOneLineEach) {
  TempDir dir;
  const std::string model = dir.file("chain.onnx"), saved = dir.file("out.json");
  std::string text = R"(
    <ir_version: 8, opset_import: ["" : 17]>
    g (float[2,3] x) => (float[2,3] t12) {
      one = Constant <value = float {1.0}> ()
      t1 = Add(x, one)
  )";
  for (int i = 2; i <= 12; ++i) text += fmt::format("t{} = Add(t{}, one)\n", i, i - 1);
  write_model_from_text(model, text + "}");
  ASSERT_EQ(run_parity({"run", model, "--pluginref", "--onnx-outputs", "mark", "all",
                        "--save-outputs", saved, "--val-range", "[0,0]"})
                .exit_code,
            0);
  auto r = run_parity({"inspect", "data", saved});
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("name | dtype   | shape  | min | max | mean"), std::string::npos)
      << r.output;
  // Inputs are all 0: t<k> holds k everywhere.
  EXPECT_NE(r.output.find("t12  | float32 | (2, 3) |  12 |  12 |   12"), std::string::npos)
      << r.output;
  EXPECT_EQ(r.output.find("Stats:"), std::string::npos) << r.output;
  auto hist = run_parity({"inspect", "data", saved, "--histogram"});
  ASSERT_EQ(hist.exit_code, 0) << hist.output;
  size_t histograms = 0;
  for (size_t p = 0; (p = hist.output.find("---- Histogram ----", p)) != std::string::npos; ++p)
    ++histograms;
  EXPECT_EQ(histograms, 12u) << hist.output;
}

}  // namespace
}  // namespace parity::testing
