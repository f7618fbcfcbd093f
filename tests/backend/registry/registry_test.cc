// The backend registry: the built-in backends and a test-only one (offset_backend.cc, known to
// parity only through its registration) run by parity's own comparison and layer-wise code,
// and a backend served by a plugin library through the C interface (plugin/echo_backend.cc).
#include <gtest/gtest.h>

#include <algorithm>
#include <functional>

#include "backend/plugins.h"
#include "backend/registry.h"
#include "cli/app.h"
#include "core/error.h"
#include "support/onnx_text.h"
#include "support/test_util.h"

namespace parity::testing {
namespace {

std::string error_of(const std::function<void()>& fn) {
  try {
    fn();
  } catch (const std::exception& e) {
    return e.what();
  }
  return "";
}

// Runs `parity` in this process, where the test backend is registered, capturing its log.
struct InProcess {
  int status = -1;
  std::string log;
};
InProcess parity_main(std::vector<std::string> args) {
  args.insert(args.begin(), "parity");
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  LogCapture capture;
  InProcess r;
  r.status = cli::main(static_cast<int>(argv.size()), argv.data());
  r.log = capture.text();
  return r;
}

// x -> Relu -> t1 -> Neg -> t2 -> Abs -> t3 -> Sigmoid -> y
constexpr const char* kChain = R"(
  <ir_version: 8, opset_import: ["" : 17]>
  chain (float[2,8] x) => (float[2,8] y) {
    t1 = Relu(x)
    t2 = Neg(t1)
    t3 = Abs(t2)
    y = Sigmoid(t3)
  }
)";

TEST(BackendRegistry, ListsEveryBackendWithUniqueFlags) {
  std::vector<std::string> names, flags;
  for (const Backend* b : BackendRegistry::global().all()) {
    names.push_back(b->name);
    for (const auto& f : b->flag_list()) flags.push_back(f);
  }
  EXPECT_EQ(names.front(), "pluginref");
  for (const char* n : {"pluginref", "onnxrt", "offsetref"})
    EXPECT_NE(std::find(names.begin(), names.end(), n), names.end()) << n;
  std::vector<std::string> sorted = flags;
  std::sort(sorted.begin(), sorted.end());
  EXPECT_EQ(std::adjacent_find(sorted.begin(), sorted.end()), sorted.end());
}

TEST(BackendRegistry, RefusesATakenNameOrFlag) {
  Backend copy = *BackendRegistry::global().find("offsetref");
  std::string message = error_of([&] { BackendRegistry::global().add(copy); });
  EXPECT_NE(message.find("failed to register backend 'offsetref': a backend of that name is "
                         "already registered"),
            std::string::npos)
      << message;
  copy.name = "another";
  copy.flags = "--another,--ref";
  message = error_of([&] { BackendRegistry::global().add(copy); });
  EXPECT_NE(message.find("its flag --ref is taken by backend 'pluginref'"), std::string::npos)
      << message;
}

TEST(BackendRegistry, UnknownBackendNamesTheChoices) {
  const std::string message = error_of([] { BackendRegistry::global().configure("trt", {}); });
  EXPECT_NE(message.find("failed to find backend 'trt'"), std::string::npos) << message;
  EXPECT_NE(message.find("pluginref, onnxrt"), std::string::npos) << message;
}

TEST(BackendRegistry, ATestBackendIsComparedByTheRunCommand) {
  TempDir dir;
  write_model_from_text(dir.file("chain.onnx"), kChain);
  InProcess same =
      parity_main({"run", dir.file("chain.onnx"), "--pluginref", "--offsetref", "--offset", "0"});
  EXPECT_EQ(same.status, 0) << same.log;
  EXPECT_NE(same.log.find("offsetref-runner-N"), std::string::npos) << same.log;

  InProcess shifted =
      parity_main({"run", dir.file("chain.onnx"), "--pluginref", "--offsetref", "--offset", "0.5"});
  EXPECT_EQ(shifted.status, 1) << shifted.log;
  EXPECT_NE(shifted.log.find("FAILED | Output: 'y'"), std::string::npos) << shifted.log;

  InProcess bad = parity_main(
      {"run", dir.file("chain.onnx"), "--pluginref", "--offsetref", "--offset", "half"});
  EXPECT_EQ(bad.status, 2) << bad.log;
  EXPECT_NE(bad.log.find("failed to parse --offset with value 'half'"), std::string::npos)
      << bad.log;
}

TEST(BackendRegistry, ATestBackendIsComparedLayerWise) {
  TempDir dir;
  write_model_from_text(dir.file("chain.onnx"), kChain);
  // Only t2 is shifted: Neg is the first divergence, Abs and Sigmoid inherit its error.
  InProcess r =
      parity_main({"run", dir.file("chain.onnx"), "--pluginref", "--offsetref", "--offset", "0.25",
                   "--offset-tensor", "t2", "--onnx-outputs", "mark", "all", "--local-error"});
  EXPECT_EQ(r.status, 1) << r.log;
  EXPECT_NE(r.log.find("Layer-wise Comparison"), std::string::npos) << r.log;
  EXPECT_NE(r.log.find("First divergence: node 'Neg_1' (Neg)"), std::string::npos) << r.log;
}

TEST(BackendRegistry, GenScriptRefusesABackendWithoutAPythonForm) {
  TempDir dir;
  write_model_from_text(dir.file("chain.onnx"), kChain);
  InProcess r = parity_main({"run", dir.file("chain.onnx"), "--pluginref", "--offsetref",
                             "--gen-script", dir.file("s.py")});
  EXPECT_EQ(r.status, 2) << r.log;
  EXPECT_NE(r.log.find("failed to write a script for backend 'offsetref': it has no Python "
                       "form"),
            std::string::npos)
      << r.log;
}

TEST(BackendRegistry, APluginLibraryServesABackendThroughTheCInterface) {
  const std::string model = source_path("examples/identity.onnx");
  CommandResult same = run_parity({"run", model, "--pluginref", "--echo", "--plugins",
                                   PARITY_TEST_ECHO_BACKEND, "--echo-option", "y=x"});
  EXPECT_EQ(same.exit_code, 0) << same.output;
  EXPECT_NE(same.output.find("echo-runner-N"), std::string::npos) << same.output;

  CommandResult shifted =
      run_parity({"run", model, "--pluginref", "--echo", "--plugins", PARITY_TEST_ECHO_BACKEND,
                  "--echo-option", "y=x", "--echo-option", "offset=0.5"});
  EXPECT_EQ(shifted.exit_code, 1) << shifted.output;
  EXPECT_NE(shifted.output.find("FAILED | Output: 'y'"), std::string::npos) << shifted.output;

  // A failure inside the library is reported with its own message.
  CommandResult missing = run_parity({"run", model, "--echo", "--plugins", PARITY_TEST_ECHO_BACKEND,
                                      "--echo-option", "y=nothing"});
  EXPECT_EQ(missing.exit_code, 1) << missing.output;
  EXPECT_NE(missing.output.find("failed to run inference with backend 'echo' of plugin library"),
            std::string::npos)
      << missing.output;
  EXPECT_NE(missing.output.find("no input named 'nothing'"), std::string::npos) << missing.output;
}

TEST(BackendRegistry, ALibraryWithNeitherEntryPointIsRefused) {
  const std::string message = error_of([] { load_plugin(PARITY_TEST_ECHO_BACKEND "-missing"); });
  EXPECT_NE(message.find("failed to load plugin library"), std::string::npos) << message;
}

}  // namespace
}  // namespace parity::testing
