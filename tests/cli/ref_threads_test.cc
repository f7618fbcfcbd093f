// `parity run --ref-threads N` and the reference backend's default thread count under
// `taskset` (the process's affinity mask).
#include <gtest/gtest.h>

#include "support/test_util.h"

namespace parity::testing {
namespace {

std::string tiny_cnn() { return source_path("examples/tiny_cnn.onnx"); }

TEST(CliRefThreads, DefaultFollowsTheAffinityMask) {
  CommandResult r = run_command(std::string("taskset -c 0 ") + PARITY_CLI + " run " + tiny_cnn() +
                                " --pluginref -v 2>&1");
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("Reference backend: 1 thread(s)"), std::string::npos) << r.output;
}

TEST(CliRefThreads, FlagSetsTheCount) {
  auto r = run_parity({"run", tiny_cnn(), "--pluginref", "--ref-threads", "3", "-v"});
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("Reference backend: 3 thread(s)"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("PASSED | Runtime:"), std::string::npos) << r.output;
}

TEST(CliRefThreads, NegativeCountIsAUsageError) {
  auto r = run_parity({"run", tiny_cnn(), "--pluginref", "--ref-threads", "-1"});
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("--ref-threads"), std::string::npos) << r.output;
}

}  // namespace
}  // namespace parity::testing
