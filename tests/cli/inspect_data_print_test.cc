// `parity inspect data -s` prints arrays as NumPy does under Polygraphy's print options:
// -n/--num-items (edge items of a summarised axis, -1 for all) and --line-width (-1: no
// wrapping). The expected text is what Polygraphy 0.49 printed for the same inputs file
// (tests/cli/fixtures/inspect_data/, command in each file's first line).
#include <gtest/gtest.h>

#include "support/test_util.h"

namespace parity::testing {
namespace {

// A fixture without its two comment lines.
std::string polygraphy_printed(const std::string& name) {
  std::string text = read_text(source_path("tests/cli/fixtures/inspect_data/" + name));
  for (int i = 0; i < 2; ++i) text = text.substr(text.find('\n') + 1);
  return text;
}

TEST(CliInspectData, ArraysPrintAsPolygraphyPrintsThemWithItsPrintOptions) {
  TempDir dir;
  const std::string inputs = dir.file("inputs.json");
  ASSERT_EQ(run_parity({"run", source_path("examples/tiny_cnn.onnx"), "--pluginref",
                        "--save-inputs", inputs})
                .exit_code,
            0);
  const std::vector<std::pair<std::string, std::vector<std::string>>> cases = {
      {"n1_w40.txt", {"-n", "1", "--line-width", "40"}},
      // Every element: NumPy switches to scientific notation, and float32 digits past the
      // shortest ones are the value's own (4.17021990e-01).
      {"all.txt", {"-n", "-1", "--line-width", "-1"}},
      {"n2.txt", {"--num-items", "2"}},
  };
  for (const auto& [fixture, flags] : cases) {
    std::vector<std::string> args = {"inspect", "data", inputs, "-s", "--log-format", "no-colors"};
    args.insert(args.end(), flags.begin(), flags.end());
    const CommandResult r = run_parity(args);
    ASSERT_EQ(r.exit_code, 0) << r.output;
    EXPECT_EQ(r.output, polygraphy_printed(fixture)) << fixture;
  }
}

TEST(CliInspectData, PrintOptionsOutOfRangeAreUsageErrors) {
  TempDir dir;
  const std::string inputs = dir.file("inputs.json");
  ASSERT_EQ(run_parity({"run", source_path("examples/tiny_cnn.onnx"), "--pluginref",
                        "--save-inputs", inputs})
                .exit_code,
            0);
  for (const std::vector<std::string>& flags :
       {std::vector<std::string>{"-n", "-2"}, {"--line-width", "-5"}, {"-n", "three"}}) {
    std::vector<std::string> args = {"inspect", "data", inputs, "-s"};
    args.insert(args.end(), flags.begin(), flags.end());
    const CommandResult r = run_parity(args);
    EXPECT_EQ(r.exit_code, 2) << r.output;
  }
}

}  // namespace
}  // namespace parity::testing
