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
  EXPECT_TRUE(has(r, "failed to create a float32 tensor of shape (1000000000,): its 1000000000 "
                     "elements exceed the limit of 536870912 elements per tensor; raise it with "
                     "--limit-tensor-elements"))
      << r.output;
  // The flag lowers (or raises) the limit.
  r = run_parity({"run", model, "--pluginref", "--input-shapes", "x:[64]",
                  "--limit-tensor-elements", "63"});
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_TRUE(has(r, "its 64 elements exceed the limit of 63 elements per tensor")) << r.output;
  r = run_parity({"run", model, "--pluginref", "--input-shapes", "x:[64]",
                  "--limit-tensor-elements", "64", "--limit-memory", "1M"});
  EXPECT_EQ(r.exit_code, 0) << r.output;
}

TEST(CliHardening, MalformedLimitValuesAreUsageErrors) {
  CommandResult r = run_parity({"run", source_path("examples/identity.onnx"), "--pluginref",
                                "--limit-memory", "lots"});
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_TRUE(has(r, "failed to parse --limit-memory with value 'lots': a size is a positive number of bytes")) << r.output;
  r = run_parity({"run", source_path("examples/identity.onnx"), "--pluginref",
                  "--limit-loop-iterations", "0"});
  EXPECT_EQ(r.exit_code, 2) << r.output;
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
  CommandResult r = run_parity({"run", source_path("examples/identity.onnx"), "--onnxrt",
                                "--ort-threads", "100000"});
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_TRUE(has(r, "failed to set the ONNX Runtime intra-op thread count with 100000: it must "
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
    CommandResult r = std::string(command) == "inspect"
                          ? run_parity({"inspect", "model", model})
                          : run_parity({"run", model, "--pluginref"});
    EXPECT_EQ(r.exit_code, 1) << r.output;
    EXPECT_TRUE(has(r, "failed to load sparse tensor 'w' with dims (2147483648, 2147483648) as a "
                       "dense tensor: failed to create a float32 tensor of shape (2147483648, "
                       "2147483648): its 4611686018427387904 elements exceed the limit"))
        << r.output;
    EXPECT_FALSE(has(r, "max_size")) << r.output;
  }
}

}  // namespace
}  // namespace parity::testing
