// Topological sorting: stable order, exact cycle reports, dangling inputs, duplicate producers.
#include <gtest/gtest.h>

#include "core/error.h"
#include "onnx/graph.h"
#include "support/onnx_text.h"

namespace parity::testing {
namespace {

std::string error_of(const std::string& text) {
  try {
    model_from_text(text);
  } catch (const Error& e) {
    return e.what();
  }
  return "(no error)";
}

std::vector<std::string> node_names(const ir::Graph& g) {
  std::vector<std::string> names;
  for (const auto& n : g.nodes) names.push_back(n.name);
  return names;
}

TEST(Toposort, SortsOutOfOrderNodesAndKeepsFileOrderForTies) {
  auto model = model_from_text(R"(
    <ir_version: 8, opset_import: ["" : 17]>
    g (float[2] x) => (float[2] out) {
      out = Add (c, d)
      c = Neg (a)
      a = Relu (x)
      d = Abs (b)
      b = Exp (x)
    }
  )");
  // Each step takes the ready node that comes first in the file: Relu (2) before Exp (4);
  // then Neg (1), freed by Relu, comes before Exp.
  EXPECT_EQ(node_names(model->graph),
            (std::vector<std::string>{"Relu_2", "Neg_1", "Exp_4", "Abs_3", "Add_0"}));

  // An already sorted graph keeps its order exactly.
  auto sorted = model_from_text(R"(
    <ir_version: 8, opset_import: ["" : 17]>
    g (float[2] x) => (float[2] y) {
      p = Exp (x)
      q = Relu (x)
      r = Neg (q)
      y = Add (p, r)
    }
  )");
  EXPECT_EQ(node_names(sorted->graph),
            (std::vector<std::string>{"Exp_0", "Relu_1", "Neg_2", "Add_3"}));
}

TEST(Toposort, CycleMessageNamesOnlyTheNodesOnTheCycle) {
  // b -> c -> d -> b is the cycle; e only consumes it and a only feeds it.
  std::string message = error_of(R"(
    <ir_version: 8, opset_import: ["" : 17]>
    g (float[2] x) => (float[2] e_out) {
      a_out = Relu (x)
      e_out = Abs (d_out)
      b_out = Add (a_out, d_out)
      c_out = Neg (b_out)
      d_out = Exp (c_out)
    }
  )");
  EXPECT_EQ(message,
            "failed to sort the nodes of graph 'g': the graph has a cycle 'Add_2' -> 'Neg_3' -> "
            "'Exp_4' -> 'Add_2'; an ONNX graph must be acyclic");

  EXPECT_EQ(error_of(R"(
    <ir_version: 8, opset_import: ["" : 17]>
    g (float[2] x) => (float[2] y) { y = Add (x, y) }
  )"),
            "failed to sort the nodes of graph 'g': the graph has a cycle 'Add_0' -> 'Add_0'; an "
            "ONNX graph must be acyclic");
}

TEST(Toposort, DanglingInputNamesNodeAndTensor) {
  EXPECT_EQ(error_of(R"(
    <ir_version: 8, opset_import: ["" : 17]>
    g (float[2] x) => (float[2] y) { y = Add (x, ghost) }
  )"),
            "failed to load node 'Add_0' (Add) with input 'ghost': no node, graph input or "
            "initializer produces that tensor");
  EXPECT_EQ(error_of(R"(
    <ir_version: 8, opset_import: ["" : 17]>
    g (float[2] x) => (float[2] nowhere) { y = Neg (x) }
  )"),
            "failed to load output 'nowhere' of graph 'g': no node, graph input or initializer "
            "produces that tensor");
}

TEST(Toposort, DuplicateProducersAreRefused) {
  EXPECT_EQ(error_of(R"(
    <ir_version: 8, opset_import: ["" : 17]>
    g (float[2] x) => (float[2] y) { y = Neg (x)  y = Abs (x) }
  )"),
            "failed to load node 'Abs_1' (Abs) with output 'y': node 'Neg_0' already produces "
            "that tensor; every tensor of an ONNX graph has exactly one producer");
}

TEST(Toposort, SubgraphReadsOrderTheOuterGraph) {
  // The If's branch reads `t`, produced later in the file: the If must come after it.
  auto model = model_from_text(R"(
    <ir_version: 8, opset_import: ["" : 17]>
    g (bool c, float[2] x) => (float[2] y) {
      y = If (c) <then_branch = a () => (float[2] o1) { o1 = Neg (t) },
                  else_branch = b () => (float[2] o2) { o2 = Abs (x) }>
      t = Exp (x)
    }
  )");
  EXPECT_EQ(node_names(model->graph), (std::vector<std::string>{"Exp_1", "If_0"}));
  EXPECT_EQ(error_of(R"(
    <ir_version: 8, opset_import: ["" : 17]>
    g (bool c, float[2] x) => (float[2] y) {
      y = If (c) <then_branch = a () => (float[2] o1) { o1 = Neg (ghost) },
                  else_branch = b () => (float[2] o2) { o2 = Abs (x) }>
    }
  )"),
            "failed to load node 'If_0' (If) with input 'ghost': no node, graph input or "
            "initializer produces that tensor");
}

}  // namespace
}  // namespace parity::testing
