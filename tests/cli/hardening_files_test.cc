// `parity` and the files it is given or asked to write (issue 15): a FIFO or a device is refused
// at once instead of blocking or reading for ever; saved files appear whole, are written through
// symlinks and special files instead of replacing them; ONNX Runtime reads external data from
// --external-data-dir and leaves nothing beside the user's files; a NUL in an external-data
// location is shown, not cut short.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <filesystem>
#include <set>

#include "support/onnx_text.h"
#include "support/test_util.h"

namespace parity::testing {
namespace {

namespace fs = std::filesystem;

bool has(const CommandResult& r, const std::string& words) {
  return r.output.find(words) != std::string::npos;
}

std::set<std::string> listing(const fs::path& dir) {
  std::set<std::string> names;
  for (const auto& e : fs::directory_iterator(dir)) names.insert(e.path().filename().string());
  return names;
}

std::string identity_model() { return source_path("examples/identity.onnx"); }

TEST(CliFiles, AFifoAsModelOrDataIsRefusedWithoutBlocking) {
  TempDir dir;
  const std::string fifo = dir.file("pipe");
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  // `timeout` turns a hang (the old behaviour) into a failure instead of a stuck test.
  CommandResult r =
      run_command("timeout 20 " + std::string(PARITY_CLI) + " run " + fifo + " --pluginref");
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_TRUE(has(r, "it is a FIFO (named pipe), not a regular file")) << r.output;
  r = run_command("timeout 20 " + std::string(PARITY_CLI) + " run " + identity_model() +
                  " --pluginref --load-inputs " + fifo);
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_TRUE(has(r, "it is a FIFO (named pipe), not a regular file")) << r.output;
}

TEST(CliFiles, InspectDataOnAnEndlessDeviceIsRefused) {
  CommandResult r =
      run_command("timeout 20 " + std::string(PARITY_CLI) + " inspect data /dev/zero");
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_TRUE(has(r, "/dev/zero: it is a character device, not a regular file")) << r.output;
  // Loaded inputs, read before the run and (--dataset) one file at a time as the run goes.
  for (const char* dataset : {"", " --dataset"}) {
    r = run_command("timeout 20 " + std::string(PARITY_CLI) + " run " + identity_model() +
                    " --pluginref --load-inputs /dev/zero" + dataset);
    EXPECT_EQ(r.exit_code, 1) << dataset << r.output;
    EXPECT_TRUE(has(r, "/dev/zero: it is a character device, not a regular file"))
        << dataset << r.output;
  }
}

TEST(CliFiles, SavingOutputsToAFolderSaysSo) {
  TempDir dir;
  CommandResult r =
      run_parity({"run", identity_model(), "--pluginref", "--save-outputs", dir.path().string()});
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_TRUE(has(r, "it is a folder; give the path of a file inside it")) << r.output;
  EXPECT_FALSE(has(r, "Success")) << r.output;
}

TEST(CliFiles, SavedOutputsGoThroughSpecialFilesAndSymlinks) {
  // /dev/stdout is written to, not replaced (as root a rename would have replaced it).
  CommandResult r =
      run_parity({"run", identity_model(), "--pluginref", "--save-outputs", "/dev/stdout"});
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_TRUE(has(r, "\"polygraphy_class\"")) << r.output;
  TempDir dir;
  const std::string real = dir.file("real.json"), link = dir.file("link.json");
  write_text(real, "old");
  fs::create_symlink(real, link);
  r = run_parity({"run", identity_model(), "--pluginref", "--save-outputs", link});
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_TRUE(fs::is_symlink(link));
  EXPECT_NE(read_text(real).find("polygraphy_class"), std::string::npos);
  EXPECT_EQ(listing(dir.path()), (std::set<std::string>{"link.json", "real.json"}))
      << "a temporary file was left behind";
}

// A model whose weight W (a 2x2 float initializer) lives in external file w.bin; y = x + W.
void write_external_model(const std::string& folder, const std::string& location, float weight) {
  CommandResult r = run_python(fmt::format(R"(
import numpy as np, onnx
from onnx import helper as oh, numpy_helper as nh, TensorProto as TP
w = nh.from_array(np.full((2, 2), {0}, np.float32), 'W')
g = oh.make_graph([oh.make_node('Add', ['x', 'W'], ['y'])], 'g',
                  [oh.make_tensor_value_info('x', TP.FLOAT, [2, 2])],
                  [oh.make_tensor_value_info('y', TP.FLOAT, [2, 2])], [w])
m = oh.make_model(g, opset_imports=[oh.make_opsetid('', 13)])
m.ir_version = 8
onnx.save_model(m, '{1}/model.onnx', save_as_external_data=True, location='{2}',
                size_threshold=0)
)",
                                           weight, folder, location));
  ASSERT_EQ(r.exit_code, 0) << r.output;
}

TEST(CliFiles, OnnxRuntimeReadsExternalDataFromTheGivenFolderAndLeavesNothingThere) {
  TempDir model_dir, other_dir;
  write_external_model(model_dir.path().string(), "w.bin", 1.0f);
  write_external_model(other_dir.path().string(), "w.bin", 5.0f);
  const auto before_model = listing(model_dir.path()), before_other = listing(other_dir.path());
  // Both backends must add the weights of --external-data-dir (5), not the model folder's (1).
  CommandResult r = run_parity({"run", model_dir.file("model.onnx"), "--onnxrt", "--pluginref",
                                "--external-data-dir", other_dir.path().string()});
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_TRUE(has(r, "PASSED | All outputs matched")) << r.output;
  // Marked outputs make the model ONNX Runtime reads a modified one, written beside the data
  // for the session's creation and removed after it.
  r = run_parity({"run", model_dir.file("model.onnx"), "--onnxrt", "--pluginref", "--onnx-outputs",
                  "mark", "all"});
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_EQ(listing(model_dir.path()), before_model);
  EXPECT_EQ(listing(other_dir.path()), before_other);
}

TEST(CliFiles, ANulInAnExternalDataLocationIsShown) {
  TempDir dir;
  write_external_model(dir.path().string(), "w.bin", 1.0f);
  CommandResult r = run_python(fmt::format(R"(
import onnx
m = onnx.load('{0}/model.onnx', load_external_data=False)
for e in m.graph.initializer[0].external_data:
    if e.key == 'location':
        e.value = 'w\x00.bin'
onnx.save(m, '{0}/nul.onnx')
)",
                                           dir.path().string()));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  r = run_parity({"run", dir.file("nul.onnx"), "--pluginref"});
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_TRUE(has(r,
                  "failed to load external data of tensor 'W' with location 'w\\0.bin': the "
                  "location contains a NUL character"))
      << r.output;
}

TEST(CliFiles, CtrlCStopsPromptlyWithAMessageAndNoOutputFile) {
  TempDir dir;
  const std::string model = dir.file("loop.onnx");
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
  for (const char* sig : {"INT", "TERM"}) {
    const std::string out = dir.file(std::string("out-") + sig + ".json");
    // The run would take minutes (up to the iteration limit); the signal comes after a second.
    CommandResult r = run_command(fmt::format(
        "{} run {} --pluginref --limit-loop-iterations 1000000000 --save-outputs {} 2>&1 & pid=$!; "
        "sleep 1; kill -{} $pid; wait $pid; echo \"status=$?\"",
        PARITY_CLI, model, out, sig));
    EXPECT_TRUE(has(r, std::string("status=") + (std::string(sig) == "INT" ? "130" : "143")))
        << r.output;
    EXPECT_TRUE(has(r, std::string(sig) == "INT" ? "[!] Interrupted (SIGINT): the run stopped"
                                                 : "[!] Terminated (SIGTERM): the run stopped"))
        << r.output;
    EXPECT_FALSE(fs::exists(out));
  }
  EXPECT_EQ(listing(dir.path()), (std::set<std::string>{"loop.onnx"}));
}

}  // namespace
}  // namespace parity::testing
