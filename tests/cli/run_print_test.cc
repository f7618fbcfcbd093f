// `parity run` prints what Polygraphy 0.49 printed for the same run, line for line, with only
// times and run names masked (tests/cli/fixtures/run/: make_fixtures.sh ran Polygraphy; the
// results it saved, ref.json, and a copy altered by alter.py are loaded by the comparisons, and
// the inputs it saved, f64_inputs.json, by the loaded-input cases).
#include <gtest/gtest.h>

#include <filesystem>
#include <regex>
#include <sstream>

#include "cli/polygraphy_fixture.h"
#include "support/test_util.h"

namespace parity::testing {
namespace {

const std::string kDir = "tests/cli/fixtures/run/";

// Times (runner names carry the time they were made, inference and run times) and the program
// that ran are masked; everything else must be equal.
std::string masked(const std::string& text) {
  static const std::regex runner(R"((\w+)-runner-N(\d+)-\d\d/\d\d/\d\d-\d\d:\d\d:\d\d)");
  static const std::regex ms(R"(\d+(\.\d+)?(e-?\d+)? ms)");
  static const std::regex runtime(R"(Runtime: \d+\.\d+s)");
  static const std::regex command(R"(Command: \S+)");
  std::string s = std::regex_replace(text, runner, "$1-runner-N$2-<time>");
  s = std::regex_replace(s, ms, "<t> ms");
  s = std::regex_replace(s, runtime, "Runtime: <t>s");
  return std::regex_replace(s, command, "Command: <program>");
}

using Fixture = PolygraphyFixture;
Fixture read_fixture(const std::string& name) { return read_polygraphy_fixture(kDir, name); }

CommandResult run_in_fixtures(const std::vector<std::string>& args) {
  return run_parity_in(kDir, args);
}

class RunPrintsAsPolygraphy : public ::testing::TestWithParam<std::pair<std::string, int>> {};

TEST_P(RunPrintsAsPolygraphy, LineForLine) {
  const auto& [name, exit_code] = GetParam();
  const Fixture f = read_fixture(name);
  const CommandResult r = run_in_fixtures(f.args);
  EXPECT_EQ(r.exit_code, exit_code) << r.output;
  EXPECT_EQ(masked(r.output), masked(f.printed));
}

INSTANTIATE_TEST_SUITE_P(
    Fixtures, RunPrintsAsPolygraphy,
    ::testing::Values(
        // A runner against the results Polygraphy saved: PASSED with per-output statistics.
        std::make_pair(std::string("load_passed.txt"), 0),
        // Against results scaled by 1.01 with one element off by 0.5: FAILED, with the values,
        // the histograms of both outputs and of both differences, the required tolerance.
        std::make_pair(std::string("load_failed.txt"), 1),
        // Two runners: each loads the model after its own "Activating" line.
        std::make_pair(std::string("two_runners.txt"), 0),
        // Dynamic dimensions: the warning names the input's BoundedShape.
        std::make_pair(std::string("dynamic_input.txt"), 0),
        // Loaded float64 inputs named otherwise: renamed, cast and reshaped to the input's
        // BoundedShape, each with Polygraphy's warning; the extra key dropped.
        std::make_pair(std::string("loaded_inputs.txt"), 0),
        // Inputs that cannot fit: the buffer given up, the reload that cannot find the input.
        std::make_pair(std::string("loaded_inputs_unfit.txt"), 1)),
    [](const auto& info) { return info.param.first.substr(0, info.param.first.find('.')); });

// Saving results: the same lines, the file named where the test writes it (never into the
// source tree).
TEST(RunPrint, SavingResultsAsPolygraphy) {
  TempDir dir;
  Fixture f = read_fixture("save.txt");
  for (auto& a : f.args)
    if (a == "ref.json") a = dir.file("ref.json");
  const CommandResult r = run_in_fixtures(f.args);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const std::string expected = replace_all(f.printed, "Saving inference results to ref.json",
                                           "Saving inference results to " + dir.file("ref.json"));
  EXPECT_EQ(masked(r.output),
            masked(replace_all(expected, "ref.json --log", dir.file("ref.json") + " --log")));
}

}  // namespace
}  // namespace parity::testing
