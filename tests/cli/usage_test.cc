// Usage errors say what was wrong in Polygraphy's words, with the nearest valid choice, and
// where to find the help of the level the mistake was made at (exit status 2).
#include <gtest/gtest.h>

#include "support/test_util.h"

namespace parity::testing {
namespace {

bool has(const CommandResult& r, const std::string& s) {
  return r.output.find(s) != std::string::npos;
}

TEST(CliUsage, AnUnknownSubcommandIsAnInvalidChoice) {
  CommandResult r = run_parity({"rnu"});
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_TRUE(has(r,
                  "argument subcommand: invalid choice: 'rnu' (choose from 'run', 'inspect', "
                  "'surgeon', 'check', 'convert', 'data', 'debug'); "
                  "did you mean 'run'?"))
      << r.output;
  EXPECT_TRUE(has(r, "--help' for usage.")) << r.output;
  EXPECT_FALSE(has(r, "rnu --help")) << r.output;
  CommandResult inner = run_parity({"inspect", "modl", "x.onnx"});
  EXPECT_EQ(inner.exit_code, 2) << inner.output;
  EXPECT_TRUE(has(inner,
                  "invalid choice: 'modl' (choose from 'model', 'data', 'sparsity'); did you mean "
                  "'model'?"))
      << inner.output;
  EXPECT_TRUE(has(inner, " inspect --help' for usage.")) << inner.output;
  CommandResult none = run_parity({});
  EXPECT_EQ(none.exit_code, 2) << none.output;
  EXPECT_TRUE(has(none,
                  "a subcommand is required (choose from 'run', 'inspect', 'surgeon', 'check', "
                  "'convert', 'data', 'debug')"))
      << none.output;
}

TEST(CliUsage, AnUnknownFlagGetsTheNearestOne) {
  const std::string model = source_path("examples/identity.onnx");
  CommandResult one = run_parity({"run", model, "--onnxrtt"});
  EXPECT_EQ(one.exit_code, 2) << one.output;
  EXPECT_TRUE(has(one, "Unrecognized Options: ['--onnxrtt']; did you mean '--onnxrt'?"))
      << one.output;
  EXPECT_TRUE(has(one, " run --help' for usage.")) << one.output;
  CommandResult two = run_parity({"run", model, "--pluginref", "--atoll", "1e-3", "--seeed=3"});
  EXPECT_EQ(two.exit_code, 2) << two.output;
  EXPECT_TRUE(has(two, "did you mean '--atol' for '--atoll', '--seed' for '--seeed'?"))
      << two.output;
}

// On a terminal (a pseudo-terminal made by script(1)) lines are coloured unless NO_COLOR is set.
TEST(CliUsage, NoColorTurnsColoursOff) {
  const std::string command =
      std::string(PARITY_CLI) + " run " + source_path("examples/identity.onnx") + " --pluginref";
  CommandResult colored = run_command("script -qec '" + command + "' /dev/null");
  ASSERT_EQ(colored.exit_code, 0) << colored.output;
  EXPECT_TRUE(has(colored, "\033[")) << colored.output;
  CommandResult plain = run_command("NO_COLOR=1 script -qec '" + command + "' /dev/null");
  ASSERT_EQ(plain.exit_code, 0) << plain.output;
  EXPECT_FALSE(has(plain, "\033[")) << plain.output;
  EXPECT_TRUE(has(plain, "PASSED | Runtime")) << plain.output;
}

}  // namespace
}  // namespace parity::testing
