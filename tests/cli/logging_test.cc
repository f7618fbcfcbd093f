// Polygraphy's logging flags: --log-format timestamp line-info and per-path --verbosity.
#include <gtest/gtest.h>

#include <regex>
#include <sstream>

#include "support/test_util.h"

namespace parity::testing {
namespace {

bool has(const CommandResult& r, const std::string& s) {
  return r.output.find(s) != std::string::npos;
}

TEST(CliLogging, TimestampAndLineInfoPrefixEveryLine) {
  CommandResult r = run_parity({"run", source_path("examples/identity.onnx"), "--pluginref",
                                "--log-format", "timestamp", "line-info"});
  ASSERT_EQ(r.exit_code, 0) << r.output;
  std::istringstream lines(r.output);
  std::string line;
  const std::regex prefix(R"(^\[[IWEV!]\] \(\d\d:\d\d:\d\d\) \[[a-z_/]+\.cc:\d+\] .*)");
  int prefixed = 0;
  while (std::getline(lines, line)) {
    if (line.empty() || line[0] != '[') continue;  // continuation lines
    EXPECT_TRUE(std::regex_match(line, prefix)) << line;
    ++prefixed;
  }
  EXPECT_GE(prefixed, 4) << r.output;
  EXPECT_TRUE(std::regex_search(r.output, std::regex(R"(\[onnx/loaders\.cc:\d+\] Loading model)")))
      << r.output;
}

TEST(CliLogging, VerbosityPerPathOfTheSources) {
  CommandResult r = run_parity({"run", source_path("examples/identity.onnx"), "--pluginref",
                                "--verbosity", "WARNING", "comparator:VERBOSE"});
  ASSERT_EQ(r.exit_code, 0) << r.output;
  // The data loader (comparator/data_loader.cc) speaks at VERBOSE; the CLI's own lines
  // (cli/app.cc, INFO and FINISH) are below the default WARNING.
  EXPECT_TRUE(has(r, "[V] Input tensor: x | Generating input data in range")) << r.output;
  EXPECT_FALSE(has(r, "RUNNING")) << r.output;
  EXPECT_FALSE(has(r, "Loading model")) << r.output;
  CommandResult bad = run_parity(
      {"run", source_path("examples/identity.onnx"), "--pluginref", "--verbosity", "backend:LOUD"});
  EXPECT_EQ(bad.exit_code, 2) << bad.output;
  EXPECT_TRUE(has(bad,
                  "failed to parse --verbosity with value 'backend:LOUD': unknown severity "
                  "'LOUD'"))
      << bad.output;
}

}  // namespace
}  // namespace parity::testing
