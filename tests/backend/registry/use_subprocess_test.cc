// `parity run --use-subprocess`: a backend that crashes (here the plugin backend of
// plugin/echo_backend.cc, told to) fails with its own error while the other runners still
// compare, and the run fails. Lives beside the plugin backend it needs.
#include <gtest/gtest.h>

#include "support/test_util.h"

namespace parity::testing {
namespace {

CommandResult run_with_echo(const std::string& crash, std::vector<std::string> extra = {}) {
  std::vector<std::string> args = {"run",
                                   source_path("examples/identity.onnx"),
                                   "--pluginref",
                                   "--echo",
                                   "--onnxrt",
                                   "--plugins",
                                   PARITY_TEST_ECHO_BACKEND,
                                   "--echo-option",
                                   "y=x",
                                   "--echo-option",
                                   "crash=" + crash};
  args.insert(args.end(), extra.begin(), extra.end());
  return run_parity(args);
}

bool has(const CommandResult& r, const std::string& s) {
  return r.output.find(s) != std::string::npos;
}

TEST(UseSubprocess, ACrashingBackendFailsAloneAndTheOthersStillCompare) {
  const CommandResult r = run_with_echo("segv", {"--use-subprocess"});
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_TRUE(has(r,
                  "| Terminated prematurely during inference: its process was killed by "
                  "signal 11 (Segmentation fault)"))
      << r.output;
  // The reference and ONNX Runtime were still compared with each other, and passed.
  EXPECT_TRUE(has(r, "Accuracy Comparison | pluginref-runner-")) << r.output;
  EXPECT_TRUE(has(r, "vs. onnxrt-runner-")) << r.output;
  EXPECT_TRUE(has(r, "PASSED | Output: 'y'")) << r.output;
  // ... but the run fails, naming the runner left out.
  EXPECT_TRUE(has(r, "1 runner(s) failed and were left out of the comparison: echo-runner-"))
      << r.output;
  EXPECT_TRUE(has(r, "FAILED | Runtime:")) << r.output;
  EXPECT_FALSE(has(r, "PASSED | Runtime:")) << r.output;
}

TEST(UseSubprocess, AbortExitAndHangAreEachNamed) {
  const CommandResult aborted = run_with_echo("abort", {"--use-subprocess"});
  EXPECT_EQ(aborted.exit_code, 1) << aborted.output;
  EXPECT_TRUE(has(aborted, "killed by signal 6 (Aborted)")) << aborted.output;

  const CommandResult exited = run_with_echo("exit", {"--use-subprocess"});
  EXPECT_EQ(exited.exit_code, 1) << exited.output;
  EXPECT_TRUE(has(exited, "its process exited with status 3")) << exited.output;

  const CommandResult hung = run_with_echo("hang", {"--subprocess-timeout", "1"});
  EXPECT_EQ(hung.exit_code, 1) << hung.output;
  EXPECT_TRUE(has(hung, "it did not answer within 1 s")) << hung.output;
  EXPECT_TRUE(has(hung, "PASSED | Output: 'y'")) << hung.output;
}

TEST(UseSubprocess, WithoutItTheCrashEndsTheWholeRun) {
  // What --use-subprocess protects against: the same crash kills parity itself.
  const CommandResult r = run_with_echo("segv");
  EXPECT_NE(r.exit_code, 0) << r.output;
  EXPECT_FALSE(has(r, "Accuracy Comparison")) << r.output;
}

TEST(UseSubprocess, ResultsEqualThoseOfARunInOneProcess) {
  TempDir dir;
  const std::string model = source_path("examples/tiny_cnn.onnx");
  for (const std::string backend : {"--pluginref", "--onnxrt"}) {
    const std::string one = dir.file("one.json"), two = dir.file("two.json");
    const CommandResult in_process =
        run_parity({"run", model, backend, "--iterations", "2", "--save-outputs", one});
    const CommandResult isolated = run_parity(
        {"run", model, backend, "--iterations", "2", "--use-subprocess", "--save-outputs", two});
    ASSERT_EQ(in_process.exit_code, 0) << in_process.output;
    ASSERT_EQ(isolated.exit_code, 0) << isolated.output;
    // The same values, bit for bit: parity compares the two files with zero tolerance.
    const CommandResult same =
        run_parity({"run", "--load-outputs", one, two, "--atol", "0", "--rtol", "0"});
    EXPECT_EQ(same.exit_code, 0) << same.output;
    EXPECT_TRUE(has(same, "PASSED | Output: 'probs'")) << same.output;
  }
}

}  // namespace
}  // namespace parity::testing
