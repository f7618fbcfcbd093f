// `parity inspect model` prints what Polygraphy 0.49 printed for the same model and flags, byte
// for byte (tests/cli/fixtures/inspect_model/: the models, make_models.py that wrote them, and
// make_fixtures.sh that ran Polygraphy). Only the repository's path is masked ({ROOT}), since
// Polygraphy prints the model's absolute path.
#include <gtest/gtest.h>

#include <filesystem>
#include <sstream>

#include "cli/polygraphy_fixture.h"
#include "support/test_util.h"

namespace parity::testing {
namespace {

const std::string kDir = "tests/cli/fixtures/inspect_model/";

using Fixture = PolygraphyFixture;
Fixture read_fixture(const std::string& name) { return read_polygraphy_fixture(kDir, name); }

CommandResult run_like(const Fixture& f) { return run_parity_in(kDir, f.args); }

class InspectModelPrintsAsPolygraphy : public ::testing::TestWithParam<std::string> {};

TEST_P(InspectModelPrintsAsPolygraphy, ByteForByte) {
  const Fixture f = read_fixture(GetParam());
  const CommandResult r = run_like(f);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_EQ(r.output, f.printed);
}

INSTANTIATE_TEST_SUITE_P(
    Fixtures, InspectModelPrintsAsPolygraphy,
    ::testing::Values(
        // The shipped models: the summary, --show layers, and everything.
        "tiny_cnn_default.txt", "tiny_cnn_layers.txt", "tiny_cnn_all.txt", "identity_all.txt",
        // Every attribute type (one Polygraphy skips, with its warning), unnamed nodes, a
        // repeated and an absent input, bool/string/float16/int8 weights, NumPy's '...' for an
        // array past 1000 elements, Python's float repr, a graph doc string, --show variants.
        "attrs_and_types_all.txt", "attrs_and_types_layers_attrs.txt",
        "attrs_and_types_layers_weights.txt", "attrs_and_types_weights.txt",
        "attrs_and_types_attrs.txt",
        // If and Loop bodies: subgraphs indented under their attribute, outer tensors seen.
        "control_flow_all.txt", "control_flow_layers.txt",
        // Weights in an external data file; a sparse initializer and an "ai.onnx" opset.
        "external_all.txt", "sparse_all.txt"),
    [](const ::testing::TestParamInfo<std::string>& info) {
      return info.param.substr(0, info.param.find('.'));
    });

// With --ignore-external-data the weights are not read: Polygraphy's error, once, and its
// placeholder for each. Its note quotes the Python exception that it met ("[Errno 2] No such
// file..."), which is the one line compared only by its beginning.
TEST(InspectModelPrint, IgnoredExternalDataAsPolygraphyPrintsUnreadableWeights) {
  const Fixture f = read_fixture("external_ignored.txt");
  const CommandResult r = run_like(f);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  auto mask_note = [](const std::string& text) {
    std::istringstream lines(text);
    std::string out;
    for (std::string line; std::getline(lines, line);)
      out +=
          (line.rfind("    Note: Error was: ", 0) == 0 ? "    Note: Error was: ..." : line) + "\n";
    return out;
  };
  EXPECT_EQ(mask_note(r.output), mask_note(f.printed));
  EXPECT_NE(r.output.find("Note: Error was: the model was loaded with --ignore-external-data"),
            std::string::npos)
      << r.output;
}

}  // namespace
}  // namespace parity::testing
