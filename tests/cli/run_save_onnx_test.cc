// `parity run --save-onnx` and its external data flags, `--shape-inference`: the model the
// runners load (shapes inferred, outputs marked) written by the one model writer, checked with
// python3-onnx and run on both backends against the original's values.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "support/test_util.h"

namespace parity::testing {
namespace {

namespace fs = std::filesystem;

// mm = x * W (elementwise, W 4 KiB), add = mm + b (b 256 bytes), y = Relu(add): made by
// python3-onnx, weights inline (or all in `location` beside the model when given).
void write_model(const std::string& path, const std::string& location = "") {
  auto made = run_python(
      "import numpy as np, onnx\n"
      "from onnx import helper as h, TensorProto as T, numpy_helper as nh\n"
      "w = nh.from_array((np.arange(1024, dtype=np.float32).reshape(16, 64) - 500) / 100, 'W')\n"
      "b = nh.from_array(np.linspace(-1, 1, 64).astype(np.float32), 'b')\n"
      "g = h.make_graph([h.make_node('Mul', ['x', 'W'], ['mm'], name='mul'),\n"
      "                  h.make_node('Add', ['mm', 'b'], ['add'], name='plus'),\n"
      "                  h.make_node('Relu', ['add'], ['y'], name='relu')],\n"
      "                 'g', [h.make_tensor_value_info('x', T.FLOAT, [16, 64])],\n"
      "                 [h.make_tensor_value_info('y', T.FLOAT, [16, 64])], [w, b])\n"
      "m = h.make_model(g, opset_imports=[h.make_opsetid('', 17)]); m.ir_version = 8\n"
      "loc = '" +
      location +
      "'\n"
      "if loc:\n"
      "    onnx.save(m, '" +
      path +
      "', save_as_external_data=True, location=loc, size_threshold=0)\n"
      "else:\n"
      "    onnx.save(m, '" +
      path + "')\n");
  ASSERT_EQ(made.exit_code, 0) << made.output;
}

// What python3-onnx says of a saved model: the checker's verdict, its outputs, value_info, and
// for each initializer where its data lives.
std::string describe(const std::string& path) {
  return run_python(
             "import onnx\n"
             "onnx.checker.check_model('" +
             path +
             "')\n"
             "m = onnx.load('" +
             path +
             "', load_external_data=False)\n"
             "print('checked')\n"
             "print('outputs', [o.name for o in m.graph.output])\n"
             "print('value_info', sorted(v.name for v in m.graph.value_info))\n"
             "for t in m.graph.initializer:\n"
             "    loc = {kv.key: kv.value for kv in t.external_data}.get('location', '-')\n"
             "    print('init', t.name, 'external' if t.data_location == 1 else 'inline', loc)\n")
      .output;
}

bool has(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

// The original model's values of `outputs` (with its tensors marked so) on the reference
// backend; then the saved model on each backend compared against them.
void expect_same_values(const std::string& original, const std::string& saved,
                        const std::vector<std::string>& marked, const TempDir& dir) {
  const std::string values = dir.file("original_values.json");
  std::vector<std::string> args = {"run", original, "--pluginref", "--save-outputs", values};
  if (!marked.empty()) {
    args.push_back("--onnx-outputs");
    args.insert(args.end(), marked.begin(), marked.end());
  }
  auto r = run_parity(args);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  for (const char* backend : {"--pluginref", "--onnxrt"}) {
    auto c = run_parity({"run", saved, backend, "--load-outputs", values});
    EXPECT_EQ(c.exit_code, 0) << backend << "\n" << c.output;
    EXPECT_TRUE(has(c.output, "PASSED")) << c.output;
  }
}

TEST(RunSaveOnnx, SavesTheMarkedModelTheRunnersLoad) {
  TempDir dir;
  const std::string model = dir.file("m.onnx"), out = dir.file("out.onnx");
  write_model(model);
  const std::string before = read_text(model);
  auto r = run_parity({"run", model, "--onnxrt", "--onnx-outputs", "mark", "all", "--save-onnx",
                       out, "--log-format", "no-colors"});
  ASSERT_EQ(r.exit_code, 0) << r.output;
  // Polygraphy's line, after the model is loaded and before the runner starts.
  const size_t loading = r.output.find("[I] Loading model: " + model);
  const size_t saving = r.output.find("[I] Saving ONNX model to: " + out + "\n");
  ASSERT_NE(saving, std::string::npos) << r.output;
  EXPECT_LT(loading, saving) << r.output;
  EXPECT_LT(saving, r.output.find("Inference Input(s)")) << r.output;
  const std::string d = describe(out);
  EXPECT_TRUE(has(d, "checked")) << d;
  EXPECT_TRUE(has(d, "outputs ['mm', 'add', 'y']")) << d;
  EXPECT_TRUE(has(d, "init W inline")) << d;
  EXPECT_EQ(read_text(model), before);  // the input model is never written
  expect_same_values(model, out, {"mark", "all"}, dir);
}

TEST(RunSaveOnnx, ExcludedOutputsAreNotInTheSavedModel) {
  TempDir dir;
  const std::string model = dir.file("m.onnx"), out = dir.file("out.onnx");
  write_model(model);
  auto r = run_parity({"run", model, "--onnxrt", "--onnx-outputs", "mark", "all",
                       "--onnx-exclude-outputs", "mm", "--save-onnx", out});
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const std::string d = describe(out);
  EXPECT_TRUE(has(d, "outputs ['add', 'y']")) << d;
  expect_same_values(model, out, {"add", "y"}, dir);
}

TEST(RunSaveOnnx, LayerwiseRunsSaveTheMarkedModelToo) {
  TempDir dir;
  const std::string model = dir.file("m.onnx"), out = dir.file("out.onnx");
  write_model(model);
  auto r = run_parity({"run", model, "--pluginref", "--onnxrt", "--onnx-outputs", "mark", "all",
                       "--save-onnx", out, "--log-format", "no-colors"});
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_TRUE(has(r.output, "Layer-wise Comparison")) << r.output;
  EXPECT_TRUE(has(r.output, "[I] Saving ONNX model to: " + out)) << r.output;
  const std::string d = describe(out);
  EXPECT_TRUE(has(d, "checked")) << d;
  EXPECT_TRUE(has(d, "outputs ['mm', 'add', 'y']")) << d;
  expect_same_values(model, out, {"mark", "all"}, dir);
}

TEST(RunSaveOnnx, ShapeInferenceRunsBeforeTheRunnersGetTheModel) {
  TempDir dir;
  const std::string model = dir.file("m.onnx");
  write_model(model);
  const std::string plain = dir.file("plain.onnx"), inferred = dir.file("inferred.onnx");
  ASSERT_EQ(run_parity({"run", model, "--onnxrt", "--save-onnx", plain}).exit_code, 0);
  EXPECT_TRUE(has(describe(plain), "value_info []")) << describe(plain);
  for (const char* flag : {"--shape-inference", "--do-shape-inference"}) {
    auto r = run_parity({"run", model, "--pluginref", "--onnxrt", flag, "--save-onnx", inferred});
    ASSERT_EQ(r.exit_code, 0) << flag << "\n" << r.output;
    const std::string d = describe(inferred);
    EXPECT_TRUE(has(d, "value_info ['add', 'mm']")) << flag << "\n" << d;
    expect_same_values(model, inferred, {}, dir);
  }
  // Polygraphy's flag for ONNX Runtime's shape inference is accepted.
  EXPECT_EQ(run_parity({"run", model, "--pluginref", "--shape-inference",
                        "--no-onnxruntime-shape-inference"})
                .exit_code,
            0);
}

TEST(RunSaveOnnx, ExternalDataFlags) {
  TempDir dir;
  const std::string model = dir.file("m.onnx");
  write_model(model);

  // The default file "<model>.data", tensors of 1 KiB and more: W (4 KiB) goes, b (256 B) stays.
  const std::string ext = dir.file("ext.onnx");
  auto r = run_parity({"run", model, "--onnxrt", "--save-onnx", ext, "--save-external-data"});
  ASSERT_EQ(r.exit_code, 0) << r.output;
  std::string d = describe(ext);
  EXPECT_TRUE(has(d, "checked")) << d;
  EXPECT_TRUE(has(d, "init W external ext.onnx.data")) << d;
  EXPECT_TRUE(has(d, "init b inline")) << d;
  EXPECT_TRUE(fs::exists(dir.file("ext.onnx.data")));
  expect_same_values(model, ext, {}, dir);

  // A threshold above every tensor: nothing moves, and no data file is made.
  const std::string big = dir.file("big.onnx");
  ASSERT_EQ(run_parity({"run", model, "--onnxrt", "--save-onnx", big, "--save-external-data",
                        "--external-data-size-threshold", "8K"})
                .exit_code,
            0);
  d = describe(big);
  EXPECT_TRUE(has(d, "init W inline")) << d;
  EXPECT_FALSE(fs::exists(dir.file("big.onnx.data")));

  // A file of the user's, threshold 0: both tensors there.
  const std::string named = dir.file("named.onnx");
  ASSERT_EQ(run_parity({"run", model, "--onnxrt", "--save-onnx", named, "--save-external-data",
                        "weights.bin", "--external-data-size-threshold", "0"})
                .exit_code,
            0);
  d = describe(named);
  EXPECT_TRUE(has(d, "init W external weights.bin")) << d;
  EXPECT_TRUE(has(d, "init b external weights.bin")) << d;
  expect_same_values(model, named, {}, dir);

  // One file per tensor.
  fs::create_directory(dir.file("split"));
  const std::string split = dir.file("split/split.onnx");
  ASSERT_EQ(run_parity({"run", model, "--onnxrt", "--save-onnx", split, "--save-external-data",
                        "--external-data-size-threshold", "0", "--no-save-all-tensors-to-one-file"})
                .exit_code,
            0);
  d = describe(split);
  EXPECT_TRUE(has(d, "init W external W")) << d;
  EXPECT_TRUE(has(d, "init b external b")) << d;
  EXPECT_TRUE(fs::exists(dir.file("split/W")));
  EXPECT_TRUE(fs::exists(dir.file("split/b")));
  expect_same_values(model, split, {}, dir);

  // A malformed threshold fails before any work, nothing written.
  const std::string bad = dir.file("bad.onnx");
  auto malformed = run_parity({"run", model, "--onnxrt", "--save-onnx", bad, "--save-external-data",
                               "--external-data-size-threshold", "lots"});
  EXPECT_EQ(malformed.exit_code, 2) << malformed.output;
  EXPECT_TRUE(has(malformed.output, "--external-data-size-threshold")) << malformed.output;
  EXPECT_FALSE(fs::exists(bad));
  // An external data path must be a file name beside the model.
  auto absolute = run_parity(
      {"run", model, "--onnxrt", "--save-onnx", bad, "--save-external-data", dir.file("abs.bin")});
  EXPECT_EQ(absolute.exit_code, 2) << absolute.output;
}

TEST(RunSaveOnnx, AModelWithExternalDataSavedElsewhereTakesItsDataAlong) {
  TempDir dir;
  fs::create_directory(dir.file("src"));
  fs::create_directory(dir.file("dst"));
  const std::string model = dir.file("src/m.onnx");
  write_model(model, "weights.bin");
  const std::string data_before = read_text(dir.file("src/weights.bin"));

  const std::string out = dir.file("dst/out.onnx");
  auto r = run_parity({"run", model, "--pluginref", "--onnxrt", "--onnx-outputs", "mark", "all",
                       "--save-onnx", out});
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const std::string d = describe(out);
  EXPECT_TRUE(has(d, "init W external out.onnx.data")) << d;
  expect_same_values(model, out, {"mark", "all"}, dir);

  // Beside its data, the references are kept as they are.
  const std::string beside = dir.file("src/beside.onnx");
  ASSERT_EQ(run_parity({"run", model, "--onnxrt", "--save-onnx", beside}).exit_code, 0);
  EXPECT_TRUE(has(describe(beside), "init W external weights.bin")) << describe(beside);
  expect_same_values(model, beside, {}, dir);

  // Writing over the data the model reads is refused, and the data is untouched.
  auto clobber = run_parity({"run", model, "--onnxrt", "--save-onnx", dir.file("src/x.onnx"),
                             "--save-external-data", "weights.bin"});
  EXPECT_EQ(clobber.exit_code, 2) << clobber.output;
  EXPECT_TRUE(has(clobber.output, "it is a file the model being saved reads from"))
      << clobber.output;
  EXPECT_EQ(read_text(dir.file("src/weights.bin")), data_before);
}

TEST(RunSaveOnnx, TheInputModelIsNeverOverwritten) {
  TempDir dir;
  const std::string model = dir.file("m.onnx");
  write_model(model);
  const std::string before = read_text(model);
  auto r =
      run_parity({"run", model, "--onnxrt", "--onnx-outputs", "mark", "all", "--save-onnx", model});
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_TRUE(has(r.output, "it is the input model, which is never overwritten")) << r.output;
  EXPECT_EQ(read_text(model), before);
  // Nothing to save without a runner that loads the model (saved results compared alone).
  const std::string values = dir.file("values.json");
  ASSERT_EQ(run_parity({"run", model, "--pluginref", "--save-outputs", values}).exit_code, 0);
  auto none =
      run_parity({"run", model, "--load-outputs", values, "--save-onnx", dir.file("out.onnx")});
  EXPECT_EQ(none.exit_code, 2) << none.output;
  EXPECT_TRUE(has(none.output, "failed to use --save-onnx")) << none.output;
}

TEST(RunSaveOnnx, ModelScriptsAreSavedAsTheyLoad) {
  TempDir dir;
  const std::string script = dir.file("make.py"), out = dir.file("out.onnx");
  write_text(script,
             "import numpy as np, onnx\n"
             "from onnx import helper as h, TensorProto as T, numpy_helper as nh\n"
             "def load_model():\n"
             "    k = nh.from_array(np.full((2, 3), 1.5, dtype=np.float32), 'k')\n"
             "    g = h.make_graph([h.make_node('Mul', ['x', 'k'], ['m']),\n"
             "                      h.make_node('Neg', ['m'], ['y'])], 'g',\n"
             "                     [h.make_tensor_value_info('x', T.FLOAT, [2, 3])],\n"
             "                     [h.make_tensor_value_info('y', T.FLOAT, [2, 3])], [k])\n"
             "    return h.make_model(g, opset_imports=[h.make_opsetid('', 17)])\n");
  auto r = run_parity({"run", script, "--pluginref", "--onnxrt", "--onnx-outputs", "mark", "all",
                       "--save-onnx", out, "--shape-inference"});
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const std::string d = describe(out);
  EXPECT_TRUE(has(d, "checked")) << d;
  EXPECT_TRUE(has(d, "outputs ['m', 'y']")) << d;
  EXPECT_TRUE(has(d, "value_info ['m']")) << d;
  EXPECT_TRUE(fs::exists(script));
  expect_same_values(script, out, {"mark", "all"}, dir);
}

TEST(RunSaveOnnx, GeneratedScriptsCarryTheFlags) {
  TempDir dir;
  const std::string model = dir.file("m.onnx"), out = dir.file("out.onnx");
  write_model(model);
  const std::string script = dir.file("run.py");
  auto r = run_parity({"run", model, "--onnxrt", "--onnx-outputs", "mark", "all",
                       "--shape-inference", "--save-onnx", out, "--save-external-data", "w.bin",
                       "--external-data-size-threshold", "2K", "--gen-script", script});
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const std::string text = read_text(script);
  EXPECT_TRUE(has(text, "load_model = InferShapes(load_model)\n")) << text;
  EXPECT_TRUE(has(text, "load_model = SaveOnnx(load_model, path='" + out +
                            "', external_data_path='w.bin', size_threshold=2048, "
                            "all_tensors_to_one_file=True)\n"))
      << text;
  // InferShapes before ModifyOutputs before SaveOnnx, as Polygraphy's script orders them.
  EXPECT_LT(text.find("InferShapes(load_model)"), text.find("ModifyOutputs(load_model"));
  EXPECT_LT(text.find("ModifyOutputs(load_model"), text.find("SaveOnnx(load_model"));

  // A run that needs Python runs such a script: the model is saved from Python, the same way.
  write_text(dir.file("loader.py"),
             "import numpy as np\n"
             "def load_data():\n"
             "    yield {'x': np.linspace(-3, 3, 1024).astype(np.float32).reshape(16, 64)}\n");
  auto py = run_parity({"run", model, "--onnxrt", "--onnx-outputs", "mark", "all",
                        "--shape-inference", "--save-onnx", out, "--save-external-data", "w.bin",
                        "--external-data-size-threshold", "2K", "--data-loader-script",
                        dir.file("loader.py")});
  ASSERT_EQ(py.exit_code, 0) << py.output;
  EXPECT_TRUE(has(py.output, "Saving ONNX model to: " + out)) << py.output;
  const std::string d = describe(out);
  EXPECT_TRUE(has(d, "checked")) << d;
  EXPECT_TRUE(has(d, "outputs ['mm', 'add', 'y']")) << d;
  EXPECT_TRUE(has(d, "value_info ['add', 'mm']")) << d;
  EXPECT_TRUE(has(d, "init W external w.bin")) << d;
  EXPECT_TRUE(has(d, "init b inline")) << d;
  expect_same_values(model, out, {"mark", "all"}, dir);
}

TEST(RunSaveOnnx, DatasetRunsSaveTheModelTheirRunnersLoad) {
  TempDir dir;
  const std::string model = dir.file("m.onnx"), out = dir.file("out.onnx");
  write_model(model);
  auto r = run_parity({"run", model, "--pluginref", "--onnxrt", "--dataset", "--iterations", "2",
                       "--shape-inference", "--save-onnx", out, "--save-external-data"});
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const std::string d = describe(out);
  EXPECT_TRUE(has(d, "checked")) << d;
  EXPECT_TRUE(has(d, "value_info ['add', 'mm']")) << d;
  EXPECT_TRUE(has(d, "init W external out.onnx.data")) << d;
  expect_same_values(model, out, {}, dir);
  // Its script carries them too; with --dask each worker would write the file, so it is refused.
  const std::string script = dir.file("dataset.py");
  ASSERT_EQ(run_parity({"run", model, "--pluginref", "--onnxrt", "--dataset", "--shape-inference",
                        "--save-onnx", out, "--gen-script", script})
                .exit_code,
            0);
  const std::string text = read_text(script);
  EXPECT_TRUE(has(text, "load_model = InferShapes(load_model)\n")) << text;
  EXPECT_TRUE(has(text, "load_model = SaveOnnx(load_model, path='" + out + "'")) << text;
  auto dask = run_parity({"run", model, "--pluginref", "--onnxrt", "--dask", "--save-onnx", out});
  EXPECT_EQ(dask.exit_code, 2) << dask.output;
  EXPECT_TRUE(has(dask.output, "failed to use --save-onnx with --dask")) << dask.output;
}

// The line of the fixture that starts with `start` (without its newline), "" if none.
std::string fixture_line(const std::string& text, const std::string& start) {
  const size_t at = text.find("\n" + start);
  if (at == std::string::npos) return "";
  return text.substr(at + 1, text.find('\n', at + 1) - at - 1);
}

TEST(RunSaveOnnx, PrintsAndScriptsAsPolygraphyDoes) {
  TempDir dir;
  write_model(dir.file("m.onnx"));
  // Polygraphy's line, with the path as given, after the model is loaded.
  const std::string printed =
      read_text(source_path("tests/cli/fixtures/polygraphy_run_save_onnx.txt"));
  const std::string saving = fixture_line(printed, "[I] Saving ONNX model to: ");
  ASSERT_EQ(saving, "[I] Saving ONNX model to: out.onnx");
  auto r = run_command("cd '" + dir.path().string() +
                       "' && '" PARITY_CLI
                       "' run m.onnx --onnxrt --onnx-outputs mark all --save-onnx out.onnx "
                       "--log-format no-colors");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_TRUE(has(r.output, "\n" + saving + "\n")) << r.output;
  EXPECT_LT(r.output.find("[I] Loading model: "), r.output.find(saving)) << r.output;
  EXPECT_TRUE(fs::exists(dir.file("out.onnx")));

  // Polygraphy's script saves with the same keyword arguments, in the same loader order.
  const std::string script =
      read_text(source_path("tests/cli/fixtures/polygraphy_run_save_onnx_script.py"));
  const std::string save_line = fixture_line(script, "save_onnx = SaveOnnx(modify_outputs, ");
  ASSERT_FALSE(save_line.empty()) << script;
  const std::string arguments = save_line.substr(save_line.find(", ") + 2);
  auto g = run_command("cd '" + dir.path().string() +
                       "' && '" PARITY_CLI
                       "' run m.onnx --onnxrt --save-onnx out.onnx --onnx-outputs mark all "
                       "--shape-inference --save-external-data ext.bin "
                       "--external-data-size-threshold 1K --no-save-all-tensors-to-one-file "
                       "--gen-script run.py");
  ASSERT_EQ(g.exit_code, 0) << g.output;
  const std::string ours = read_text(dir.file("run.py"));
  EXPECT_TRUE(has(ours, "load_model = SaveOnnx(load_model, " + arguments + "\n"))
      << arguments << "\n"
      << ours;
  EXPECT_LT(script.find("InferShapes("), script.find("ModifyOnnxOutputs("));
  EXPECT_LT(ours.find("InferShapes("), ours.find("ModifyOutputs(load_model"));
}

}  // namespace
}  // namespace parity::testing
