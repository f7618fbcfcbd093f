// check lint: ONNX's checker, runs on the reference backend, node by node when the whole model
// cannot run, and the unused inputs and nodes; Polygraphy's lines and report entries.
#include "surgeon/lint.h"

#include <gtest/gtest.h>

#include <fstream>

#include <onnx/onnx_pb.h>

#include "support/onnx_text.h"
#include "support/test_util.h"

namespace parity::testing {
namespace {

struct Linted {
  surgeon::LintReport report;
  std::string log;
};

Linted lint_text(const std::string& text) {
  TempDir dir;
  write_model_from_text(dir.file("m.onnx"), text);
  LogCapture capture(Severity::kInfo);
  Linted out{surgeon::lint_model(dir.file("m.onnx")), ""};
  out.log = capture.text();
  return out;
}

TEST(SurgeonLint, ValidModelReportsUnusedInputsAndNodesAsWarnings) {
  const Linted l = lint_text(R"(
    <ir_version: 8, opset_import: ["" : 13]>
    g (float[2, 3] A, float[2] B) => (float[2, 4] Y) <float[3, 4] W = {1,2,3,4,5,6,7,8,9,10,11,12}> {
      M = MatMul (A, W)
      Y = Relu (M)
      N = Neg (B)
    }
  )");
  EXPECT_EQ(l.report.status, 0);
  EXPECT_TRUE(l.report.valid);
  ASSERT_EQ(l.report.entries.size(), 2u);
  EXPECT_EQ(l.report.entries[0].message, "Input: 'B' does not affect outputs, can be removed.");
  EXPECT_FALSE(l.report.entries[0].node.has_value());
  EXPECT_EQ(l.report.entries[1].message, "Does not affect outputs, can be removed.");
  EXPECT_EQ(l.report.entries[1].node, "polygraphy_unnamed_node_2");
  EXPECT_EQ(surgeon::lint_source_name(l.report.entries[1].source), "onnx_graphsurgeon");
  // Polygraphy lists the nodes left after its cleanup as passing.
  EXPECT_EQ(l.report.passing,
            (std::set<std::string>{"polygraphy_unnamed_node_0", "polygraphy_unnamed_node_1"}));
  EXPECT_NE(l.log.find("LINT | Input: 'B' does not affect outputs, can be removed."),
            std::string::npos)
      << l.log;
  EXPECT_NE(l.log.find("LINT | Name: polygraphy_unnamed_node_2, Op: Neg | Does not affect "
                       "outputs, can be removed."),
            std::string::npos)
      << l.log;
}

const char* kBroken = R"(
  <ir_version: 8, opset_import: ["" : 13, "my.domain" : 1]>
  g (float[2, 3] A) => (float[2, 4] R, float[2, 3] Y) <float[5, 4] W = {1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17,18,19,20}> {
    M = MatMul (A, W)
    R = Relu (M)
    S = Add (A, A)
    Y = my.domain.MyOp (S)
  }
)";

TEST(SurgeonLint, NamesTheNodeThatCannotRunAndSkipsWhatDependsOnIt) {
  auto model = model_proto_from_text(kBroken);
  model.mutable_graph()->mutable_node(0)->set_name("MatMul_3");
  TempDir dir;
  {
    std::ofstream out(dir.file("m.onnx"), std::ios::binary);
    model.SerializeToOstream(&out);
  }
  LogCapture capture(Severity::kInfo);
  const surgeon::LintReport r = surgeon::lint_model(dir.file("m.onnx"));
  EXPECT_EQ(r.status, 1);
  EXPECT_EQ(r.failing, (std::set<std::string>{"MatMul_3"}));
  // Relu reads the failing MatMul's output: never run, neither passing nor failing.
  EXPECT_FALSE(r.passing.count("polygraphy_unnamed_node_1"));
  EXPECT_FALSE(r.failing.count("polygraphy_unnamed_node_1"));
  EXPECT_TRUE(r.passing.count("polygraphy_unnamed_node_2"));  // the Add runs
  ASSERT_GE(r.entries.size(), 2u);
  EXPECT_EQ(r.entries[0].level, surgeon::LintLevel::kException);
  EXPECT_EQ(r.entries[0].node, "MatMul_3");
  EXPECT_NE(r.entries[0].message.find("(2, 3) and (5, 4)"), std::string::npos)
      << r.entries[0].message;
  EXPECT_NE(capture.text().find("LINT | Name: MatMul_3, Op: MatMul | "), std::string::npos)
      << capture.text();
  // The custom op is a warning (its kernel is unknown), not an error.
  EXPECT_EQ(r.entries[1].level, surgeon::LintLevel::kWarning);
  EXPECT_EQ(r.entries[1].node, "polygraphy_unnamed_node_3");
  EXPECT_EQ(surgeon::lint_source_name(r.entries[1].source), "pluginref");
}

TEST(SurgeonLint, CheckerFindingsAreEntriesOfTheChecker) {
  // The graph input is declared twice: ONNX's checker refuses the graph (not a node).
  auto model = model_proto_from_text(R"(
    <ir_version: 8, opset_import: ["" : 13]>
    g (float[2] x) => (float[2] y) { y = Relu (x) }
  )");
  *model.mutable_graph()->add_input() = model.graph().input(0);
  TempDir dir;
  {
    std::ofstream out(dir.file("m.onnx"), std::ios::binary);
    model.SerializeToOstream(&out);
  }
  LogCapture capture(Severity::kInfo);
  const surgeon::LintReport r = surgeon::lint_model(dir.file("m.onnx"));
  EXPECT_EQ(r.status, 1);
  ASSERT_FALSE(r.entries.empty());
  EXPECT_EQ(surgeon::lint_source_name(r.entries[0].source), "onnx_checker");
  EXPECT_EQ(r.entries[0].level, surgeon::LintLevel::kException);
  EXPECT_NE(r.entries[0].message.find("x"), std::string::npos) << r.entries[0].message;
}

TEST(SurgeonLint, DuplicateNodeNamesAreReportedWithTheirIndices) {
  auto model = model_proto_from_text(R"(
    <ir_version: 8, opset_import: ["" : 13]>
    g (float[2] x) => (float[2] y) { a = Relu (x)  y = Neg (a) }
  )");
  model.mutable_graph()->mutable_node(0)->set_name("same");
  model.mutable_graph()->mutable_node(1)->set_name("same");
  TempDir dir;
  {
    std::ofstream out(dir.file("m.onnx"), std::ios::binary);
    model.SerializeToOstream(&out);
  }
  LogCapture capture(Severity::kInfo);
  const surgeon::LintReport r = surgeon::lint_model(dir.file("m.onnx"));
  ASSERT_FALSE(r.entries.empty());
  EXPECT_EQ(r.entries[0].message,
            "Duplicate node name: 'same' for nodes with topological IDs: [0, 1] found.");
  EXPECT_FALSE(r.valid);
}

TEST(SurgeonLint, AFileThatIsNoModelIsALoaderEntry) {
  TempDir dir;
  write_text(dir.file("m.onnx"), "this is not a protobuf \xff\xff\xff");
  LogCapture capture(Severity::kInfo);
  const surgeon::LintReport r = surgeon::lint_model(dir.file("m.onnx"));
  EXPECT_EQ(r.status, 1);
  ASSERT_EQ(r.entries.size(), 1u);
  EXPECT_EQ(surgeon::lint_source_name(r.entries[0].source), "onnx_loader");
  EXPECT_EQ(r.closing_error,
            "Invalid ONNX model given: Error parsing message with type 'onnx.ModelProto'");
  EXPECT_EQ(read_text(dir.file("m.onnx")), "this is not a protobuf \xff\xff\xff");
}

TEST(SurgeonLint, AModelWithoutNodesIsAWarning) {
  const Linted l = lint_text(R"(
    <ir_version: 8, opset_import: ["" : 13]>
    g (float[2] x) => (float[2] x) {}
  )");
  EXPECT_EQ(l.report.status, 0);
  ASSERT_EQ(l.report.entries.size(), 1u);
  EXPECT_EQ(l.report.entries[0].message, "ONNX model has no nodes");
}

TEST(SurgeonLint, NodeByNodeRunsAnIfWhoseBranchesReadOuterValues) {
  // The MatMul fails, so the model is linted node by node; the If reads `a` from inside its
  // branches, which the one-node model must be given.
  const Linted l = lint_text(R"(
    <ir_version: 8, opset_import: ["" : 13]>
    g (float[2, 3] A, bool c) => (float[2, 4] M, float[2, 3] y) <float[5, 4] W = {1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17,18,19,20}> {
      M = MatMul (A, W)
      a = Relu (A)
      y = If (c) <
        then_branch = t () => (float[2, 3] o) { o = Neg (a) },
        else_branch = e () => (float[2, 3] o) { o = Abs (a) }>
    }
  )");
  EXPECT_EQ(l.report.status, 1);
  EXPECT_EQ(l.report.failing, (std::set<std::string>{"polygraphy_unnamed_node_0"}));
  EXPECT_TRUE(l.report.passing.count("polygraphy_unnamed_node_2")) << l.log;
}

}  // namespace
}  // namespace parity::testing
