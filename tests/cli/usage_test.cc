// Usage errors say what was wrong in Polygraphy's words, with the nearest valid choice, and
// where to find the help of the level the mistake was made at (exit status 2).
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <sstream>

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

// Each flag's --help group, from `--help` text: Polygraphy's (argparse: "Group:" headers, flags
// as "  --a A, --b B") or Parity's (CLI11: "  --a,--b TEXT"). Aliases map to the same group.
std::map<std::string, std::string> groups_of_flags(const std::string& help,
                                                   std::vector<std::string>* group_order) {
  std::map<std::string, std::string> groups;
  std::istringstream lines(help);
  std::string group;
  for (std::string line; std::getline(lines, line);) {
    if (!line.empty() && line[0] != ' ' && line.back() == ':' && line.find("usage") != 0) {
      group = line.substr(0, line.size() - 1);
      if (group == "options") group = "Options";  // argparse's name for the ungrouped flags
      if (group == "TensorRT Plugin Loading") group = "Plugin Loading";  // Parity's plugins
      group_order->push_back(group);
      continue;
    }
    if (group.empty() || line.rfind("  -", 0) != 0) continue;
    // The flags are the words before the description (two spaces apart, or the line's end).
    std::string flags = line.substr(
        2, line.find("  ", 2) == std::string::npos ? std::string::npos : line.find("  ", 2) - 2);
    std::replace(flags.begin(), flags.end(), ',', ' ');
    std::istringstream words(flags);
    for (std::string w; words >> w;)
      if (w.rfind("--", 0) == 0) groups[w] = group;
  }
  return groups;
}

// `parity run --help` groups the flags it shares with Polygraphy as `polygraphy run --help`
// does (tests/cli/fixtures/polygraphy_run_help.txt), its groups in Polygraphy's order.
TEST(CliUsage, RunHelpIsGroupedAsPolygraphysArgumentGroups) {
  std::vector<std::string> theirs_order, ours_order;
  const auto theirs = groups_of_flags(
      read_text(source_path("tests/cli/fixtures/polygraphy_run_help.txt")), &theirs_order);
  CommandResult help = run_parity({"run", "--help"});
  ASSERT_EQ(help.exit_code, 0) << help.output;
  const auto ours = groups_of_flags(help.output, &ours_order);
  ASSERT_GT(theirs.size(), 100u);  // the fixture was read
  size_t shared = 0;
  for (const auto& [flag, group] : theirs) {
    auto it = ours.find(flag);
    if (it == ours.end()) continue;
    ++shared;
    EXPECT_EQ(it->second, group) << flag;
  }
  EXPECT_GT(shared, 40u);
  // The groups both have come in the same order.
  std::vector<std::string> common;
  for (const std::string& g : theirs_order)
    if (std::find(ours_order.begin(), ours_order.end(), g) != ours_order.end() &&
        std::find(common.begin(), common.end(), g) == common.end())
      common.push_back(g);
  std::vector<std::string> ours_common;
  for (const std::string& g : ours_order)
    if (std::find(common.begin(), common.end(), g) != common.end()) ours_common.push_back(g);
  EXPECT_EQ(ours_common, common) << help.output;
  EXPECT_GE(common.size(), 13u) << help.output;
}

}  // namespace
}  // namespace parity::testing
