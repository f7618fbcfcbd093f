// `parity` on hostile and broken input (issue 15): shapes whose element count overflows, inputs
// above the resource limits, absurd thread counts, sparse initializers with huge dims. Each
// must end with one clear message and a non-zero exit status, never a crash or a hang.
#include <gtest/gtest.h>

#include "support/onnx_text.h"
#include "support/test_util.h"

namespace parity::testing {
namespace {

bool has(const CommandResult& r, const std::string& words) {
  return r.output.find(words) != std::string::npos;
}

TEST(CliHardening, GraphInputsWhoseElementCountOverflowsAreRefusedOnEveryBackend) {
  TempDir dir;
  for (const char* type : {"float", "int8", "bool"}) {
    for (const char* dims : {"2147483648, 2147483648, 4", "4611686018427387904, 4"}) {
      std::string model = dir.file(std::string(type) + ".onnx");
      write_model_from_text(model, fmt::format(R"(
        <ir_version: 8, opset_import: ["" : 13]>
        g ({0}[{1}] x) => ({0}[{1}] y) {{ y = Identity(x) }}
      )",
                                               type, dims));
      for (const char* backend : {"--pluginref", "--onnxrt"}) {
        CommandResult r = run_parity({"run", model, backend});
        EXPECT_EQ(r.exit_code, 1) << type << " " << dims << " " << backend << "\n" << r.output;
        EXPECT_TRUE(has(r, "overflows a 64-bit integer")) << r.output;
      }
    }
  }
}

TEST(CliHardening, AnInputShapeAboveTheElementLimitIsRefusedBeforeAllocating) {
  TempDir dir;
  std::string model = dir.file("m.onnx");
  write_model_from_text(model, R"(
    <ir_version: 8, opset_import: ["" : 13]>
    g (float[N] x) => (float[N] y) { y = Relu(x) }
  )");
  CommandResult r = run_parity({"run", model, "--pluginref", "--input-shapes", "x:[1000000000]"});
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_TRUE(has(r,
                  "failed to create a float32 tensor of shape (1000000000,): its 1000000000 "
                  "elements exceed the limit of 536870912 elements per tensor; raise it with "
                  "--limit-tensor-elements"))
      << r.output;
  // The flag lowers (or raises) the limit.
  r = run_parity(
      {"run", model, "--pluginref", "--input-shapes", "x:[64]", "--limit-tensor-elements", "63"});
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_TRUE(has(r, "its 64 elements exceed the limit of 63 elements per tensor")) << r.output;
  r = run_parity({"run", model, "--pluginref", "--input-shapes", "x:[64]",
                  "--limit-tensor-elements", "64", "--limit-memory", "1M"});
  EXPECT_EQ(r.exit_code, 0) << r.output;
}

TEST(CliHardening, MalformedLimitValuesAreUsageErrors) {
  CommandResult r = run_parity(
      {"run", source_path("examples/identity.onnx"), "--pluginref", "--limit-memory", "lots"});
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_TRUE(has(
      r, "failed to parse --limit-memory with value 'lots': a size is a positive number of bytes"))
      << r.output;
  r = run_parity({"run", source_path("examples/identity.onnx"), "--pluginref",
                  "--limit-loop-iterations", "0"});
  EXPECT_EQ(r.exit_code, 2) << r.output;
}

// Numeric flags said "Value abc not in range 0.000000 to 1000000000.000000" (CLI11's words)
// or "Could not convert: --seed = abc"; every one now uses the project's template.
TEST(CliHardening, MalformedNumbersNameTheFlagTheValueAndTheRange) {
  const std::vector<std::pair<std::vector<std::string>, std::string>> cases = {
      {{"--limit-run-seconds", "abc"},
       "failed to parse --limit-run-seconds with value 'abc': it must be a number in [0, "
       "1000000000]"},
      {{"--limit-run-seconds", "nan"},
       "failed to parse --limit-run-seconds with value 'nan': it must be a number in"},
      {{"--iterations", "1e3"},
       "failed to parse --iterations with value '1e3': it must be an integer in [1, "
       "1099511627776]"},
      {{"--seed", "-1"},
       "failed to parse --seed with value '-1': it must be an integer in [0, 4294967295]"},
      {{"--warm-up", "x"}, "failed to parse --warm-up with value 'x': it must be an integer in"},
      {{"--subprocess-timeout", "0"}, "failed to parse --subprocess-timeout with value '0'"},
  };
  for (const auto& [flags, words] : cases) {
    std::vector<std::string> args = {"run", source_path("examples/identity.onnx"), "--pluginref"};
    args.insert(args.end(), flags.begin(), flags.end());
    CommandResult r = run_parity(args);
    EXPECT_EQ(r.exit_code, 2) << r.output;
    EXPECT_TRUE(has(r, "[!] " + words)) << r.output;
    EXPECT_FALSE(has(r, "not in range")) << r.output;
  }
}

// --ref-threads without --pluginref was dropped without a word, even when malformed.
TEST(CliHardening, OptionsOfAnUnselectedBackendAreCheckedAndWarnedAbout) {
  CommandResult r = run_parity(
      {"run", source_path("examples/identity.onnx"), "--onnxrt", "--ref-threads", "abc"});
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_TRUE(has(r, "failed to parse --ref-threads with value 'abc'")) << r.output;
  r = run_parity({"run", source_path("examples/identity.onnx"), "--onnxrt", "--ref-threads", "2"});
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_TRUE(has(r,
                  "[W] --ref-threads has no effect: no runner of the pluginref backend was "
                  "selected (add --pluginref)"))
      << r.output;
}

TEST(CliHardening, AnEndlessLoopStopsAtTheIterationLimitNamingTheNode) {
  TempDir dir;
  std::string model = dir.file("loop.onnx");
  write_model_from_text(model, R"(
    <ir_version: 8, opset_import: ["" : 17]>
    g (float[1] v) => (float[1] out) {
      m = Constant<value = int64 {1000000000000000}>()
      c = Constant<value = bool {1}>()
      out = Loop(m, c, v) <body = body (int64 i, bool cin, float[1] vin) => (bool cout, float[1] vout) {
        cout = Identity(cin)
        vout = Identity(vin)
      }>
    }
  )");
  CommandResult r = run_parity({"run", model, "--pluginref", "--limit-loop-iterations", "50"});
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_TRUE(has(r, "(Loop): stopped after 50 iterations of a trip count of 1000000000000000"))
      << r.output;
}

TEST(CliHardening, AnAbsurdOrtThreadCountIsAUsageError) {
  CommandResult r = run_parity(
      {"run", source_path("examples/identity.onnx"), "--onnxrt", "--ort-threads", "100000"});
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_TRUE(has(r,
                  "failed to set the ONNX Runtime intra-op thread count with 100000: it must "
                  "be 0 (ONNX Runtime chooses) or a count from 1 to 1024"))
      << r.output;
}

TEST(CliHardening, ASparseInitializerWithHugeDimsIsNamedInTheMessage) {
  TempDir dir;
  std::string model = dir.file("sparse.onnx");
  CommandResult built = run_python(fmt::format(R"(
import onnx
from onnx import helper as oh, TensorProto as TP
values = oh.make_tensor('w', TP.FLOAT, [1], [1.0])
indices = oh.make_tensor('w_idx', TP.INT64, [1], [5])
sparse = oh.make_sparse_tensor(values, indices, [2**31, 2**31])
g = oh.make_graph([oh.make_node('Identity', ['w'], ['y'])], 'g', [],
                  [oh.make_tensor_value_info('y', TP.FLOAT, None)], sparse_initializer=[sparse])
onnx.save(oh.make_model(g, opset_imports=[oh.make_opsetid('', 13)]), '{}')
)",
                                               model));
  ASSERT_EQ(built.exit_code, 0) << built.output;
  for (const char* command : {"inspect", "run"}) {
    CommandResult r = std::string(command) == "inspect" ? run_parity({"inspect", "model", model})
                                                        : run_parity({"run", model, "--pluginref"});
    EXPECT_EQ(r.exit_code, 1) << r.output;
    EXPECT_TRUE(has(r,
                    "failed to load sparse tensor 'w' with dims (2147483648, 2147483648) as a "
                    "dense tensor: failed to create a float32 tensor of shape (2147483648, "
                    "2147483648): its 4611686018427387904 elements exceed the limit"))
        << r.output;
    EXPECT_FALSE(has(r, "max_size")) << r.output;
  }
}

// A model made with onnx.helper, with `edit` applied to the ModelProto `m` before saving.
std::string python_model(const TempDir& dir, const std::string& name, const std::string& edit) {
  std::string path = dir.file(name);
  CommandResult r = run_python(fmt::format(R"(
import onnx
from onnx import helper as oh, TensorProto as TP
x = oh.make_tensor_value_info('x', TP.FLOAT, [2])
y = oh.make_tensor_value_info('y', TP.FLOAT, [2])
g = oh.make_graph([oh.make_node('Relu', ['x'], ['y'])], 'g', [x], [y])
m = oh.make_model(g, opset_imports=[oh.make_opsetid('', 13)])
m.ir_version = 8
{}
onnx.save(m, '{}')
)",
                                           edit, path));
  if (r.exit_code != 0) ADD_FAILURE() << r.output;
  return path;
}

TEST(CliHardening, ModelHeadersOnnxsCheckerRefusesAreErrors) {
  TempDir dir;
  const std::pair<const char*, const char*> cases[] = {
      {"m.ir_version = 0", "with ir_version 0: the IR version must be set to 1 or more"},
      {"m.ir_version = -1", "with ir_version -1: the IR version must be set to 1 or more"},
      {"m.ir_version = 100", "with ir_version 100: it is newer than the newest IR version"},
      {"m.opset_import[0].version = 0", "with opset 0 of domain 'ai.onnx': opset versions start"},
      {"m.opset_import[0].version = -5", "with opset -5 of domain 'ai.onnx': opset versions start"},
      {"m.opset_import.append(oh.make_opsetid('', 13))", "lists domain 'ai.onnx' twice"},
      {"m.graph.input.append(x)", "the graph lists input 'x' twice"},
      {"m.graph.output.append(y)", "the graph lists output 'y' twice"},
      {"del m.graph.output[:]", "has no outputs; a model must declare at least one output"},
      {"m.graph.input.append(oh.make_tensor_value_info('', TP.FLOAT, [1]))",
       "the graph has an unnamed input (number 2); every graph input and output must have a "
       "name"},
      {"m.graph.output.append(oh.make_tensor_value_info('', TP.FLOAT, [1]))",
       "the graph has an unnamed output (number 2)"},
  };
  int i = 0;
  for (const auto& [edit, words] : cases) {
    std::string model = python_model(dir, fmt::format("m{}.onnx", i++), edit);
    CommandResult r = run_parity({"run", model, "--pluginref"});
    EXPECT_EQ(r.exit_code, 1) << edit << "\n" << r.output;
    EXPECT_TRUE(has(r, words)) << edit << "\n" << r.output;
  }
}

// fuzz_prepare's first crash: a graph input with an empty name was given the slot -1 and
// written before the executor's first value (SIGSEGV in the release build).
TEST(CliHardening, TheFuzzedModelWithAnUnnamedGraphInputIsRefused) {
  CommandResult r =
      run_parity({"run", source_path("fuzz/regressions/fuzz_prepare/unnamed-graph-input-lstm"),
                  "--pluginref"});
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_TRUE(has(r, "the graph has an unnamed input (number 4)")) << r.output;
}

TEST(CliHardening, AnOpsetNewerThanAnyReleaseIsAWarning) {
  TempDir dir;
  std::string model = python_model(dir, "m.onnx", "m.opset_import[0].version = 100");
  CommandResult r = run_parity({"run", model, "--pluginref"});
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_TRUE(has(r,
                  "[W] The model imports opset 100 of domain 'ai.onnx', newer than the newest "
                  "released opset Parity knows (24)"))
      << r.output;
}

TEST(CliHardening, NanOrNegativeTolerancesAreUsageErrors) {
  for (const char* flag : {"--atol", "--rtol"}) {
    for (const char* value : {"nan", "-1", "y:nan"}) {
      CommandResult r =
          run_parity({"run", source_path("examples/identity.onnx"), "--pluginref", flag, value});
      EXPECT_EQ(r.exit_code, 2) << flag << " " << value << "\n" << r.output;
      EXPECT_TRUE(has(r, fmt::format("failed to use {} ", flag))) << r.output;
      EXPECT_TRUE(has(r, "a tolerance must be")) << r.output;
    }
  }
  CommandResult r = run_parity({"run", source_path("examples/identity.onnx"), "--pluginref",
                                "--atol", "inf", "--rtol", "0"});
  EXPECT_EQ(r.exit_code, 0) << r.output;
}

TEST(CliHardening, AnOpNewerThanTheDeclaredOpsetIsAnError) {
  // Gelu entered ai.onnx in opset 20; a model importing opset 13 cannot use it (ONNX's checker
  // and ONNX Runtime refuse it too).
  TempDir dir;
  std::string model = dir.file("gelu.onnx");
  write_model_from_text(model, R"(
    <ir_version: 8, opset_import: ["" : 13]>
    g (float[2] x) => (float[2] y) { y = Gelu(x) }
  )");
  CommandResult r = run_parity({"run", model, "--pluginref"});
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_TRUE(has(r,
                  "failed to prepare node 'Gelu_0' (Gelu): the reference kernel does not "
                  "support opset 13 of domain 'ai.onnx'; supported opsets: [20+]"))
      << r.output;
}

}  // namespace
}  // namespace parity::testing
