// `parity run` with a Python script (--data-loader-script, --compare-func-script) runs the
// generated script in Python: only a verdict the script itself wrote can pass the run, and
// stopping parity stops the script.
#include <sstream>

#include <gtest/gtest.h>

#include <filesystem>

#include "support/test_util.h"

namespace parity::testing {
namespace {

namespace fs = std::filesystem;

CommandResult run_with_loader(const TempDir& dir, const std::string& body) {
  write_text(dir.file("loader.py"),
             "import os, sys, time\n"
             "import numpy as np\n"
             "def load_data():\n" +
                 body + "    yield {'x': np.ones((1, 1, 2, 2), dtype=np.float32)}\n");
  return run_parity({"run", source_path("examples/identity.onnx"), "--pluginref",
                     "--data-loader-script", dir.file("loader.py")});
}

TEST(RunScript, AScriptThatEndsItselfNeverPasses) {
  TempDir dir;
  // os._exit(0): exit status 0, and nothing was compared.
  const CommandResult quiet = run_with_loader(dir, "    os._exit(0)\n");
  EXPECT_EQ(quiet.exit_code, 1) << quiet.output;
  EXPECT_NE(quiet.output.find("exited with status 0 before it reached a verdict"),
            std::string::npos)
      << quiet.output;
  EXPECT_EQ(quiet.output.find("PASSED"), std::string::npos) << quiet.output;

  // sys.exit(3): Parity's own status (1), not the script's.
  const CommandResult three = run_with_loader(dir, "    sys.exit(3)\n");
  EXPECT_EQ(three.exit_code, 1) << three.output;
  EXPECT_NE(three.output.find("exited with status 3 before it reached a verdict"),
            std::string::npos)
      << three.output;

  // The same loader without the exit passes.
  const CommandResult fine = run_with_loader(dir, "");
  EXPECT_EQ(fine.exit_code, 0) << fine.output;
  EXPECT_NE(fine.output.find("PASSED | Runtime:"), std::string::npos) << fine.output;
}

TEST(RunScript, GenerationFlagsBesideADataLoaderScriptAreIgnoredWithPolygraphysWarning) {
  // Polygraphy ignores --seed, --val-range and --iterations beside a custom data loader (so an
  // endless load_data runs until interrupted) and says so before its RUNNING line.
  TempDir dir;
  write_text(dir.file("loader.py"),
             "import numpy as np\n"
             "def load_data():\n"
             "    yield {'x': np.ones((1, 1, 2, 2), dtype=np.float32)}\n");
  const std::string fixture =
      read_text(source_path("tests/cli/fixtures/polygraphy_run_ignored_generation_args.txt"));
  std::string warnings;  // the fixture's lines before RUNNING, comments left out
  std::istringstream lines(fixture);
  for (std::string line; std::getline(lines, line) && line.find("RUNNING") == std::string::npos;)
    if (!line.starts_with("#")) warnings += line + "\n";
  const CommandResult r = run_parity({"run", source_path("examples/identity.onnx"), "--pluginref",
                                      "--data-loader-script", dir.file("loader.py"), "--iterations",
                                      "3", "--seed", "2", "--val-range", "[0,2]"});
  EXPECT_EQ(r.exit_code, 0) << r.output;
  const size_t at = r.output.find(warnings);
  EXPECT_NE(at, std::string::npos) << r.output;
  EXPECT_LT(at, r.output.find("RUNNING")) << r.output;
  EXPECT_NE(r.output.find("Completed 1 iteration(s)"), std::string::npos) << r.output;
}

// The lines of a run's runner lifecycle (Activating, Loading model, the session), with the
// runner names and times masked.
std::string lifecycle_lines(const std::string& output) {
  std::string lines;
  std::istringstream in(output);
  for (std::string line; std::getline(in, line);) {
    if (line.find("Activating") != std::string::npos)
      line = line.substr(0, line.find('-')) + " Activating";
    if (line.find("Activating") != std::string::npos ||
        line.find("Loading model: ") != std::string::npos ||
        line.find("Creating ONNX-Runtime") != std::string::npos)
      lines += line + "\n";
  }
  return lines;
}

// A run through a Python script prints Polygraphy's loader lines where the plain run does: each
// runner's "Loading model" after its "Activating" line (none for ONNX Runtime opening an
// unmodified file), and --save-onnx's line after the first of them. (The script saves again
// for the second runner, as Polygraphy's loader chain does; the plain run saves once.)
TEST(RunScript, ScriptRunsLoadTheModelAsEachRunnerIsActivated) {
  TempDir dir;
  write_text(dir.file("loader.py"),
             "import numpy as np\n"
             "def load_data():\n"
             "    yield {'x': np.ones((1, 1, 2, 2), dtype=np.float32)}\n");
  const std::string model = source_path("examples/identity.onnx");
  const std::string saved = dir.file("saved.onnx");
  for (const std::vector<std::string>& extra :
       {std::vector<std::string>{}, std::vector<std::string>{"--shape-inference"},
        std::vector<std::string>{"--save-onnx", saved}}) {
    std::vector<std::string> plain = {"run",      model,          "--pluginref",
                                      "--onnxrt", "--log-format", "no-colors"};
    plain.insert(plain.end(), extra.begin(), extra.end());
    std::vector<std::string> scripted = plain;
    scripted.insert(scripted.end(), {"--data-loader-script", dir.file("loader.py")});
    const CommandResult a = run_parity(plain), b = run_parity(scripted);
    ASSERT_EQ(a.exit_code, 0) << a.output;
    ASSERT_EQ(b.exit_code, 0) << b.output;
    const std::string expected = lifecycle_lines(a.output);
    EXPECT_NE(expected.find("pluginref Activating\n[I] Loading model: "), std::string::npos)
        << a.output;
    EXPECT_EQ(lifecycle_lines(b.output), expected) << b.output;
    if (!extra.empty() && extra[0] == "--save-onnx") {
      for (const CommandResult* r : {&a, &b})
        EXPECT_NE(r->output.find("Activating and starting inference\n[I] Loading model: " + model +
                                 "\n[I] Saving ONNX model to: " + saved + "\n"),
                  std::string::npos)
            << r->output;
    }
  }
}

TEST(RunScript, InterruptingParityStopsItsScriptAndLeavesNoTemporaryFile) {
  TempDir dir;
  const std::string tmp = dir.file("tmp");
  fs::create_directory(tmp);
  write_text(dir.file("loader.py"),
             "import time\n"
             "import numpy as np\n"
             "def load_data():\n"
             "    time.sleep(4)\n"
             "    open(" +
                 std::string("'") + dir.file("late.txt") +
                 "', 'w').write('still running')\n"
                 "    yield {'x': np.ones((1, 1, 2, 2), dtype=np.float32)}\n");
  const CommandResult r = run_command(
      "( TMPDIR='" + tmp + "' '" PARITY_CLI "' run '" + source_path("examples/identity.onnx") +
      "' --pluginref --data-loader-script '" + dir.file("loader.py") + "' --save-outputs '" +
      dir.file("out.json") +
      "' & pid=$!; sleep 1.5; kill -INT $pid; wait $pid; echo \"status=$?\"; sleep 4 ) 2>&1");
  EXPECT_NE(r.output.find("status=130"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("Interrupted (SIGINT)"), std::string::npos) << r.output;
  EXPECT_FALSE(fs::exists(dir.file("late.txt"))) << "the script went on after parity stopped";
  EXPECT_FALSE(fs::exists(dir.file("out.json")));
  EXPECT_TRUE(fs::is_empty(tmp)) << "a temporary script was left in " << tmp;
}

}  // namespace
}  // namespace parity::testing
