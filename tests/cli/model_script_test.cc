// A model given as a Python script (`script.py[:func]`, --model-type onnx-script, guessed from
// the .py extension): the ONNX counterpart of Polygraphy's --trt-network-script, for every
// subcommand that takes a model (they all load it through cli/model_args).
#include <gtest/gtest.h>

#include <cstdlib>
#include <sstream>

#include "support/test_util.h"

namespace parity::testing {
namespace {

std::string example(const std::string& name) { return source_path("examples/" + name); }

// The output without the line that names the file the model came from.
std::string without_loading_line(const std::string& output) {
  std::istringstream in(output);
  std::string line, out;
  while (std::getline(in, line))
    if (line.rfind("[I] Loading model: ", 0) != 0) out += line + "\n";
  return out;
}

// y = x + 1 (float32 [2, 3]), built with onnx.helper in the script.
constexpr char kBuildScript[] = R"(import numpy as np
import onnx
from onnx import TensorProto, helper


def make():
    one = helper.make_tensor("one", TensorProto.FLOAT, [1], [1.0])
    graph = helper.make_graph(
        [helper.make_node("Add", ["x", "one"], ["y"])], "built",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 3])], initializer=[one])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], ir_version=8)
)";

TEST(CliModelScript, InspectShowsWhatTheScriptsModelIs) {
  TempDir dir;
  const std::string script = dir.file("load.py");
  write_text(script, "import onnx\n\ndef load_model():\n    return onnx.load(" + std::string("'") +
                         example("tiny_cnn.onnx") + "')\n");
  auto from_script =
      run_parity({"inspect", "model", script, "--show", "layers", "attrs", "weights"});
  ASSERT_EQ(from_script.exit_code, 0) << from_script.output;
  auto from_file = run_parity(
      {"inspect", "model", example("tiny_cnn.onnx"), "--show", "layers", "attrs", "weights"});
  ASSERT_EQ(from_file.exit_code, 0) << from_file.output;
  EXPECT_EQ(without_loading_line(from_script.output), without_loading_line(from_file.output));
  EXPECT_NE(from_script.output.find("[I] Loading model: " + script + " (function load_model)"),
            std::string::npos)
      << from_script.output;
}

TEST(CliModelScript, RunComparesTheBuiltModelAndComputesIt) {
  TempDir dir;
  const std::string script = dir.file("build.py");
  write_text(script, kBuildScript);
  const std::string inputs = dir.file("in.json"), outputs = dir.file("out.json");
  auto r = run_parity({"run", script + ":make", "--pluginref", "--onnxrt", "--save-inputs", inputs,
                       "--save-outputs", outputs});
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("PASSED"), std::string::npos) << r.output;
  // Each runner's y is x + 1 for the inputs it was given, by NumPy.
  // Each runner's y is x + 1 for the inputs it was given, by NumPy (the files decoded with
  // the json module and np.load, without Parity).
  auto check = run_python(
      "import base64, io, json\nimport numpy as np\n"
      "def arrays(obj):\n"
      "    if isinstance(obj, dict) and obj.get('polygraphy_class') == 'ndarray':\n"
      "        return np.load(io.BytesIO(base64.b64decode(obj['array'])))\n"
      "    if isinstance(obj, dict): return {k: arrays(v) for k, v in obj.items()}\n"
      "    if isinstance(obj, list): return [arrays(v) for v in obj]\n"
      "    return obj\n"
      "feeds = arrays(json.load(open('" +
      inputs +
      "')))\n"
      "results = arrays(json.load(open('" +
      outputs +
      "')))['lst']\n"
      "assert len(results) == 2\n"
      "for name, its in results:\n"
      "    y = its[0]['outputs']['y']\n"
      "    y = y['values'] if isinstance(y, dict) else y  # a LazyArray\n"
      "    assert np.array_equal(y, feeds[0]['x'] + np.float32(1)), name\n"
      "print('checked')\n");
  EXPECT_EQ(check.exit_code, 0) << check.output;
  EXPECT_NE(check.output.find("checked"), std::string::npos) << check.output;
}

TEST(CliModelScript, FuncExtendAroundALoaderAndMarkAll) {
  // Polygraphy's idiom: func.extend around a loader, changing the model it returns.
  TempDir dir;
  const std::string script = dir.file("extend.py");
  write_text(
      script,
      "from parity import func\nfrom parity.backend.onnx import OnnxFromPath\n\n"
      "@func.extend(OnnxFromPath('" +
          example("tiny_cnn.onnx") +
          "'))\n"
          "def load_model(model):\n"
          "    assert [i.name for i in model.graph.input] == ['image']  # an onnx.ModelProto\n");
  auto r = run_parity({"run", script, "--model-type", "onnx-script", "--pluginref", "--onnxrt",
                       "--onnx-outputs", "mark", "all"});
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("PASSED"), std::string::npos) << r.output;
}

TEST(CliModelScript, WithADataLoaderScriptTheRunsScriptLoadsTheModelScript) {
  // A run that needs Python runs as its generated script, which loads the model the same way.
  TempDir dir;
  const std::string script = dir.file("build.py"), data = dir.file("data.py");
  write_text(script, kBuildScript);
  write_text(data,
             "import numpy as np\n\ndef load_data():\n"
             "    yield {'x': np.full((2, 3), 2.0, dtype=np.float32)}\n");
  auto gen = run_parity({"run", script + ":make", "--pluginref", "--onnxrt", "--data-loader-script",
                         data, "--gen-script", "-"});
  ASSERT_EQ(gen.exit_code, 0) << gen.output;
  EXPECT_NE(gen.output.find("load_model = ModelFromScript('" + script + "', name='make')"),
            std::string::npos)
      << gen.output;
  const std::string outputs = dir.file("out.json");
  auto r = run_parity({"run", script + ":make", "--pluginref", "--onnxrt", "--data-loader-script",
                       data, "--save-outputs", outputs});
  ASSERT_EQ(r.exit_code, 0) << r.output;
  auto check = run_python(
      "import base64, io, json\nimport numpy as np\n"
      "lst = json.load(open('" +
      outputs +
      "'))['lst']\n"
      "for name, its in lst:\n"
      "    y = its[0]['outputs']['y']\n"
      "    y = y['values'] if 'values' in y else y\n"
      "    y = np.load(io.BytesIO(base64.b64decode(y['array'])))\n"
      "    assert np.array_equal(y, np.full((2, 3), 3.0, dtype=np.float32)), name\n"
      "print('checked', len(lst))\n");
  EXPECT_EQ(check.exit_code, 0) << check.output;
  EXPECT_NE(check.output.find("checked 2"), std::string::npos) << check.output;
}

TEST(CliModelScript, AModelWrittenWithExternalDataRunsOnBothBackends) {
  // As a model of 2 GiB or more is written: its tensors in model.onnx.data beside it (the
  // limit lowered so that the example model takes that path).
  TempDir dir;
  const std::string script = dir.file("load.py");
  write_text(script, "import onnx\n\ndef load_model():\n    return onnx.load('" +
                         example("tiny_cnn.onnx") + "')\n");
  setenv("PARITY_MODEL_SCRIPT_MAX_INLINE_BYTES", "0", 1);
  auto r = run_parity({"run", script, "--pluginref", "--onnxrt"});
  unsetenv("PARITY_MODEL_SCRIPT_MAX_INLINE_BYTES");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("PASSED"), std::string::npos) << r.output;
}

TEST(CliModelScript, ModelTypeChoices) {
  auto engine =
      run_parity({"run", example("tiny_cnn.onnx"), "--model-type", "engine", "--pluginref"});
  EXPECT_EQ(engine.exit_code, 2) << engine.output;
  EXPECT_NE(engine.output.find("failed to use --model-type with value 'engine'"), std::string::npos)
      << engine.output;
  EXPECT_NE(engine.output.find("valid choices are onnx, onnx-script"), std::string::npos);

  auto typo =
      run_parity({"inspect", "model", example("tiny_cnn.onnx"), "--model-type", "onnx-scrpt"});
  EXPECT_EQ(typo.exit_code, 2) << typo.output;
  EXPECT_NE(typo.output.find("did you mean 'onnx-script'?"), std::string::npos) << typo.output;

  // --model-type onnx reads a .py file as ONNX (and fails to parse it), as asked.
  TempDir dir;
  write_text(dir.file("build.py"), kBuildScript);
  auto as_onnx = run_parity({"inspect", "model", dir.file("build.py"), "--model-type", "onnx"});
  EXPECT_EQ(as_onnx.exit_code, 1) << as_onnx.output;
  EXPECT_EQ(as_onnx.output.find("function load_model"), std::string::npos) << as_onnx.output;
}

TEST(CliModelScript, ScriptErrorsAreClear) {
  TempDir dir;
  auto missing = run_parity({"inspect", "model", dir.file("nope.py")});
  EXPECT_EQ(missing.exit_code, 2) << missing.output;
  EXPECT_NE(missing.output.find("no such file"), std::string::npos) << missing.output;

  const std::string script = dir.file("build.py");
  write_text(script, kBuildScript + std::string("\n\ndef not_a_model():\n    return 42\n"));
  auto no_func = run_parity({"inspect", "model", script + ":nope"});
  EXPECT_EQ(no_func.exit_code, 1) << no_func.output;
  EXPECT_NE(no_func.output.find("Could not import symbol: nope"), std::string::npos)
      << no_func.output;
  EXPECT_NE(no_func.output.find("failed to load the model from script"), std::string::npos);

  auto wrong = run_parity({"run", script + ":not_a_model", "--pluginref"});
  EXPECT_EQ(wrong.exit_code, 1) << wrong.output;
  EXPECT_NE(wrong.output.find("it returned int"), std::string::npos) << wrong.output;
  EXPECT_EQ(wrong.output.find("PASSED"), std::string::npos) << wrong.output;
}

// The ONNX tools read a script's model too: each names the script (never the temporary file
// its model was written to), and what they write is the script's model, edited as asked.
TEST(CliModelScript, TheOnnxToolsTakeAScript) {
  TempDir dir;
  const std::string script = dir.file("build.py");
  write_text(script, kBuildScript);
  const std::string model = script + ":make";
  const std::vector<std::vector<std::string>> commands = {
      {"surgeon", "sanitize", model, "--fold-constants", "-o", dir.file("sanitized.onnx")},
      {"surgeon", "extract", model, "--outputs", "y:auto", "-o", dir.file("extracted.onnx")},
      {"convert", model, "--fp-to-fp16", "-o", dir.file("half.onnx")},
      {"check", "lint", model},
      {"inspect", "sparsity", model},
      // inspect model reads the protobuf itself for ONNX shape inference.
      {"inspect", "model", model, "--shape-inference"},
  };
  for (const auto& args : commands) {
    auto r = run_parity(args);
    EXPECT_EQ(r.exit_code, 0) << r.output;
    EXPECT_NE(r.output.find("[I] Loading model: " + script + " (function make)"), std::string::npos)
        << r.output;
    EXPECT_EQ(r.output.find("parity-model"), std::string::npos) << r.output;
  }
  auto check = run_python(R"(
import onnx
from onnx import numpy_helper
for name in ['sanitized', 'extracted', 'half']:
    m = onnx.load(')" + dir.path().string() +
                          R"(/' + name + '.onnx')
    onnx.checker.check_model(m)
    ops = [n.op_type for n in m.graph.node]
    assert 'Add' in ops, (name, ops)
    one = {t.name: numpy_helper.to_array(t) for t in m.graph.initializer}['one']
    assert one.tolist() == [1.0], (name, one)
    assert str(one.dtype) == ('float16' if name == 'half' else 'float32'), (name, one.dtype)
print('ok')
)");
  EXPECT_EQ(check.exit_code, 0) << check.output;
  EXPECT_NE(check.output.find("ok"), std::string::npos) << check.output;
}

}  // namespace
}  // namespace parity::testing
