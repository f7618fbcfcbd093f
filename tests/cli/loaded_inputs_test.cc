// Loaded inputs fitted to the model as Polygraphy's DataLoaderCache fits them (renamed, cast,
// reshaped, extra keys dropped, each with its warning), and refused with --strict-inputs.
#include <gtest/gtest.h>

#include "support/onnx_text.h"
#include "support/test_util.h"

namespace parity::testing {
namespace {

bool has(const CommandResult& r, const std::string& s) {
  return r.output.find(s) != std::string::npos;
}

// Inputs saved by a model with float64 inputs `input` [4] and `more` [2] (a key the model of the
// tests does not take, dropped).
std::string float64_inputs(const TempDir& dir) {
  write_model_from_text(dir.file("f64.onnx"), R"(
    <ir_version: 8, opset_import: ["" : 13]>
    f64 (double[4] input, double[2] more) => (double[4] out) { out = Identity(input) }
  )");
  const std::string path = dir.file("inputs.json");
  CommandResult r = run_parity(
      {"run", dir.file("f64.onnx"), "--pluginref", "--save-inputs", path, "--val-range", "[-2,2]"});
  EXPECT_EQ(r.exit_code, 0) << r.output;
  return path;
}

TEST(CliLoadedInputs, FittedToTheModelWithPolygraphysWarnings) {
  TempDir dir;
  const std::string inputs = float64_inputs(dir);
  const std::string model = source_path("examples/identity.onnx");  // x: float32 [1,1,2,2]
  CommandResult r = run_parity({"run", model, "--pluginref", "--onnxrt", "--load-inputs", inputs,
                                "--save-outputs", dir.file("out.json")});
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_TRUE(has(r,
                  "Input tensor: x | Buffer name (input) does not match expected input name "
                  "(x)."))
      << r.output;
  EXPECT_TRUE(has(r,
                  "Input tensor: x | Buffer dtype (float64) does not match expected input "
                  "dtype (float32), attempting to cast."))
      << r.output;
  EXPECT_TRUE(has(r, "Reshaped array from shape: (4,) to: (1, 1, 2, 2)")) << r.output;
  // The values fed are the saved ones, cast to float32: y = x.
  CommandResult check = run_python(R"(
import base64, io, json, numpy as np
def arrays(path):
    def decode(obj):
        if isinstance(obj, dict) and 'array' in obj:
            return np.load(io.BytesIO(base64.b64decode(obj['array'])), allow_pickle=False)
        if isinstance(obj, dict):
            return {k: decode(v) for k, v in obj.items()}
        if isinstance(obj, list):
            return [decode(v) for v in obj]
        return obj
    return decode(json.load(open(path)))
feeds = arrays(')" + inputs + R"(')
out = arrays(')" + dir.file("out.json") +
                                   R"(')
x = feeds[0]['input']
for runner, iterations in out['lst']:
    y = iterations[0]['outputs']['y']['values']
    assert y.dtype == np.float32 and y.shape == (1, 1, 2, 2), (y.dtype, y.shape)
    assert np.array_equal(y.ravel(), x.astype(np.float32)), (y, x)
print('ok')
)");
  EXPECT_EQ(check.exit_code, 0) << check.output;
  EXPECT_TRUE(has(check, "ok")) << check.output;
}

TEST(CliLoadedInputs, StrictInputsRefusesWhatDoesNotFit) {
  TempDir dir;
  const std::string inputs = float64_inputs(dir);
  CommandResult r = run_parity({"run", source_path("examples/identity.onnx"), "--pluginref",
                                "--load-inputs", inputs, "--strict-inputs"});
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_TRUE(has(r, "The following inputs were not found in input data: {'x'}")) << r.output;
  EXPECT_FALSE(has(r, "PASSED")) << r.output;
}

}  // namespace
}  // namespace parity::testing
