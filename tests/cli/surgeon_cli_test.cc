// `parity surgeon extract` and `parity surgeon sanitize`: Polygraphy's printed lines (kept as
// fixtures), written models checked by python3-onnx's checker and run on both backends against
// the original's outputs, external data written and relocated, and bad input refused with
// the input model untouched.
#include <gtest/gtest.h>

#include <filesystem>

#include "support/onnx_text.h"
#include "support/test_util.h"

namespace parity::testing {
namespace {

namespace fs = std::filesystem;

// x -> Add w -> a -> Relu -> b -> Mul(b, x) -> c -> Abs -> y (the fixtures' m.onnx).
const char* kChainText = R"(
  <ir_version: 8, opset_import: ["" : 17]>
  g (float[N, 4] x) => (float[N, 4] y) <float[4] w = {0, 1, 2, 3}> {
    a = Add (x, w)
    b = Relu (a)
    c = Mul (b, x)
    y = Abs (c)
  }
)";

// A constant chain beside the input, with a Shape of a known shape.
const char* kFoldText = R"(
  <ir_version: 8, opset_import: ["" : 17]>
  g (float[2, 3] x) => (float[3, 2] y) <float[3] w = {1, 2, 3}, int64[1] one = {1}> {
    k = Constant <value = float[3] {0.5, -1, 2}> ()
    m = Mul (k, w)
    e = Exp (m)
    s = Add (x, e)
    sh = Shape (x)
    last = Slice (sh, one, two)
    two = Constant <value = int64[1] {2}> ()
    lead = Constant <value = int64[1] {-1}> ()
    shape = Concat <axis = 0> (last, lead)
    y = Reshape (s, shape)
  }
)";

std::string text_between(const std::string& text, const std::string& from, const std::string& to) {
  const size_t b = text.find(from);
  const size_t e = text.find(to, b);
  if (b == std::string::npos || e == std::string::npos) return "(missing '" + from + "')";
  return text.substr(b, e - b);
}

// python3-onnx's checker on the written model (with its external data), and the number of
// nodes it has.
std::string check_model(const std::string& path) {
  return run_python(
             "import onnx\n"
             "onnx.checker.check_model('" +
             path +
             "')\n"
             "m = onnx.load('" +
             path +
             "')\n"
             "print('checked', len(m.graph.node), 'nodes')\n")
      .output;
}

// The original model's outputs on the reference backend, then the written model on each
// backend compared against them by `parity run --load-outputs`.
void expect_same_outputs(const std::string& original, const std::string& written,
                         const TempDir& dir) {
  const std::string saved = dir.file("original_outputs.json");
  auto r = run_parity({"run", original, "--pluginref", "--save-outputs", saved});
  ASSERT_EQ(r.exit_code, 0) << r.output;
  for (const char* backend : {"--pluginref", "--onnxrt"}) {
    auto c = run_parity({"run", written, backend, "--load-outputs", saved});
    EXPECT_EQ(c.exit_code, 0) << backend << "\n" << c.output;
  }
}

TEST(SurgeonCli, ExtractPrintsPolygraphysLinesAndWritesACheckedModel) {
  TempDir dir;
  const std::string model = dir.file("m.onnx"), out = dir.file("sub.onnx");
  write_model_from_text(model, kChainText);
  auto r = run_parity({"surgeon", "extract", model, "--inputs", "a:auto:auto", "x:auto:auto",
                       "--outputs", "c:auto", "-o", out, "--log-format", "no-colors"});
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const std::string fixture =
      read_text(source_path("tests/cli/fixtures/polygraphy_surgeon_extract.txt"));
  for (const auto& [from, to] : std::vector<std::pair<std::string, std::string>>{
           {"[I] Original Model:", "[I] Running shape inference"},
           {"[I] Running shape inference", "[!] Module"},
           {"[I] New Model:", "[I] PASSED"}})
    EXPECT_NE(r.output.find(text_between(fixture, from, to)), std::string::npos)
        << "missing:\n"
        << text_between(fixture, from, to) << "\nin:\n"
        << r.output;
  EXPECT_NE(r.output.find("[I] PASSED | Runtime: "), std::string::npos) << r.output;
  EXPECT_NE(check_model(out).find("checked 2 nodes"), std::string::npos) << check_model(out);
}

TEST(SurgeonCli, ExtractedSubgraphComputesTheOriginalsValuesOnBothBackends) {
  TempDir dir;
  const std::string model = dir.file("m.onnx"), out = dir.file("sub.onnx");
  write_model_from_text(model, kChainText);
  // From the model's input to an intermediate tensor: the same feed runs both models.
  ASSERT_EQ(run_parity({"surgeon", "extract", model, "--outputs", "b:auto", "-o", out}).exit_code,
            0);
  const std::string saved = dir.file("b.json");
  ASSERT_EQ(run_parity({"run", model, "--pluginref", "--onnx-outputs", "b", "--save-outputs", saved,
                        "--input-shapes", "x:[3,4]"})
                .exit_code,
            0);
  for (const char* backend : {"--pluginref", "--onnxrt"}) {
    auto c =
        run_parity({"run", out, backend, "--load-outputs", saved, "--input-shapes", "x:[3,4]"});
    EXPECT_EQ(c.exit_code, 0) << backend << "\n" << c.output;
  }
  EXPECT_NE(check_model(out).find("checked 2 nodes"), std::string::npos) << check_model(out);
}

TEST(SurgeonCli, ExtractRefusesALeakingCutAndUnknownNamesLeavingTheInputAlone) {
  TempDir dir;
  const std::string model = dir.file("m.onnx"), out = dir.file("sub.onnx");
  write_model_from_text(model, kChainText);
  const std::string before = read_text(model);
  auto leak = run_parity(
      {"surgeon", "extract", model, "--inputs", "a:auto:auto", "--outputs", "c:auto", "-o", out});
  EXPECT_EQ(leak.exit_code, 1) << leak.output;
  EXPECT_NE(leak.output.find("tensor 'x' is an input of the model and is read by node 'Mul_2' "
                             "(Mul) on the way to output 'c'"),
            std::string::npos)
      << leak.output;
  EXPECT_FALSE(fs::exists(out));

  auto unknown = run_parity(
      {"surgeon", "extract", model, "--inputs", "x:auto:auto", "--outputs", "yy:auto", "-o", out});
  EXPECT_EQ(unknown.exit_code, 1) << unknown.output;
  EXPECT_NE(unknown.output.find("output 'yy' is no tensor of graph 'g'; did you mean 'y'?"),
            std::string::npos)
      << unknown.output;

  auto malformed = run_parity({"surgeon", "extract", model, "--inputs", "x:[1,4]:floaty",
                               "--outputs", "y:auto", "-o", out});
  EXPECT_EQ(malformed.exit_code, 2) << malformed.output;
  EXPECT_NE(malformed.output.find("'floaty' is not a data type"), std::string::npos)
      << malformed.output;
  EXPECT_FALSE(fs::exists(out));
  EXPECT_EQ(read_text(model), before);
}

TEST(SurgeonCli, OutputPathsThatCannotBeWrittenAreClearErrors) {
  TempDir dir;
  const std::string model = dir.file("m.onnx");
  write_model_from_text(model, kChainText);
  const std::string before = read_text(model);
  auto over = run_parity({"surgeon", "sanitize", model, "-o", model});
  EXPECT_EQ(over.exit_code, 2) << over.output;
  EXPECT_NE(over.output.find("it is the input model, which is never overwritten"),
            std::string::npos)
      << over.output;
  auto missing = run_parity({"surgeon", "sanitize", model, "-o", dir.file("no/such/dir/x.onnx")});
  EXPECT_EQ(missing.exit_code, 1) << missing.output;
  EXPECT_NE(missing.output.find("is not an existing folder"), std::string::npos) << missing.output;
  // A path below a regular file.
  auto below_file = run_parity({"surgeon", "sanitize", model, "-o", model + "/x.onnx"});
  EXPECT_EQ(below_file.exit_code, 1) << below_file.output;
  EXPECT_NE(below_file.output.find("is not an existing folder"), std::string::npos)
      << below_file.output;
  EXPECT_EQ(read_text(model), before);
}

TEST(SurgeonCli, SanitizePrintsPolygraphysLinesForShapesCleanupAndToposort) {
  TempDir dir;
  const std::string model = dir.file("m.onnx"), out = dir.file("s.onnx");
  write_model_from_text(model, kChainText);
  auto r = run_parity({"surgeon", "sanitize", model, "--override-input-shapes", "x:['batch',4]",
                       "--cleanup", "--toposort", "-o", out, "--log-format", "no-colors"});
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const std::string fixture =
      read_text(source_path("tests/cli/fixtures/polygraphy_surgeon_sanitize.txt"));
  for (const auto& [from, to] : std::vector<std::pair<std::string, std::string>>{
           {"[I] Original Model:", "[!] Module"}, {"[I] New Model:", "[I] PASSED"}})
    EXPECT_NE(r.output.find(text_between(fixture, from, to)), std::string::npos)
        << "missing:\n"
        << text_between(fixture, from, to) << "\nin:\n"
        << r.output;
  EXPECT_NE(r.output.find("[I] Saving ONNX model to: " + out), std::string::npos) << r.output;
  auto dims = run_python("import onnx\nm = onnx.load('" + out +
                         "')\nprint([d.dim_param or d.dim_value for d in "
                         "m.graph.input[0].type.tensor_type.shape.dim])\n");
  EXPECT_NE(dims.output.find("['batch', 4]"), std::string::npos) << dims.output;
  EXPECT_NE(check_model(out).find("checked 4 nodes"), std::string::npos);
}

TEST(SurgeonCli, FoldConstantsOnTheReferenceBackendComputesTheSameOutputs) {
  TempDir dir;
  const std::string model = dir.file("f.onnx"), out = dir.file("folded.onnx");
  write_model_from_text(model, kFoldText);
  auto r = run_parity({"surgeon", "sanitize", model, "--fold-constants", "--toposort", "-o", out});
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("[I] Folding Constants | Pass 1"), std::string::npos) << r.output;
  EXPECT_NE(
      r.output.find("Total Nodes | Original:    10, After Folding:     2 |     8 Nodes Folded"),
      std::string::npos)
      << r.output;
  EXPECT_NE(check_model(out).find("checked 2 nodes"), std::string::npos) << check_model(out);
  expect_same_outputs(model, out, dir);

  // Folding flags without --fold-constants are ignored with Polygraphy's warning.
  auto ignored = run_parity({"surgeon", "sanitize", model, "--no-fold-shapes", "-o", out});
  EXPECT_EQ(ignored.exit_code, 0);
  EXPECT_NE(ignored.output.find("Argument: '--fold-shapes' will be ignored since constant "
                                "folding is not enabled."),
            std::string::npos)
      << ignored.output;
}

TEST(SurgeonCli, ANodeThatCannotFoldIsNamedAndKept) {
  TempDir dir;
  const std::string model = dir.file("bad.onnx"), out = dir.file("out.onnx");
  write_model_from_text(model, R"(
    <ir_version: 8, opset_import: ["" : 17]>
    g (float[2] x) => (float[2] y, float[6] z) <float[6] d = {1, 2, 3, 4, 5, 6}, int64[1] s = {4}, float[2] k = {1, 2}> {
      bad = Reshape (d, s)
      z = Add (x, bad)
      n = Neg (k)
      y = Add (x, n)
    }
  )");
  auto r = run_parity(
      {"surgeon", "sanitize", model, "--fold-constants", "--partitioning", "basic", "-o", out});
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("[W] Failed to fold node 'Reshape_0' (Reshape): it is kept unfolded"),
            std::string::npos)
      << r.output;
  EXPECT_NE(check_model(out).find("checked 3 nodes"), std::string::npos) << check_model(out);
}

TEST(SurgeonCli, ACycleIsAnErrorNamingItsNodes) {
  TempDir dir;
  const std::string model = dir.file("cycle.onnx"), out = dir.file("out.onnx");
  write_model_from_text(model, R"(
    <ir_version: 8, opset_import: ["" : 17]>
    g (float[2] x) => (float[2] e) {
      a = Relu (x)
      b = Add (a, d)
      c = Neg (b)
      d = Abs (c)
      e = Exp (d)
    }
  )");
  auto r = run_parity({"surgeon", "sanitize", model, "--toposort", "-o", out});
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_NE(r.output.find("form a cycle"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("(Add) -> "), std::string::npos) << r.output;
  EXPECT_FALSE(fs::exists(out));
}

TEST(SurgeonCli, ExternalDataIsWrittenAndRelocated) {
  TempDir dir;
  fs::create_directory(dir.file("src"));
  fs::create_directory(dir.file("dst"));
  const std::string model = dir.file("src/ext.onnx");
  // A model whose weight lives in external data, made by python3-onnx.
  auto made = run_python(
      "import numpy as np, onnx\n"
      "from onnx import helper as h, TensorProto as T, numpy_helper as nh\n"
      "w = nh.from_array(np.arange(256, dtype=np.float32).reshape(64, 4), 'w')\n"
      "k = nh.from_array(np.full((64, 4), 0.5, dtype=np.float32), 'k')\n"
      "g = h.make_graph([h.make_node('Mul', ['w', 'k'], ['wk']), h.make_node('Add', ['x', 'wk'], "
      "['y'])],\n"
      "                 'g', [h.make_tensor_value_info('x', T.FLOAT, [64, 4])],\n"
      "                 [h.make_tensor_value_info('y', T.FLOAT, [64, 4])], [w, k])\n"
      "m = h.make_model(g, opset_imports=[h.make_opsetid('', 17)]); m.ir_version = 8\n"
      "onnx.save(m, '" +
      model + "', save_as_external_data=True, location='weights.bin', size_threshold=0)\n");
  ASSERT_EQ(made.exit_code, 0) << made.output;

  // Folded into another folder with the default external data file.
  const std::string folded = dir.file("dst/folded.onnx");
  auto r = run_parity({"surgeon", "sanitize", model, "--fold-constants", "-o", folded,
                       "--save-external-data", "--external-data-size-threshold", "64"});
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_TRUE(fs::exists(dir.file("dst/folded.onnx.data")));
  EXPECT_NE(check_model(folded).find("checked 1 nodes"), std::string::npos) << check_model(folded);
  expect_same_outputs(model, folded, dir);

  // Saved elsewhere without asking for external data: the weights follow the model.
  const std::string copied = dir.file("dst/copy.onnx");
  ASSERT_EQ(run_parity({"surgeon", "sanitize", model, "-o", copied}).exit_code, 0);
  EXPECT_TRUE(fs::exists(dir.file("dst/copy.onnx.data")));
  expect_same_outputs(model, copied, dir);

  // One file per tensor, under a name of the user's.
  const std::string split = dir.file("dst/split.onnx");
  ASSERT_EQ(run_parity({"surgeon", "sanitize", model, "-o", split, "--save-external-data",
                        "--no-save-all-tensors-to-one-file"})
                .exit_code,
            0);
  EXPECT_TRUE(fs::exists(dir.file("dst/w")));
  EXPECT_TRUE(fs::exists(dir.file("dst/k")));
  expect_same_outputs(model, split, dir);

  // Writing over a file the model reads is refused.
  auto clobber = run_parity({"surgeon", "sanitize", model, "-o", dir.file("src/other.onnx"),
                             "--save-external-data", "weights.bin"});
  EXPECT_EQ(clobber.exit_code, 2) << clobber.output;
  EXPECT_NE(clobber.output.find("it is a file the model being saved reads from"), std::string::npos)
      << clobber.output;
  auto absolute = run_parity({"surgeon", "sanitize", model, "-o", dir.file("dst/abs.onnx"),
                              "--save-external-data", "/tmp/abs.bin"});
  EXPECT_EQ(absolute.exit_code, 2) << absolute.output;
}

}  // namespace
}  // namespace parity::testing

namespace parity::testing {
namespace {

// A Range whose limit comes from a reduction of the input: an unbounded data-dependent shape.
const char* kRangeText = R"(
  <ir_version: 8, opset_import: ["" : 17]>
  g (float[4] x) => (float[?] y) <float start = {0}, float delta = {1}> {
    n = ReduceMax <keepdims = 0> (x)
    r = Range (start, n, delta)
    y = Neg (r)
  }
)";

TEST(SurgeonCli, InspectShapeInferenceAndUnboundedDdsAsPolygraphy) {
  TempDir dir;
  const std::string model = dir.file("range.onnx");
  write_model_from_text(model, kRangeText);
  auto r = run_parity({"inspect", "model", model, "--shape-inference", "--list-unbounded-dds",
                       "--show", "layers", "--log-format", "no-colors"});
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const std::string fixture =
      read_text(source_path("tests/cli/fixtures/polygraphy_inspect_shape_inference.txt"));
  for (const std::string line :
       {"[I] Found tensors with unbounded DDS: [Variable (n): (shape=[], dtype=float32)]",
        "-> {r [dtype=float32, shape=('unk__0',)]}", "{y [dtype=float32, shape=('unk__0',)]}"}) {
    ASSERT_NE(fixture.find(line), std::string::npos) << line;
    EXPECT_NE(r.output.find(line), std::string::npos) << line << "\n" << r.output;
  }
}

TEST(SurgeonCli, UpperBoundsAMinInTheTensorsDtypeAndTheModelStillRuns) {
  TempDir dir;
  const std::string model = dir.file("range.onnx"), out = dir.file("bounded.onnx");
  write_model_from_text(model, kRangeText);
  auto r = run_parity({"surgeon", "sanitize", model, "--set-unbounded-dds-upper-bound", "100", "-o",
                       out, "--log-format", "no-colors"});
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const std::string fixture =
      read_text(source_path("tests/cli/fixtures/polygraphy_surgeon_sanitize_upper_bound.txt"));
  ASSERT_NE(fixture.find("[I] Set tensor upper bounds: {'n': 100}\n[I] Original Model:"),
            std::string::npos);
  EXPECT_NE(r.output.find("[I] Set tensor upper bounds: {'n': 100}\n[I] Original Model:"),
            std::string::npos)
      << r.output;
  auto nodes = run_python(
      "import onnx\n"
      "m = onnx.load('" +
      out +
      "')\n"
      "onnx.checker.check_model(m, full_check=True)\n"
      "print([n.op_type for n in m.graph.node])\n"
      "print([i.data_type for i in m.graph.initializer if i.name == 'n_upper_bound'])\n");
  EXPECT_NE(nodes.output.find("['ReduceMax', 'Min', 'Range', 'Neg']"), std::string::npos)
      << nodes.output;
  EXPECT_NE(nodes.output.find("[1]"), std::string::npos) << nodes.output;  // float32, as n
  // Inputs in [0, 3] keep n under the bound: the same outputs as the original.
  const std::string saved = dir.file("o.json");
  ASSERT_EQ(
      run_parity({"run", model, "--pluginref", "--val-range", "[0,3]", "--save-outputs", saved})
          .exit_code,
      0);
  for (const char* backend : {"--pluginref", "--onnxrt"}) {
    auto c = run_parity({"run", out, backend, "--val-range", "[0,3]", "--load-outputs", saved});
    EXPECT_EQ(c.exit_code, 0) << backend << "\n" << c.output;
  }
  // The listing sees the Min: nothing is unbounded any more.
  auto listed = run_parity({"inspect", "model", out, "--shape-inference", "--list-unbounded-dds"});
  EXPECT_NE(listed.output.find("Found tensors with unbounded DDS: []"), std::string::npos)
      << listed.output;

  auto unknown = run_parity(
      {"surgeon", "sanitize", model, "--set-unbounded-dds-upper-bound", "nn:5", "-o", out});
  EXPECT_EQ(unknown.exit_code, 1) << unknown.output;
  EXPECT_NE(unknown.output.find("has no such tensor; did you mean 'n'?"), std::string::npos)
      << unknown.output;
  auto malformed = run_parity(
      {"surgeon", "sanitize", model, "--set-unbounded-dds-upper-bound", "n:lots", "-o", out});
  EXPECT_EQ(malformed.exit_code, 2) << malformed.output;
}

}  // namespace
}  // namespace parity::testing
