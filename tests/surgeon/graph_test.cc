// The graph over the protobuf: consumers seen through subgraph bodies, cleanup, toposort.
#include "surgeon/graph.h"

#include <gtest/gtest.h>

#include "surgeon_test_util.h"

namespace parity::testing {
namespace {

// r is read only from inside the If's branches.
const char* kIfModel = R"(
  <ir_version: 8, opset_import: ["" : 17]>
  g (float[2] x, bool c) => (float[2] y) {
    r = Relu (x)
    unused = Neg (x)
    y = If (c) <
      then_branch = t () => (float[2] o) { o = Identity (r) },
      else_branch = e () => (float[2] o2) { o2 = Abs (r) }
    >
  }
)";

TEST(SurgeonGraph, BodiesReadOuterValuesThroughTheirNode) {
  auto model = named_model(kIfModel);
  const surgeon::GraphIndex index(model.graph());
  // The If reads c directly and r from inside both branches.
  EXPECT_EQ(index.reads(2), (std::vector<std::string>{"c", "r"}));
  EXPECT_EQ(index.consumers("r"), (std::vector<int>{2}));
  EXPECT_EQ(index.producer("r"), 0);
  EXPECT_FALSE(index.producer("x").has_value());
  EXPECT_TRUE(index.is_graph_input("x"));
}

TEST(SurgeonGraph, CleanupRemovesWhatReachesNoOutputButKeepsBodyReads) {
  auto model = named_model(kIfModel);
  EXPECT_EQ(surgeon::cleanup(*model.mutable_graph()), 1u);
  // Relu stays: the If's branches read its output.
  EXPECT_EQ(node_names(model), (std::vector<std::string>{"Relu_0", "If_2"}));
  EXPECT_EQ(model.graph().input_size(), 2);  // inputs are kept unless asked
}

TEST(SurgeonGraph, CleanupRemovesUnusedInitializersAndInputsWhenAsked) {
  auto model = named_model(R"(
    <ir_version: 8, opset_import: ["" : 17]>
    g (float[2] x, float[2] z) => (float[2] y) <float[2] w = {1, 2}, float[2] v = {3, 4}> {
      y = Add (x, w)
      dead = Mul (z, v)
    }
  )");
  surgeon::cleanup(*model.mutable_graph(), {.remove_unused_graph_inputs = true});
  ASSERT_EQ(model.graph().initializer_size(), 1);
  EXPECT_EQ(model.graph().initializer(0).name(), "w");
  ASSERT_EQ(model.graph().input_size(), 1);
  EXPECT_EQ(model.graph().input(0).name(), "x");
  EXPECT_EQ(node_names(model), (std::vector<std::string>{"Add_0"}));
}

TEST(SurgeonGraph, ToposortIsStableAndNamesTheCycle) {
  auto model = named_model(R"(
    <ir_version: 8, opset_import: ["" : 17]>
    g (float[2] x) => (float[2] out) {
      out = Add (c, d)
      c = Neg (a)
      a = Relu (x)
      d = Abs (x)
    }
  )");
  surgeon::toposort(*model.mutable_graph());
  EXPECT_EQ(node_names(model), (std::vector<std::string>{"Relu_2", "Neg_1", "Abs_3", "Add_0"}));
  surgeon::toposort(*model.mutable_graph());  // a sorted graph stays as it is
  EXPECT_EQ(node_names(model), (std::vector<std::string>{"Relu_2", "Neg_1", "Abs_3", "Add_0"}));

  auto cyclic = named_model(R"(
    <ir_version: 8, opset_import: ["" : 17]>
    g (float[2] x) => (float[2] e) {
      a = Relu (x)
      b = Add (a, d)
      c = Neg (b)
      d = Abs (c)
      e = Exp (d)
    }
  )");
  const std::string message = error_of([&] { surgeon::toposort(*cyclic.mutable_graph()); });
  EXPECT_NE(message.find("'Add_1' (Add) -> 'Neg_2' (Neg) -> 'Abs_3' (Abs)"), std::string::npos)
      << message;
  EXPECT_EQ(message.find("Exp_4"), std::string::npos) << message;  // only the cycle is named
  EXPECT_EQ(node_names(cyclic)[0], "Relu_0");                      // the graph is unchanged
}

TEST(SurgeonGraph, ConstantsAreInitializersAndConstantOutputsNotOverridableInputs) {
  auto model = named_model(R"(
    <ir_version: 8, opset_import: ["" : 17]>
    g (float[2] x, float[2] d) => (float[2] y) <float[2] w = {1, 2}, float[2] d = {0, 0}> {
      k = Constant <value = float[2] {5, 6}> ()
      s = Add (x, w)
      t = Add (s, k)
      y = Add (t, d)
    }
  )");
  EXPECT_EQ(surgeon::constant_tensors(model.graph()), (std::set<std::string>{"k", "w"}));
}

}  // namespace
}  // namespace parity::testing
